"""A UCI engine as ``gambit-client --bot``'s player: python-chess's engine protocol, the engine in the sandbox.

    engine = await Engine.start(reactor, sandbox, ["/usr/games/stockfish"], skill=5)
    move = await engine.play(board, movetime=0.1)       # a legal chess.Move, or EngineFailure
    await engine.quit()                                 # "quit", then killed if it does not stop

How it runs, and why so:

- The engine is a program velhanet starts, so it runs in the sandbox like a
  student's player (``velhanet.sandbox.program.spawn``, with a ``reader``):
  the reactor spawns it and owns its pipes; with ``--sandbox on``/``auto`` it
  sees the system read-only, no network and no home, within the limits.
- The UCI conversation is python-chess's own ``chess.engine.UciProtocol``, an
  asyncio protocol: it needs a running asyncio loop. The client and trial run
  Twisted's default reactor (a test cannot switch reactors), so instead of
  requiring Twisted's asyncio reactor the protocol lives on a private asyncio
  loop in one daemon thread (L{_Loop}), as python-chess's ``SimpleEngine``
  does. No I/O happens in that thread: L{_Pipes}, the transport the protocol
  sees (duck-typed as python-chess's ``MockTransport`` is), hands every line
  it writes to the reactor (``callFromThread``), and the reactor hands what
  the engine prints to the loop (``call_soon_threadsafe``). A coroutine's
  result comes back as a Deferred, fired in the reactor's thread.
- The reactor never waits: each question has a Deferred with a timeout on the
  reactor's clock (the start, and each move: ``--movetime`` plus a margin).
- ``SimpleEngine`` through ``deferToThread`` was not chosen: it spawns the
  engine itself (an asyncio subprocess), outside the sandbox, and blocks a
  thread per question, with its own timeouts to reconcile at shutdown.

Every failure is an L{EngineFailure} whose message is the one line the player
reads: "cannot start the engine …: …" at the start, "the engine … crashed
(exit 1)" in a game (the session then resigns). After a failure the engine is
stopped; it answers nothing more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import chess
import chess.engine
from twisted.internet.defer import CancelledError, Deferred, TimeoutError, fail
from twisted.python.failure import Failure

from velhanet.i18n import N_, _
from velhanet.sandbox import Sandbox
from velhanet.sandbox.jail import programFolder
from velhanet.sandbox.program import SandboxedProgram, spawn

T = TypeVar("T")

START_TIMEOUT = 10.0
"""Seconds an engine has to answer ``uci`` with ``uciok`` (Stockfish loads its network first)."""

ANSWER_MARGIN = 2.0
"""Seconds beyond its thinking time an engine may take to answer ``go``."""

QUIT_GRACE = 2.0
"""Seconds an engine has to stop after ``quit`` before it is killed."""

MAX_LINE = 65536
"""Bytes of one line of the engine's output at most: a longer one is nonsense, and would only grow in memory."""

SKILL_OPTION = "Skill Level"
"""Stockfish's option: 0 (weakest) … 20 (full strength)."""


FAILURES: Final = {
    "timeout": (
        N_("the engine {engine} did not answer within {seconds:g} s"),
        N_("cannot start the engine {engine}: it did not answer within {seconds:g} s"),
    ),
    "crashed": (N_("the engine {engine} crashed ({how})"), N_("cannot start the engine {engine}: it crashed ({how})")),
    "nonsense": (
        N_("the engine {engine} answered nonsense ({error})"),
        N_("cannot start the engine {engine}: it answered nonsense ({error})"),
    ),
    "failed": (N_("the engine {engine} failed: {error}"), N_("cannot start the engine {engine}: it failed: {error}")),
    "longLine": (
        N_("the engine {engine} printed a line longer than {limit} bytes"),
        N_("cannot start the engine {engine}: it printed a line longer than {limit} bytes"),
    ),
    "spawn": (
        N_("the engine {engine} could not be spawned: {error}"),
        N_("cannot start the engine {engine}: it could not be spawned: {error}"),
    ),
}
"""Each way an engine fails: as said during a game, and as said of an engine that was starting."""


class EngineFailure(Exception):
    """The engine could not start, died, answered nonsense or nothing in time: the message is one line.

    A failure of L{FAILURES} keeps its ``kind`` and details, so that a start that fails says it its own way.
    """

    def __init__(self, message: str, kind: str = "", **details: object) -> None:
        super().__init__(message)
        self.kind, self.details = kind, details

    @classmethod
    def of(cls, kind: str, engine: str, **details: object) -> EngineFailure:
        return cls(_(FAILURES[kind][0]).format(engine=engine, **details), kind, **details)

    def atStart(self, command: str) -> EngineFailure:
        """The same failure, of an engine ``command`` that was starting."""
        if self.kind not in FAILURES:
            return self
        return EngineFailure(
            _(FAILURES[self.kind][1]).format(engine=command, **self.details), self.kind, **self.details
        )


class _Loop:
    """A private asyncio loop in a daemon thread; a coroutine run on it comes back as a Deferred."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="uci-engine", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            self.loop.close()

    def call(self, coroutine: Coroutine[Any, Any, T]) -> Deferred[T]:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)

        def cancel(_: Deferred[T]) -> None:
            future.cancel()  # the loop cancels the command: UciProtocol says "stop"

        result: Deferred[T] = Deferred(cancel)

        def settle(done: concurrent.futures.Future[T]) -> None:
            if result.called:  # cancelled, or timed out
                return
            if done.cancelled():
                result.errback(CancelledError())
            elif done.exception() is not None:
                result.errback(Failure(done.exception()))
            else:
                result.callback(done.result())

        future.add_done_callback(lambda done: self.reactor.callFromThread(settle, done))
        return result

    def soon(self, function: Any, *args: Any) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(function, *args)

    def stop(self) -> None:
        self.soon(self.loop.stop)


class _Pipes:
    """What ``UciProtocol`` takes for its subprocess transport: the sandboxed program's pipes, via the reactor."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor
        self.program: SandboxedProgram | None = None
        self.returncode: int | None = None

    def get_pipe_transport(self, fd: int) -> _Pipes:
        return self

    def write(self, data: bytes) -> None:  # from the loop's thread
        if self.program is not None:
            self.reactor.callFromThread(self.program.write, data)

    def get_pid(self) -> int:
        transport = self.program.transport if self.program is not None else None
        return int(getattr(transport, "pid", 0) or 0)

    def get_returncode(self) -> int | None:
        return self.returncode

    def close(self) -> None:
        if self.program is not None:
            self.reactor.callFromThread(self.program.stop)


async def _newProtocol(pipes: _Pipes) -> chess.engine.UciProtocol:
    protocol = chess.engine.UciProtocol()  # it needs the running loop: made on it
    protocol.connection_made(pipes)  # type: ignore[arg-type]
    return protocol


def _findExecutable(path: str) -> tuple[str, str]:
    """Its absolute path (it runs from its own folder, in the sandbox too), and the reason it cannot run, or ''."""
    found = shutil.which(path) if os.sep not in path else path
    if found is None or not os.path.exists(found):
        return path, _("no such file") if os.sep in path else _("no such command on PATH")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        return path, _("not an executable file")
    return os.path.abspath(found), ""


class Engine:
    """One running UCI engine; see the module's docstring."""

    def __init__(self, reactor: Any, command: Sequence[str], margin: float = ANSWER_MARGIN) -> None:
        self.reactor = reactor
        self.command = list(command)
        self.name = os.path.basename(command[0])
        self.margin = margin
        self.loop = _Loop(reactor)
        self.pipes = _Pipes(reactor)
        self.protocol: chess.engine.UciProtocol | None = None
        self.program: SandboxedProgram | None = None
        self.failure: EngineFailure | None = None
        """The first failure: why the bot resigned."""
        self.notes: list[str] = []
        """What the player should know (an option the engine does not have)."""
        self.quitting = False
        """We asked it to quit: a question still pending then ends as cancelled, never as its failure."""
        self._gone: list[Deferred[None]] = []
        self._partial = 0
        """Bytes of its output since its last newline."""

    @classmethod
    async def start(
        cls,
        reactor: Any,
        sandbox: Sandbox,
        command: Sequence[str],
        *,
        skill: int | None = None,
        startTimeout: float = START_TIMEOUT,
        margin: float = ANSWER_MARGIN,
    ) -> Engine:
        """Start it and say ``uci`` (and set its skill): a ready engine, or EngineFailure ("cannot start …")."""
        found, problem = _findExecutable(command[0])
        if problem:
            raise EngineFailure(
                _("cannot start the engine {engine}: {problem}").format(engine=command[0], problem=problem)
            )
        engine = cls(reactor, [found, *command[1:]], margin)
        try:
            await engine._spawn(sandbox)
            await engine._ask(engine._protocol().initialize(), startTimeout)
            if skill is not None:
                if SKILL_OPTION in engine._protocol().options:
                    await engine._ask(engine._protocol().configure({SKILL_OPTION: skill}), startTimeout)
                else:
                    note = _("the engine {engine} has no {option!r} option: --skill {skill} is ignored")
                    engine.notes.append(note.format(engine=engine.name, option=SKILL_OPTION, skill=skill))
        except EngineFailure as failure:
            await engine.quit()
            raise failure.atStart(command[0]) from None
        return engine

    async def _spawn(self, sandbox: Sandbox) -> None:
        self.protocol = await self.loop.call(_newProtocol(self.pipes))
        try:
            self.program = spawn(
                sandbox,
                self.reactor,
                self.command,
                folder=programFolder(self.command, Path.cwd()),
                reader=self._read,
            )
        except OSError as error:
            self.loop.stop()
            raise EngineFailure.of("spawn", self.name, error=error.strerror or error) from None
        self.pipes.program = self.program
        self.program.ended.addCallback(self._ended)
        # Not waiting for ``program.ready``: what is written waits in the pipe, and the start's
        # timeout then covers the sandbox's set-up too.

    def _read(self, data: bytes) -> None:
        """What it prints, to the protocol on the loop (in the reactor's thread)."""
        newline = data.rfind(b"\n")
        self._partial = len(data) - newline - 1 if newline >= 0 else self._partial + len(data)
        if self._partial > MAX_LINE:
            self._broken(EngineFailure.of("longLine", self.name, limit=MAX_LINE))
        elif self.failure is None:
            self.loop.soon(self._protocol().pipe_data_received, 1, data)

    def _protocol(self) -> chess.engine.UciProtocol:
        assert self.protocol is not None
        return self.protocol

    # -- questions -------------------------------------------------------------------------

    def play(self, board: chess.Board, movetime: float) -> Deferred[chess.Move]:
        """Its move in ``board`` within ``movetime`` seconds (plus the margin): legal, or an EngineFailure."""
        position = board.copy()
        asked = self._ask(self._protocol().play(position, chess.engine.Limit(time=movetime)), movetime + self.margin)

        def legal(result: chess.engine.PlayResult) -> chess.Move:
            if result.move is None or result.move not in position.legal_moves:
                said = _("the engine {engine} gave no legal move ({move})").format(engine=self.name, move=result.move)
                raise self._broken(EngineFailure(said))
            return result.move

        return asked.addCallback(legal)

    def _ask(self, coroutine: Coroutine[Any, Any, T], seconds: float) -> Deferred[T]:
        if self.failure is not None:
            coroutine.close()
            return fail(self.failure)
        asked = self.loop.call(coroutine)
        asked.addTimeout(seconds, self.reactor)
        return asked.addErrback(self._failed, seconds)

    def _failed(self, failure: Failure, seconds: float) -> Failure:
        if failure.check(CancelledError):
            return failure  # the game no longer wants the answer
        if self.quitting:  # it stopped because we asked it to (^C while it thought): not a crash to resign for
            return Failure(CancelledError())
        if self.failure is not None:
            return Failure(self.failure)
        if failure.check(TimeoutError):
            broken = EngineFailure.of("timeout", self.name, seconds=seconds)
        elif failure.check(chess.engine.EngineTerminatedError) or self.pipes.returncode is not None:
            broken = EngineFailure.of("crashed", self.name, how=self.howItEnded())
        elif failure.check(chess.engine.EngineError):
            broken = EngineFailure.of("nonsense", self.name, error=failure.getErrorMessage())
        else:
            broken = EngineFailure.of("failed", self.name, error=failure.getErrorMessage())
        return Failure(self._broken(broken))

    def _broken(self, failure: EngineFailure) -> EngineFailure:
        """The first failure is the one told; the engine is stopped, it answers nothing more."""
        if self.failure is None:
            self.failure = failure
        if self.program is not None:
            self.program.stop()
        return self.failure

    # -- its end -----------------------------------------------------------------------------

    def howItEnded(self) -> str:
        program = self.program
        verdict = program.verdict if program is not None else None
        if verdict is not None and verdict.cause:
            return verdict.cause
        status = program.status if program is not None else None
        if status is None:
            return _("still running")
        if status > 128:
            return _("killed by signal {signal}").format(signal=status - 128)
        return _("exit {status}").format(status=status)

    def _ended(self, verdict: object) -> object:
        self.pipes.returncode = self.program.status if self.program is not None else -1
        if self.protocol is not None:
            self.loop.soon(self.protocol.connection_lost, None)  # ends its pending command with EngineTerminatedError
        waiting, self._gone = self._gone, []
        for gone in waiting:
            gone.callback(None)
        return verdict

    def quit(self, grace: float = QUIT_GRACE) -> Deferred[None]:
        """``quit`` and end of input, then killed after ``grace`` seconds if it has not stopped; fires once it ended."""
        program = self.program
        self.quitting = True
        done: Deferred[None] = Deferred()
        if program is None or program.ended.called:
            done.callback(None)
        else:
            self._gone.append(done)
            program.write(b"quit\n")
            program.closeStdin()
            kill = self.reactor.callLater(grace, program.stop)
            done.addBoth(lambda result: (kill.cancel() if kill.active() else None, result)[1])
        return done.addBoth(self._stopLoop)

    def _stopLoop(self, result: T) -> T:
        self.loop.stop()
        return result
