"""Gobang FIFO server conformance: signon and size, request order, illegal moves, five in a row,
draws, kibitz, signoff and FIFO names.

The target is a running server, given by its pid and FIFO directory. The
clients are scripted agent processes (``agent``), since the server
tells clients apart by pid. Rules: ``gobang-fifo.de.txt`` and
``docs/gobang.md``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from velhanet.checks import exchange
from velhanet.checks.base import ConformanceCase, Target, rule
from velhanet.gobang.fifo import isAlive
from velhanet.i18n import _, current
from velhanet.sandbox.blocking import BlockingProgram
from velhanet.sandbox.sandbox import Sandbox

Words = list[tuple[int, int, int]]

AGENT_TIMEOUT = 20.0
"""Seconds an agent waits for the server's next word before it gives up (exit status 12)."""

SIGNON_PAUSE = 0.3
"""Seconds black's signon has to be answered before white signs on (the two then join one game)."""

KILL_WAIT = 10.0
"""Seconds the server has to remove its FIFO after Kill."""


def wordsOf(output: str) -> Words:
    """The words an agent printed (``op x y`` lines), in order."""
    words = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            words.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return words


class Agent:
    """One scripted client (``agent``), a process of its own started with the sandbox off: velhanet's own."""

    def __init__(
        self,
        directory: str,
        serverPid: int,
        opcode: int,
        *script: str,
        cwd: str | None = None,
        byteOrderName: str = "native",
        delay: float = 0.0,
        prefix: Sequence[str] = (),
        timeout: float = AGENT_TIMEOUT,
    ) -> None:
        """``prefix``: how to start it beside a sandboxed server (in its PID namespace, ``nsenter …``)."""
        self.channel = exchange.newChannel(f"fifo {['signoff', 'black', 'white', 'kibitz'][opcode % 4]}")
        self._printed = b""
        self._ended = False
        self._changed = threading.Condition()
        agent = [sys.executable, "-m", "velhanet.checks.gobang.agent", directory, str(serverPid), str(opcode)]
        self.program = BlockingProgram(
            Sandbox.off(),
            [*prefix, *agent, *script],
            cwd=Path(cwd) if cwd else None,
            environment=dict(
                os.environ,
                GOBANG_BYTE_ORDER=byteOrderName,
                GOBANG_AGENT_TIMEOUT=str(timeout),
                GOBANG_AGENT_DELAY=str(delay),
                LANGUAGE=current().code,  # what it prints for a person (it cannot reach the server) in ours
            ),
            reader=self._read,
        )

    def _read(self, chunk: bytes) -> None:
        """What it printed, as it comes (the output thread); an empty chunk: it closed its output."""
        with self._changed:
            self._printed += chunk
            self._ended = self._ended or not chunk
            self._changed.notify_all()

    @property
    def seen(self) -> str:
        """What it printed so far."""
        with self._changed:
            return self._printed.decode(errors="replace")

    def stop(self) -> None:
        self.program.stop()

    def waitFor(self, done: Callable[[Words], bool], timeout: float) -> None:
        """Return once the words it printed so far are ``done``, it has ended, or after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done(wordsOf(self._printed.decode(errors="replace"))) and not self._ended:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._changed.wait(remaining)

    def finish(self, timeout: float = 30) -> tuple[int | None, Words, str]:
        verdict = self.program.stop(grace=timeout)
        if self.program.stoppedByVelhanet:
            stopped = _("waited {timeout:g} s for the client to end: stopped it").format(timeout=timeout)
            exchange.current().event(self.channel, stopped)
        output = self.seen
        record(self.channel, output)
        code = verdict.status
        ended = {10: _("could not reach the server"), 11: _("ran out of moves"), 12: _("waited too long for a word")}
        how = ended.get(code or 0) or _("status {code}").format(code=code)
        exchange.current().event(self.channel, _("the client ended: {how}").format(how=how))
        return code, wordsOf(output), output


def record(channel: str, output: str) -> None:
    """The words an agent sent and received (its ``@ …`` lines) into the check's exchange, at their times."""
    for line in output.splitlines():
        parts = line.split(maxsplit=4)
        if len(parts) == 5 and parts[0] == "@" and parts[2] in ("sent", "received"):
            with contextlib.suppress(ValueError):
                raw = bytes.fromhex(parts[3])
                at = float(parts[1])
                if parts[2] == "sent":
                    exchange.current().sent(channel, raw, parts[4], at=at)
                else:
                    exchange.current().received(channel, raw, parts[4], at=at)


def ops(words: Words) -> list[int]:
    return [op for op, _x, _y in words]


def serverFifos(target: Target) -> list[Path]:
    """FIFOs in the directory whose name carries the server's pid: the text's ``gbs.NNNNN``, or a wrong one."""
    directory = Path(target.fifoDir)
    if not directory.is_dir():
        return []
    return sorted(
        path
        for path in directory.iterdir()
        if str(target.pid) in path.name and not path.name.startswith("gbc") and stat.S_ISFIFO(path.lstat().st_mode)
    )


def serverPid(target: Target) -> int:
    """The server's pid as this machine numbers it (a sandboxed server has its own numbers: its FIFO's)."""
    return int(target.extra.get("hostPid") or target.pid)


def canTest(target: Target) -> str | None:
    if target.pid <= 0:
        return _("--target must be the server's process id")
    if not Path(target.fifoDir).is_dir():  # first: a mistyped directory is the likelier slip
        return _("the FIFO directory {folder} does not exist").format(folder=target.fifoDir)
    if not isAlive(serverPid(target)):
        return _("no process with pid {pid}").format(pid=target.pid)
    if not serverFifos(target):
        return _("process {pid} has no FIFO gbs.{pid:05d} in {folder}").format(pid=target.pid, folder=target.fifoDir)
    return None


def probe(target: Target) -> str | None:
    """Still serving: the process runs and its FIFO exists."""
    if not isAlive(serverPid(target)):
        return _("process {pid} has ended").format(pid=target.pid)
    if not serverFifos(target):
        return _("its FIFO in {folder} is gone").format(folder=target.fifoDir)
    return None


class GobangConformance(ConformanceCase):
    family = "gobang"

    def agent(self, opcode: int, *script: str, delay: float = 0.0) -> Agent:
        agent = Agent(
            self.target.fifoDir,
            self.target.pid,
            opcode,
            *script,
            cwd=self.target.extra.get("cwd"),
            byteOrderName=self.target.extra.get("byteOrder", "native"),
            delay=delay,
            prefix=self.target.extra.get("agentPrefix", ()),
            timeout=self.target.seconds(AGENT_TIMEOUT),
        )
        self.addCleanup(agent.stop)
        return agent

    def needsFifo(self) -> None:
        self.precondition(
            (Path(self.target.fifoDir) / f"gbs.{self.target.pid:05d}").exists(),
            _("needs the server's FIFO gbs.{pid:05d}").format(pid=self.target.pid),
            dependsOn="gobang-fifo-name",
            seen=_("the server's FIFO"),
        )

    def pair(self, black: list[str], white: list[str]) -> tuple[tuple[int | None, Words, str], ...]:
        """A game between two scripted players (a precondition: reaching the server's FIFO)."""
        self.needsFifo()
        blackAgent = self.agent(1, *black)
        # black signs on first, so both join the same (next) game: its first word says it has
        blackAgent.waitFor(bool, SIGNON_PAUSE)
        whiteAgent = self.agent(2, *white)
        results = blackAgent.finish(self.target.seconds(30)), whiteAgent.finish(self.target.seconds(30))
        reached = all(code != 10 for code, _words, _output in results)
        self.precondition(reached, _("the players could not reach the server's FIFO"))
        return results

    # -- signing on ------------------------------------------------------------------------------

    @rule("gobang-fifo-name")
    def test_serverFifoName(self) -> None:
        """The server reads the FIFO DIR/gbs.NNNNN, NNNNN its pid zero-padded to 5 digits."""
        path = Path(self.target.fifoDir) / f"gbs.{self.target.pid:05d}"
        self.require(
            path.exists() and stat.S_ISFIFO(path.lstat().st_mode),
            _("{path} must exist and be a FIFO; found {found}").format(
                path=path, found=[str(p) for p in serverFifos(self.target)]
            ),
        )

    @rule("gobang-signon")
    def test_signonAnsweredWithBoardSize(self) -> None:
        """A signon is answered first by opcode 7 with the board size in y."""
        (code, words, output), _white = self.pair(["resign"], ["1,1"])
        self.require(
            words and words[0][0] == 7 and 5 <= words[0][2] <= 63,
            _("the first answer to a signon must be opcode 7 with the size in y; got {got!r}").format(
                got=words[:1] or output
            ),
        )

    # -- playing ---------------------------------------------------------------------------------

    @rule("gobang-black-first")
    def test_blackMovesFirst(self) -> None:
        """Once both players are in, black gets the first move request, opcode 8."""
        (_code, blackWords, _output), (_whiteCode, whiteWords, _whiteOutput) = self.pair(["resign"], [])
        self.require(ops(blackWords)[:2] == [7, 8], _("black must get 7 then 8; got {ops}").format(ops=ops(blackWords)))
        self.require(
            8 not in ops(whiteWords),
            _("white must not be asked to move before black; got {ops}").format(ops=ops(whiteWords)),
        )

    @rule("gobang-five")
    def test_fiveInARowWins(self) -> None:
        """Five stones in a row win: every stone goes to both as 5/6, then opcode 1 to both."""
        (blackCode, blackWords, _output), (whiteCode, whiteWords, _whiteOutput) = self.pair(
            ["1,1", "2,1", "3,1", "4,1", "5,1"], ["1,3", "2,3", "3,3", "4,3"]
        )
        self.require(
            blackCode == 1 and whiteCode == 1,
            _("both players must get opcode 1 (black wins); got black {black}, white {white}").format(
                black=blackCode, white=whiteCode
            ),
        )
        self.require(
            (5, 5, 1) in blackWords and (5, 5, 1) in whiteWords,
            _("the winning stone (5, 1) must be sent to both as opcode 5"),
        )
        self.require((6, 4, 3) in blackWords, _("white's stones must be sent to black as opcode 6"))

    @rule("gobang-illegal")
    def test_illegalMoveGets9Then8(self) -> None:
        """A move on a taken point gets opcode 9, then opcode 8 again."""
        _black, (_code, whiteWords, _output) = self.pair(["1,1", "resign"], ["1,1", "2,2"])
        sequence = ops(whiteWords)
        self.require(
            any(sequence[i : i + 2] == [9, 8] for i in range(len(sequence) - 1)),
            _("white's move on black's stone must get 9 then 8; white saw {ops}").format(ops=sequence),
        )

    @rule("gobang-passes")
    def test_twoPassesDraw(self) -> None:
        """Two passes in a row end the game as a draw, opcode 0."""
        (blackCode, _words, _output), (whiteCode, _whiteWords, _whiteOutput) = self.pair(["pass"], ["pass"])
        self.require(
            blackCode == 0 and whiteCode == 0,
            _("both must get opcode 0; got {black}, {white}").format(black=blackCode, white=whiteCode),
        )

    @rule("gobang-resign")
    def test_resign(self) -> None:
        """The player to move may resign: the other wins."""
        (blackCode, _words, _output), (whiteCode, _whiteWords, _whiteOutput) = self.pair(["resign"], [])
        self.require(
            blackCode == 2 and whiteCode == 2,
            _("white wins after black resigns: opcode 2 to both; got {black}, {white}").format(
                black=blackCode, white=whiteCode
            ),
        )

    # -- ending and watching ---------------------------------------------------------------------

    @rule("gobang-signoff")
    def test_signoffEndsGameWith3(self) -> None:
        """A player's signoff ends the game for the other with opcode 3."""
        (blackCode, _words, _output), _white = self.pair(["1,1", "2,2"], ["signoff"])
        self.require(
            blackCode == 3, _("black must get opcode 3 after white signs off; got {black}").format(black=blackCode)
        )

    @rule("gobang-kibitz")
    def test_kibitz(self) -> None:
        """A kibitzer gets the size, the stones already placed, then the game (kibitz is optional)."""
        self.needsFifo()
        black = self.agent(1, "1,1", "2,1", "3,1", "4,1", "5,1", delay=0.4)
        black.waitFor(bool, SIGNON_PAUSE)
        white = self.agent(2, "1,3", "2,3", "3,3", "4,3", delay=0.4)
        black.waitFor(lambda words: sum(op in (5, 6) for op in ops(words)) >= 3, 2.0)  # a few stones are placed
        kibitz = self.agent(3)
        black.finish(self.target.seconds(30)), white.finish(self.target.seconds(30))
        code, words, output = kibitz.finish(timeout=self.target.seconds(10))
        if not words:
            self.deviation(
                _("no answer to a kibitz signon (the text makes kibitz optional); {output!r}").format(
                    output=output.strip()
                )
            )
        self.require(
            words[0][0] == 7, _("a kibitzer's first answer must be opcode 7; got {words}").format(words=words[:1])
        )
        self.require(8 not in ops(words), _("a kibitzer must never be asked to move"))
        self.require(
            any(op in (5, 6) for op in ops(words)),
            _("a kibitzer must see the stones; got {ops}").format(ops=ops(words)),
        )

    @rule("gobang-kill", stopsTarget=True)
    def test_killRemovesTheServerFifo(self) -> None:
        """Kill (opcode 15) from the server's user stops it, and it removes its FIFO first."""
        if not self.target.extra.get("destructive"):
            self.skipTest(_("stops the server: run with --destructive"))
        path = Path(self.target.fifoDir) / f"gbs.{self.target.pid:05d}"
        extra, prefix = self.target.extra, self.target.extra.get("agentPrefix", ())
        agent = Agent(self.target.fifoDir, self.target.pid, 15, cwd=extra.get("cwd"), prefix=prefix)
        self.addCleanup(agent.stop)  # the server it stopped answers nothing: the agent would wait its whole limit
        deadline = time.monotonic() + self.target.seconds(KILL_WAIT)
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # polling a path: no event to wait for across processes
        self.require(
            not path.exists(),
            _("{path} must be gone after Kill (waited {limit})").format(path=path, limit=self.target.limit(KILL_WAIT)),
        )
