"""Software-Challenge *player* conformance: a velhanet server plays the player under test
against a velhanet bot and reports what the player did wrong.

The target is a command line that starts the player; ``{port}`` in it is
replaced by the server's port (otherwise ``--port PORT`` is appended, the
option of the official ``socha`` Starter). One game is played and every
test reads its record.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.interfaces import ITCPTransport
from twisted.internet.task import deferLater
from twisted.trial.unittest import SkipTest, TestCase

from velhanet.checks import exchange
from velhanet.checks.base import NotRun, Target, rule, target
from velhanet.checks.exchange import Exchange
from velhanet.checks.socha.rules import sentXml
from velhanet.i18n import _
from velhanet.sandbox import Sandbox, SandboxSettings
from velhanet.sandbox.jail import programFolder
from velhanet.sandbox.launch import QUOTED_TAIL
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.socha.player import BotPlayer
from velhanet.socha.protocol import SochaFactory, SochaProtocol
from velhanet.tracing import OUT


def fillPlaceholders(command: str, port: int) -> str:
    """A player's command for the checker's game: ``{port}``, and socha-match's other placeholders as a plain
    join needs them (``{host}`` 127.0.0.1, ``{seed}`` 1, ``{reservation}`` empty), so that one ``velhanet-run``
    serves the checks and a league (``'{reservation}'`` quoted: an empty code is a ``<join/>``)."""
    values = {"{port}": str(port), "{host}": "127.0.0.1", "{seed}": "1", "{reservation}": ""}
    for placeholder, value in values.items():
        command = command.replace(placeholder, value)
    return command


@dataclass
class GameRecord:
    joined: bool = False
    requests: list[str] = field(default_factory=list)
    result: Element | None = None
    playerTeam: str = ""
    closedAfterLeft: bool = False
    exitStatus: int | None = None
    output: str = ""
    programEndedFirst: str = ""
    """How the program ended, when it ended before the game did (else "")."""
    exchange: Exchange = field(default_factory=Exchange)
    """The XML between the checker's server and the player, shown under each of the game's checks."""


AFTER_THE_PROGRAM_ENDED = 3.0
"""Seconds the game may still take to end once the player's program has ended (killed, exited)."""


class _RecordingLobby(SochaFactory):
    """The checker's server: keeps every connection, and the player's messages (the first connection's) in
    the game's exchange."""

    def __init__(self, clock: Any, record: GameRecord) -> None:
        super().__init__(clock)
        self.everyConnection: list[SochaProtocol] = []
        self.record = record
        self.tracing = True
        self.trace = self._recordPlayer
        self.program: SandboxedProgram | None = None

    def buildProtocol(self, addr: object) -> SochaProtocol | None:  # type: ignore[override]
        if self.program is not None and self.program.lookNow():
            return None  # it broke a limit before it came here: stopped at this step every time
        protocol = super().buildProtocol(addr)
        if not self.everyConnection:
            connected = _("the player connected from {port}").format(port=getattr(addr, "port", "?"))
            self.record.exchange.event("tcp#1", connected)
        self.everyConnection.append(protocol)
        return protocol

    def _recordPlayer(self, direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        if not self.everyConnection or peer != self.everyConnection[0].peer:
            return  # the checker's own bot
        data = raw.encode() if isinstance(raw, str) else raw
        if direction == OUT:
            self.record.exchange.sent("tcp#1", data, sentXml(data))
        else:
            self.record.exchange.received("tcp#1", data, sentXml(data) if decoded == "room" else str(decoded))


_record: GameRecord | None = None


def canTest(chosen: Target) -> str | None:
    """The command names a program that exists (whether it then plays is for the checks to say)."""
    try:
        words = shlex.split(chosen.command)
    except ValueError as error:
        return _("the command {command!r} cannot be parsed: {error}").format(command=chosen.command, error=error)
    if not words:
        return _("no --command given: the command that starts the player")
    program = words[0]
    cwd = chosen.extra.get("cwd") or "."
    if shutil.which(program) is None and not os.path.exists(os.path.join(cwd, program)):
        return _("the command's program {program!r} was not found").format(program=program)
    global _record
    _record = None  # a new target: play a new game
    return None


def exitStatus(status: object) -> str:
    return _("exit status {status}").format(status=status)


def probe(chosen: Target) -> str | None:
    """Nothing to probe: the player is started for the game it plays."""
    return None


def _abort(transport: object) -> None:
    """Close a TCP connection that is still open, at once (the checker's own reactor must end clean)."""
    if transport is not None and getattr(transport, "connected", False):
        ITCPTransport(transport).abortConnection()


class SochaPlayerConformance(TestCase):
    timeout = 180

    @inlineCallbacks
    def play(self):  # type: ignore[no-untyped-def]
        global _record
        chosen = target()
        if chosen.family != "socha-player":
            raise SkipTest(_("the target is a {family} implementation").format(family=chosen.family))
        if _record is not None:
            exchange.current().extend(_record.exchange)
            return _record
        record = GameRecord()
        lobby = _RecordingLobby(reactor, record)
        port = reactor.listenTCP(0, lobby, interface="127.0.0.1")  # type: ignore[arg-type]
        number = port.getHost().port  # type: ignore[attr-defined]
        command = fillPlaceholders(chosen.command, number)
        if "{port}" not in chosen.command:
            command += f" --port {number}"
        sandbox: Sandbox = chosen.extra.get("sandbox") or Sandbox.forCommand(SandboxSettings(), say=lambda line: None)
        cwd = Path(chosen.extra.get("cwd") or os.getcwd())
        argv = shlex.split(command)
        folder = chosen.extra.get("folder") or programFolder(argv, cwd)
        log = chosen.extra.get("log")
        try:
            output = open(log, "wb") if log else None  # noqa: SIM115 (the program's end closes it)
            reach = [("127.0.0.1", number)]
            process = spawn(sandbox, reactor, argv, folder=folder, cwd=cwd, reach=reach, output=output)
            lobby.program = process
        except OSError as error:
            yield port.stopListening()
            record.output = _("cannot start the player: {error}").format(error=error)
            _record = record
            return record
        try:
            for _tick in range(100):
                if lobby.lobby.rooms or process.verdict is not None:  # joined, or will never join
                    break
                yield deferLater(reactor, 0.1, lambda: None)
            record.joined = bool(lobby.lobby.rooms)
            if not record.joined and process.verdict is not None:
                record.programEndedFirst = process.verdict.summary() or exitStatus(process.verdict.status)
            if record.joined:
                bot = BotPlayer(seed=7)
                yield connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", number), bot)
                sinceTheProgramEnded = 0
                for _tick in range(1500):
                    if bot.done.called:
                        break
                    if process.verdict is not None:  # killed or exited: the game ends now or never
                        sinceTheProgramEnded += 1
                        if sinceTheProgramEnded > AFTER_THE_PROGRAM_ENDED * 10:
                            record.programEndedFirst = process.verdict.summary()
                            break
                    yield deferLater(reactor, 0.1, lambda: None)
                if not bot.done.called:
                    _abort(bot.transport)
                record.result = bot.result
                record.playerTeam = "TWO" if bot.team == "ONE" else "ONE"
            for _tick in range(150):
                if process.verdict is not None and all(
                    c.transport is None or not getattr(c.transport, "connected", False)
                    for c in lobby.everyConnection[:1]
                ):
                    break
                yield deferLater(reactor, 0.1, lambda: None)
            record.closedAfterLeft = bool(lobby.everyConnection) and lobby.everyConnection[0].closedAfterLeft
        finally:
            if process.verdict is None:
                process.stop()
            verdict = yield process.ended
            yield process.cleaned  # its control group gone: nothing of it pending on the checks' reactor
            for connection in lobby.everyConnection:  # a connection the program's end left open (its relay)
                _abort(connection.transport)
            chosen.extra["verdict"] = verdict
            record.exitStatus = verdict.status
            record.output = process.tail.decode("utf-8", "replace")
            yield port.stopListening()
        ended = _("the program ended: {how}").format(how=verdict.summary() or exitStatus(verdict.status))
        record.exchange.event("player", ended)
        _record = record
        exchange.current().extend(record.exchange)
        return record

    def needsGame(self, record: GameRecord) -> None:
        if not record.joined:
            raise NotRun(_("needs the player in a game; it never joined"), "socha-player-join")

    # -- the player ------------------------------------------------------------------------------

    @rule("socha-player-join")
    @inlineCallbacks
    def test_playerJoins(self):  # type: ignore[no-untyped-def]
        """The player connects and joins with <protocol> and a join request."""
        record = yield self.play()
        if not record.joined:
            output = record.output[-QUOTED_TAIL:]
            if record.programEndedFirst:
                self.fail(
                    _("the player's program ended before it joined ({how}); its output: {output!r}").format(
                        how=record.programEndedFirst, output=output
                    )
                )
            if record.exitStatus is None:
                self.fail(_("the player never joined within 10 s; its output: {output!r}").format(output=output))
            self.fail(
                _(
                    "the player never joined within 10 s (it exited with status {status}); its output: {output!r}"
                ).format(status=record.exitStatus, output=output)
            )

    @rule("socha-player-moves")
    @inlineCallbacks
    def test_playerMovesLegallyAndInTime(self):  # type: ignore[no-untyped-def]
        """The player answers every moveRequest within 2 s (timed as the official server) with a legal move."""
        record = yield self.play()
        self.needsGame(record)
        if record.result is None and record.programEndedFirst:
            self.fail(
                _("the game never ended: the player's program ended first ({how})").format(how=record.programEndedFirst)
            )
        if record.result is None:
            self.fail(_("the game never ended (no result within the time limit)"))
        winner = record.result.find("winner")
        assert winner is not None
        if winner.get("regular") == "false" and winner.get("team") != record.playerTeam:
            self.fail(_("the player broke a rule: {reason}").format(reason=winner.get("reason")))

    @rule("socha-player-close")
    @inlineCallbacks
    def test_playerClosesAfterLeft(self):  # type: ignore[no-untyped-def]
        """After <left/> the player closes the connection itself (the server waits for it)."""
        record = yield self.play()
        self.needsGame(record)
        if not record.closedAfterLeft:
            self.fail(_("the player did not close its connection within 10 s of <left/>"))

    @rule("socha-player-exit")
    @inlineCallbacks
    def test_playerExitsCleanly(self):  # type: ignore[no-untyped-def]
        """The player process ends with exit status 0 after the game."""
        record = yield self.play()
        self.needsGame(record)
        if record.exitStatus != 0:
            self.fail(
                _("the player exited with status {status}; its output: {output!r}").format(
                    status=record.exitStatus, output=record.output[-QUOTED_TAIL:]
                )
            )
