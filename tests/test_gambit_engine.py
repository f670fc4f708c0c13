"""The engine driver against scripted UCI engines (``tests/fake_uci.py``), as real processes.

Each test waits only as long as its event: the fakes answer at once, and a
silent one meets a limit of a fraction of a second. One test runs the fake
in the real sandbox (skipped where bubblewrap does not work here, or needs a
user namespace that only a command's ``main`` can enter).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import chess
from twisted.internet import reactor
from twisted.internet.defer import CancelledError, ensureDeferred
from twisted.trial.unittest import SkipTest, SynchronousTestCase, TestCase

from tests.processes import ENVIRONMENT, PYTHON, Child, freePort, python, twistd
from tests.test_sandbox_hostile import velhanetLeftovers
from velhanet.gambit.client import parseArguments
from velhanet.gambit.engine import Engine, EngineFailure
from velhanet.sandbox import Sandbox, SandboxSettings
from velhanet.sandbox.availability import probeBubblewrap

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fake_uci.py"
OFF = Sandbox(SandboxSettings(mode="off"), probeBubblewrap())


class EngineTests(TestCase):
    timeout = 30

    def command(self, mode: str, logged: bool = True) -> list[str]:
        """The fake in ``mode``; ``logged``: it writes what it reads to ``self.log`` (not in the sandbox)."""
        self.log = Path(self.mktemp()).resolve()
        return [sys.executable, str(FAKE), mode, *([str(self.log)] if logged else [])]

    def said(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    async def started(self, mode: str, sandbox: Sandbox = OFF, **options: object) -> Engine:
        command = self.command(mode, logged=sandbox is OFF)
        engine = await Engine.start(reactor, sandbox, command, margin=0.5, **options)  # type: ignore[arg-type]
        self.addCleanup(engine.quit)
        return engine

    async def failure(self, mode: str, board: chess.Board | None = None) -> tuple[Engine, str]:
        engine = await self.started(mode)
        try:
            await engine.play(board or chess.Board(), 0.05)
        except EngineFailure as failure:
            await engine.quit()
            return engine, str(failure)
        raise AssertionError("the engine's failure was not seen")

    def test_normalPlaysLegalMovesAndQuits(self) -> Any:
        async def check() -> None:
            engine = await self.started("normal", skill=3)
            board = chess.Board()
            for _ in range(4):
                move = await engine.play(board, 0.05)
                self.assertIn(move, board.legal_moves)
                board.push(move)
            await engine.quit()
            assert engine.program is not None
            self.assertEqual(engine.program.status, 0)
            said = self.said()
            self.assertEqual(said[0], "uci")
            self.assertIn("setoption name Skill Level value 3", said)
            self.assertIn("go movetime 50", said)
            self.assertEqual(said[-1], "quit")
            self.assertEqual(engine.notes, [])

        return ensureDeferred(check())

    def test_aMissingSkillOptionIsSaid(self) -> Any:
        async def check() -> None:
            engine = await self.started("plain", skill=3)
            note = f"the engine {Path(sys.executable).name} has no 'Skill Level' option: --skill 3 is ignored"
            self.assertEqual(engine.notes, [note])
            self.assertNotIn("setoption name Skill Level value 3", self.said())

        return ensureDeferred(check())

    def test_slowIsStoppedAfterItsLimit(self) -> Any:
        async def check() -> None:
            engine, text = await self.failure("slow")
            self.assertEqual(text, f"the engine {engine.name} did not answer within 0.55 s")
            assert engine.program is not None and engine.program.verdict is not None
            self.assertTrue(engine.program.killed)
            with self.assertRaises(EngineFailure):  # it answers nothing more
                await engine.play(chess.Board(), 0.05)

        return ensureDeferred(check())

    def test_dyingAtItsFirstMoveIsACrash(self) -> Any:
        async def check() -> None:
            engine, text = await self.failure("dying")
            self.assertEqual(text, f"the engine {engine.name} crashed (exit 3)")

        return ensureDeferred(check())

    def test_garbageAndAnIllegalMove(self) -> Any:
        async def check() -> None:
            engine, text = await self.failure("garbage")
            self.assertTrue(text.startswith(f"the engine {engine.name} answered nonsense ("), text)
            self.assertIn("e2e5", text)
            self.assertNotIn("\n", text)

        return ensureDeferred(check())

    def test_anEndlessLineIsNonsense(self) -> Any:
        async def check() -> None:
            engine, text = await self.failure("flood")
            self.assertEqual(text, f"the engine {engine.name} printed a line longer than 65536 bytes")

        return ensureDeferred(check())

    def test_deadBeforeUciokCannotStart(self) -> Any:
        async def check() -> None:
            with self.assertRaises(EngineFailure) as caught:
                await Engine.start(reactor, OFF, self.command("dead"))
            self.assertEqual(str(caught.exception), f"cannot start the engine {sys.executable}: it crashed (exit 3)")

        return ensureDeferred(check())

    def test_silentAtTheStartCannotStart(self) -> Any:
        async def check() -> None:
            silent = [sys.executable, "-c", "import time; time.sleep(60)"]
            with self.assertRaises(EngineFailure) as caught:
                await Engine.start(reactor, OFF, silent, startTimeout=0.3)
            said = f"cannot start the engine {sys.executable}: it did not answer within 0.3 s"
            self.assertEqual(str(caught.exception), said)

        return ensureDeferred(check())

    def test_missingOrNotExecutable(self) -> Any:
        async def check() -> None:
            for path, problem in (
                ("/nonexistent/stockfish", "no such file"),
                (str(FAKE.parent / "__init__.py"), "not an executable file"),
                ("no-such-engine-here", "no such command on PATH"),
            ):
                with self.assertRaises(EngineFailure) as caught:
                    await Engine.start(reactor, OFF, [path])
                self.assertEqual(str(caught.exception), f"cannot start the engine {path}: {problem}")

        return ensureDeferred(check())

    def test_aRelativePathInAFolder(self) -> Any:
        async def check() -> None:
            engine = fakeEngine(self, "normal", python=sys.executable)
            relative = os.path.relpath(engine, Path.cwd())
            self.assertIn(os.sep, relative)
            started = await Engine.start(reactor, OFF, [relative])
            self.addCleanup(started.quit)
            self.assertIn(await started.play(chess.Board(), 0.05), chess.Board().legal_moves)

        return ensureDeferred(check())

    def test_aQuestionPendingWhenItQuitsIsCancelledNotAFailure(self) -> Any:
        """^C while it thinks: the engine stops because we asked, so the bot has no crash to resign for
        (the client then ends with status 0)."""

        async def check() -> None:
            engine = await self.started("slow")
            # The loop stays up after the quit, as it may when the machine is busy: the pending question
            # then sees the engine's end before the loop's, which once read as "crashed" and exit 1.
            self.addCleanup(engine.loop.loop.call_soon_threadsafe, engine.loop.loop.stop)
            self.patch(engine.loop, "stop", lambda: None)
            thinking = engine.play(chess.Board(), 20)
            await engine.quit()
            with self.assertRaises(CancelledError):
                await thinking
            self.assertIsNone(engine.failure)

        return ensureDeferred(check())

    def test_deafIsKilledAfterItsGrace(self) -> Any:
        async def check() -> None:
            engine = await self.started("deaf")
            await engine.quit(grace=0.3)
            assert engine.program is not None
            self.assertTrue(engine.program.killed)

        return ensureDeferred(check())

    def test_inTheSandbox(self) -> Any:
        """The engine in the real sandbox, in this process: as root, as CI runs (``.ci/run`` installs bubblewrap).

        An ordinary user's sandbox needs a user namespace entered in a command's ``main`` before any thread
        starts, which a trial process cannot do: for that user the whole client runs it
        (``ClientWithAnEngineTests.test_anEngineInTheSandboxPlaysAWholeGame``).
        """
        self.assertTrue(probeBubblewrap().works, "bubblewrap does not work here: .ci/run installs it")
        if os.geteuid() != 0:
            raise SkipTest("not root: ClientWithAnEngineTests runs the sandboxed engine through gambit-client's main")

        async def check() -> None:
            engine = await self.started("normal", sandbox=Sandbox(SandboxSettings(mode="on"), probeBubblewrap()))
            move = await engine.play(chess.Board(), 0.05)
            self.assertIn(move, chess.Board().legal_moves)
            await engine.quit()
            assert engine.program is not None and engine.program.verdict is not None
            self.assertEqual(engine.program.verdict.status, 0)
            self.assertEqual(engine.program.verdict.enforcement.startswith("no sandbox"), False)

        return ensureDeferred(check())


def fakeEngine(testCase: SynchronousTestCase, mode: str, python: str = "python3") -> Path:
    """An engine program as a user has one: an executable in a folder of its own (copied into its sandbox)."""
    folder = Path(testCase.mktemp()).resolve()
    folder.mkdir()
    shutil.copy(FAKE, folder / "fake_uci.py")
    engine = folder / "engine"
    engine.write_text(f'#!/bin/sh\nexec {python} "$(dirname "$0")/fake_uci.py" {mode}\n')
    engine.chmod(0o755)
    return engine


class ClientWithAnEngineTests(SynchronousTestCase):
    """``gambit-client --engine`` as a user runs it, against ``twistd -n gambit-server``."""

    def client(self, *arguments: str) -> Child:
        path = f"{Path(PYTHON).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"  # python3: the one with chess
        command = python("-c", "from velhanet.gambit.client import main; main()", *arguments)
        return Child(self, command, environment={**ENVIRONMENT, "PATH": path}, interruptible=True)

    def server(self) -> int:
        port = freePort()
        Child(self, twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1")).waitForPort(port)
        return port

    def test_aMissingEngineIsOneLineAndExitStatus1(self) -> None:
        client = self.client("--engine", "/nonexistent", "--port", "1")
        self.assertEqual(client.wait(30), 1)
        assert client.process.stdout is not None
        self.assertEqual(
            client.process.stdout.read(), "gambit-client: cannot start the engine /nonexistent: no such file\n"
        )

    def play(self, mode: str, *options: str) -> tuple[Child, Child, Path]:
        port = self.server()
        engine = fakeEngine(self, mode)
        white = self.client("--user", "alice", "--port", str(port), "--engine", str(engine), *options)
        first = white.readLine()
        while first.startswith("gambit-client: warning:"):  # --sandbox auto where bubblewrap does not work
            first = white.readLine()
        self.assertRegex(first, r"^Game [0-9a-f]{4} created")
        black = self.client("--user", "bob", "--port", str(port), "--game", first.split()[1], "--bot")
        return white, black, engine

    def test_anEngineThatDiesResigns(self) -> None:
        white, black, engine = self.play("dying", "--sandbox", "off", "--bot-delay", "0")
        self.assertEqual(white.wait(60), 1)
        self.assertEqual(black.wait(60), 0)
        assert white.process.stdout is not None and black.process.stdout is not None
        said = white.process.stdout.read()
        self.assertIn("the engine engine crashed (exit 3): resigning\nYou resigned.\n", said)
        self.assertNotIn("Traceback", said)
        self.assertIn("GAME OVER: alice resigns: bob wins", black.process.stdout.read())

    def test_anEngineInTheSandboxPlaysAWholeGame(self) -> None:
        white, black, engine = self.play("normal", "--bot-delay", "0", "--movetime", "10")
        self.assertEqual(white.wait(120), 0)
        self.assertEqual(black.wait(60), 0)
        assert white.process.stdout is not None
        said = white.process.stdout.read()
        self.assertIn("GAME OVER:", said)
        self.assertNotIn("resigning", said)
        self.assertEqual(velhanetLeftovers(str(engine.parent)), [])  # the engine ended with the client

    def test_interruptedWhileTheEngineThinksStopsIt(self) -> None:
        white, black, engine = self.play("slow", "--movetime", "20000", "--bot-delay", "0")
        line = white.readLine()
        while "joined your game" not in line:
            self.assertNotEqual(line, "", "the client ended before the game began")
            line = white.readLine()
        white.process.send_signal(signal.SIGINT)
        status = white.wait(30)
        assert white.process.stdout is not None
        self.assertEqual(status, 0, line + white.process.stdout.read())
        self.assertEqual(velhanetLeftovers(str(engine.parent)), [])


class EngineOptionsTests(SynchronousTestCase):
    def test_engineImpliesBotAndItsOptionsNeedIt(self) -> None:
        arguments = parseArguments(["--user", "dave", "--engine", "stockfish", "--skill", "0"])
        self.assertEqual((arguments.bot, arguments.skill, arguments.movetime), (True, 0, 100))
        self.assertEqual(arguments.sandboxSettings.mode, "auto")
        arguments = parseArguments(["--user", "dave", "--engine", "stockfish", "--movetime", "500", "--sandbox", "off"])
        self.assertEqual((arguments.skill, arguments.movetime, arguments.sandboxSettings.mode), (None, 500, "off"))
        self.assertFalse(parseArguments(["--user", "dave"]).bot)
        for wrong in (
            ["--skill", "3"],
            ["--movetime", "50"],
            ["--engine", "x", "--skill", "21"],
            ["--engine", "x", "--movetime", "0"],
        ):
            with self.assertRaises(SystemExit):
                parseArguments(["--user", "dave", *wrong])
