"""One game of a ``socha-match`` (or of a league): its room's observer, its two programs, its result.

L{ObservingAdmin} is ``socha-admin prepare --observe`` keeping what the match
needs: the reservation codes, every room packet (the game's XML log), when
each memento arrived (the answer times), the start position and the result.
L{playGame} plays one game: it prepares the room, starts both programs in
their sandboxes (``velhanet.sandbox.program``), waits for the end (or the
deadlines of L{MatchSettings}), stops what still runs and judges what it saw
(``judging.judge``, pure). What differs between a ``socha-match`` and a
league's game (the commands, the players' folders, the names the room shows)
is a L{GameSetup} handed in, never a subclass.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.python.failure import Failure

from velhanet.i18n import _
from velhanet.sandbox import Sandbox
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.socha.adminprotocol import AdminError, AdminProtocol, Command
from velhanet.socha.judging import Deadlines, Ending, Observation, ProgramEnd, judge
from velhanet.socha.matchoptions import MatchSettings
from velhanet.socha.matchstats import GameResult, gameSeed, sides
from velhanet.socha.wire import render, tag


class ObservingAdmin(AdminProtocol):
    """``prepare --observe`` that keeps what a match needs: codes, packets, move times, the result."""

    def __init__(
        self, password: str, names: tuple[str, str], timeouts: bool, clock: Any, seed: int | None = None
    ) -> None:
        command = Command("prepare", names=names, timeouts=timeouts, observe=True, seed=seed)
        super().__init__(password, command, clock, say=lambda line: None, timeout=30)
        self.reserved: Deferred[list[str]] = Deferred()
        self.packets: list[str] = []
        self.moments: list[float] = []
        self.startTeam = "ONE"
        self.players = 0
        self.errors: list[str] = []
        self.result: Element | None = None
        self.position = ""
        """A fingerprint of the start position (the first memento's board): equal boards, equal fingerprints."""

    def handle(self, message: Element) -> None:
        if message.tag == "joinedGameRoom":
            self.players = int(message.get("playerCount", "0"))
        if message.tag == "room":
            self.packets.append(render(message))
            data = message.find("data")
            kind = data.get("class") if data is not None else None
            if kind == "memento" and data is not None:
                state = data.find("state")
                self.startTeam = state.get("startTeam", "ONE") if state is not None else "ONE"
                if not self.moments and state is not None:
                    self.position = fingerprint(state.find("board"))
                self.moments.append(time.monotonic())
            elif kind == "error" and data is not None:
                self.errors.append(" ".join(data.get("message", "").split()))
            elif kind == "result":
                self.result = data
        super().handle(message)
        if message.tag == "prepared" and not self.reserved.called:
            self.reserved.callback([r.text or "" for r in message.findall("reservation")])

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        super().connectionLost(reason)
        if not self.reserved.called:
            self.reserved.errback(AdminError(_("the server prepared no room")))

    @property
    def started(self) -> bool:
        return bool(self.moments)

    def observation(self) -> Observation:
        """What it saw, frozen: what the judge decides on."""
        return Observation(
            tuple(self.moments), self.startTeam, self.position, self.result, tuple(self.errors), self.players
        )

    def cancel(self) -> None:
        if not self._finished and self.roomId:
            self._write([tag("cancel", {"roomId": self.roomId})])


def fingerprint(board: Element | None) -> str:
    """Twelve hex digits naming a board: its fields' texts, row by row."""
    if board is None:
        return ""
    fields = ",".join((field.text or "").strip() for field in board.iter("field"))
    return hashlib.sha256(fields.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class GameSetup:
    """What one game's programs are: how to start each, where, and who watches the room."""

    commandOf: Callable[[int, str, int], list[str]]
    """Player ``player``'s command for its ``reservation`` and the game's ``seed``, placeholders filled in."""
    folders: tuple[Path | None, Path | None]
    """Each player's folder (its private copy in the sandbox), if it has one."""
    workingDirectoryOf: Callable[[int], Path]
    newWatcher: Callable[[tuple[str, str], int], ObservingAdmin]
    """The room's observer for the teams' names and the game's seed."""
    playing: Callable[[ObservingAdmin, list[SandboxedProgram]], None] = lambda watcher, players: None
    """Told once both programs are started (or failed to start)."""


async def playGame(
    reactor: Any,
    sandbox: Sandbox,
    settings: MatchSettings,
    server: tuple[str, int],
    setup: GameSetup,
    game: int,
    watchers: set[ObservingAdmin],
    interrupted: Callable[[], bool] = lambda: False,
) -> tuple[GameResult, str]:
    """Play game ``game`` on ``server``; its result and its room packets (the XML log's content).

    The room's observer is in ``watchers`` while the game runs (an interrupt cancels them all)."""
    host, port = server
    order = sides(game)
    names = (f"p{order[0] + 1}", f"p{order[1] + 1}")
    seed = gameSeed(settings.seed, game)
    watcher = setup.newWatcher(names, seed)
    await connectProtocol(TCP4ClientEndpoint(reactor, host, port, timeout=10), watcher)
    codes = await watcher.reserved
    watchers.add(watcher)
    done: Deferred[None] = Deferred()
    watcher.done.addBoth(lambda _: None if done.called else done.callback(None))
    players: list[SandboxedProgram] = []
    """Both programs, by player (0, 1), once started."""
    crashed: list[int] = []
    brokeAt: dict[int, int] = {}

    def crashedIfNoResult(player: int) -> None:
        if watcher.result is None and not done.called:
            # Every player gone by now: when both are, neither lost to the other.
            crashed.extend(p for p in (0, 1) if players[p].status is not None)
            watcher.cancel()

    def exited(verdict: object, player: int) -> None:
        ended = players[player].verdict
        if ended is not None and ended.brokeALimit:
            brokeAt[player] = max(len(watcher.moments) - 1, 0)
        if watcher.result is None and not done.called:
            reactor.callLater(settings.grace, crashedIfNoResult, player)

    started: list[SandboxedProgram | None] = [None, None]
    for team, player in enumerate(order):  # team ONE's program first
        log = settings.logOf(game, player)
        try:
            started[player] = spawn(
                sandbox,
                reactor,
                setup.commandOf(player, codes[team], seed),
                folder=setup.folders[player],
                cwd=setup.workingDirectoryOf(player),
                reach=[(host, port)],
                output=log,
            )
        except OSError as error:
            if log is not None:
                log.close()
            started[player] = SandboxedProgram.notStarted(reactor, 127)
            print("\n" + _("cannot start p{player}: {error}").format(player=player + 1, error=error), file=sys.stderr)
    players = [process for process in started if process is not None]
    for player, process in enumerate(players):
        process.ended.addCallback(exited, player)
    setup.playing(watcher, players)
    timers = [
        reactor.callLater(settings.joinTimeout, lambda: None if watcher.started else watcher.cancel()),
        reactor.callLater(settings.gameTimeout, watcher.cancel),
    ]
    await done
    for timer in timers:
        if timer.active():
            timer.cancel()
    watchers.discard(watcher)
    for process in players:
        if process.verdict is None:
            reactor.callLater(settings.grace, process.stop)
    await DeferredList([process.ended for process in players], consumeErrors=True)
    ends = [ProgramEnd(p.status, p.killed, p.verdict) for p in players]
    ending = Ending(tuple(crashed), brokeAt, interrupted())
    result = judge(game, watcher.observation(), ends, ending, Deadlines(settings.joinTimeout, settings.gameTimeout))
    return result, "".join(watcher.packets)
