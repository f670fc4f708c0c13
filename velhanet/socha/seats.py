"""A room's seats: its two players, its observers, and everything the room sends them.

The L{RoomCore} of the room machine (``room.py``): the machine decides, the
core writes the packets, the result and ``<left/>``. A test gives the machine
a core whose clients are recording fakes (any object with ``sendPacket`` and
``leftRoom``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from xml.etree.ElementTree import Element

from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from velhanet.games.kinarow import Place
from velhanet.games.piranhas import TEAM_NAMES
from velhanet.socha.games import GameEnd, GameType, HostedGame, KInARowGame, PiranhasGame
from velhanet.socha.wire import LEFT_THE_GAME, Verdict, resultData, tag
from velhanet.watching import NO_WATCHER, UNWATCHED, GameWatcher, WatchedGame

PACKET_GAP = 0.05
"""Seconds between two packets to one player that must arrive in separate reads."""


class Client(Protocol):
    """A connection as a room sees it."""

    def sendPacket(self, packet: Element) -> None: ...

    def leftRoom(self, roomId: str) -> None:
        """Send ``<left roomId/>`` and wait for the client to close."""


@dataclass
class Slot:
    team: int
    displayName: str = ""
    canTimeout: bool = True
    reservation: str | None = None
    client: Client | None = None

    def name(self) -> str:
        return self.displayName or TEAM_NAMES[self.team]


def position(game: HostedGame) -> object:
    """A hosted game's engine state, for its spectators (L{velhanet.watching})."""
    if isinstance(game, PiranhasGame | KInARowGame):
        return game.state
    return None


def moveText(game: HostedGame) -> str:
    """The move just played, for the spectators' move list."""
    if isinstance(game, PiranhasGame):
        return str(game.state.lastMove)
    if isinstance(game, KInARowGame):
        move = game.state.lastMove
        return f"({move.x}, {move.y})" if isinstance(move, Place) else str(move)
    return "?"


@dataclass
class RoomCore:
    roomId: str
    gameType: GameType
    clock: IReactorTime
    removeRoom: Callable[[str], None]
    observers: list[Client]
    slots: list[Slot] = field(default_factory=lambda: [Slot(0), Slot(1)])
    timeouts: bool = True
    timeScale: float = 1.0
    """``--time-scale``: the move time limits (soft 2 s, hard 10 s) times this."""
    packetGap: float = PACKET_GAP
    rng: random.Random = field(default_factory=random.Random)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.socha.room"))
    game: HostedGame | None = None
    """The game, from the welcome on."""
    watcher: GameWatcher = NO_WATCHER
    """Where the game is reported for the spectators' site (``--web``); it never acts on the game."""
    hidden: bool = False
    """Not shown on the site (a prepared game, unless the server runs with ``--web-show-prepared``)."""
    watched: WatchedGame = UNWATCHED

    # -- sending ------------------------------------------------------------------

    def roomPacket(self, data: Element) -> Element:
        return tag("room", {"roomId": self.roomId}, data)

    def toPlayers(self, data: Element, observers: bool = True) -> None:
        packet = self.roomPacket(data)
        for slot in self.slots:
            if slot.client is not None:
                slot.client.sendPacket(packet)
        if observers:
            self.toObservers(packet)

    def toObservers(self, packet: Element) -> None:
        for observer in self.observers:
            observer.sendPacket(packet)

    def sendMemento(self, game: HostedGame) -> None:
        self.toPlayers(tag("data", {"class": "memento"}, game.stateElement()))

    def announcePause(self, paused: bool) -> None:
        self.toObservers(self.roomPacket(tag("data", {"class": "paused", "paused": "true" if paused else "false"})))

    def mover(self) -> Slot | None:
        team = self.game.toMove if self.game is not None else None
        return None if team is None else self.slots[team]

    def teamOf(self, client: Client) -> int | None:
        for slot in self.slots:
            if slot.client is client:
                return slot.team
        return None

    def clear(self, client: Client) -> None:
        for slot in self.slots:
            if slot.client is client:
                slot.client = None

    def played(self, game: HostedGame) -> None:
        """A move was judged legal: the spectators' site hears of it, the players and observers see the board."""
        self.watched.moved(moveText(game))
        self.sendMemento(game)

    def startWatching(self, game: HostedGame) -> None:
        """Report the game that starts to the spectators' site (nothing without ``--web``)."""
        players = [slot.name() for slot in self.slots]
        self.watched = self.watcher.started(
            "socha", self.gameType.gameType, players, lambda: position(game), hidden=self.hidden
        )

    # -- ending --------------------------------------------------------------------

    def finish(self, verdict: Verdict) -> None:
        """Send the result and ``<left/>`` to all; free the room."""
        names = (self.slots[0].displayName, self.slots[1].displayName)
        self.toPlayers(resultData(self.gameType.fragments, names, TEAM_NAMES, verdict))
        self.log.info("room {room}: {reason}", room=self.roomId, reason=verdict.reason)
        winner = f"{self.slots[verdict.winner].name()} wins: " if verdict.winner is not None else ""
        self.watched.ended(winner + verdict.reason)
        self.leaveAll()

    def ended(self, end: GameEnd) -> None:
        """The game ended by its rules."""
        winner = end.winner
        text = end.reason % self.slots[winner].name() if winner is not None and "%s" in end.reason else end.reason
        self.finish(Verdict(winner, True, text, end.swarms))

    def violation(self, team: int, what: str) -> None:
        self.finish(Verdict(1 - team, False, f"{self.slots[team].name()} {what}", self.parts(), violator=team))

    def unrequested(self, client: Client) -> None:
        """A move nobody asked for: a process violation of its sender."""
        team = self.teamOf(client)
        assert team is not None, "the lobby routes only its players' moves to a room"
        self.violation(team, "hat einen Zug gesendet, ohne dazu aufgefordert zu sein")

    def playerLeft(self, client: Client) -> None:
        team = self.teamOf(client)
        assert team is not None, "only players leave a room"
        self.slots[team].client = None
        self.violation(team, LEFT_THE_GAME)

    def cancelled(self, reason: str) -> None:
        self.finish(Verdict(None, False, reason, self.parts()))

    def parts(self) -> tuple[int, int]:
        return self.game.parts() if self.game is not None else (0, 0)

    def leaveAll(self) -> None:
        """``<left/>`` to every player (who then closes) and observer (who stays connected)."""
        for slot in self.slots:
            if slot.client is not None:
                slot.client.leftRoom(self.roomId)
        self.toObservers(tag("left", {"roomId": self.roomId}))
        self.removeRoom(self.roomId)
