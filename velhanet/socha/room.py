"""One Software-Challenge game room: an automat machine from the first join to ``left``.

States: ``waiting`` (slots not yet filled) → ``running`` → ``over``. A
paused room is ``running`` with no move requested: ``step`` requests one
move, unpausing requests the next and goes on.

Per client, as the official server: ``welcomeMessage`` (its team), the
``memento`` to both players and observers, ``moveRequest`` only to the
player to move; after each valid move the memento again, then the next
request or ``result`` and ``<left/>``. A move after the 2 s soft limit,
no move within the 10 s hard limit, an invalid move, a move out of turn,
and a player leaving end the game with a non-regular result against the
violator.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from xml.etree.ElementTree import Element

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from velhanet.games.interfaces import IllegalMove
from velhanet.games.piranhas import TEAM_NAMES
from velhanet.socha.games import GameAdapter, GameEnd
from velhanet.socha.xml import echo, errorPacket, tag

SOFT_TIMEOUT = 2.0
HARD_TIMEOUT = 10.0


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


class Room(Protocol):
    def playerJoined(self, slot: Slot) -> None:
        "A client took this slot (the lobby chose it)."

    def move(self, client: Client, data: Element) -> None:
        "A move (room data of class move) from a client of this room."

    def pause(self, paused: bool) -> None:
        "Admin: pause or resume."

    def step(self) -> None:
        "Admin: let one move be played in a paused room."

    def cancel(self) -> None:
        "Admin: end the game now."

    def playerLeft(self, client: Client) -> None:
        "A player closed its connection or sent ``<close/>``."

    def _start(self) -> None:
        "private: both slots are filled."

    def _hardTimeout(self) -> None:
        "private: no move within the hard limit."

    def _ended(self) -> None:
        "private: the result has been sent."


@dataclass
class RoomCore:
    roomId: str
    adapter: GameAdapter
    clock: IReactorTime
    removeRoom: Callable[[str], None]
    observers: list[Client]
    slots: list[Slot] = field(default_factory=lambda: [Slot(0), Slot(1)])
    paused: bool = False
    timeouts: bool = True
    rng: random.Random = field(default_factory=random.Random)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.socha.room"))
    state: Any = None
    requestedAt: float | None = None
    hardTimer: IDelayedCall | None = None
    stepsAllowed: int = 0
    mementoSent: bool = False
    """False while a room that started paused has not shown its players the first position."""

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

    def sendMemento(self) -> None:
        self.mementoSent = True
        self.toPlayers(tag("data", {"class": "memento"}, self.adapter.stateElement(self.state)))

    def resume(self, inputs: Room) -> None:
        """Show the first position if the players have not seen it, then request a move."""
        if self.requestedAt is None and self.adapter.teamToMove(self.state) is not None:
            if not self.mementoSent:
                self.sendMemento()
            self.nextRequest(inputs)

    def requestMove(self) -> None:
        team = self.adapter.teamToMove(self.state)
        if team is None:
            return
        slot = self.slots[team]
        assert slot.client is not None
        slot.client.sendPacket(self.roomPacket(tag("data", {"class": "moveRequest"})))
        self.requestedAt = self.clock.seconds()

    def armTimer(self, inputs: Room) -> None:
        team = self.adapter.teamToMove(self.state)
        if team is not None and self.timeouts and self.slots[team].canTimeout:
            self.hardTimer = self.clock.callLater(HARD_TIMEOUT, inputs._hardTimeout)

    def cancelTimer(self) -> None:
        if self.hardTimer is not None and self.hardTimer.active():
            self.hardTimer.cancel()
        self.hardTimer = None

    def nextRequest(self, inputs: Room) -> None:
        """Request the next move unless paused (a ``step`` allows one)."""
        if self.paused and self.stepsAllowed <= 0:
            return
        if self.paused:
            self.stepsAllowed -= 1
        self.requestMove()
        self.armTimer(inputs)

    # -- ending --------------------------------------------------------------------

    def finish(self, inputs: Room, end: GameEnd | None, violator: int | None = None, reason: str = "") -> None:
        """Send the result (regular, or against a violator) and ``<left/>``; free the room."""
        self.cancelTimer()
        self.requestedAt = None
        parts = self.adapter.partsFor(self.state) if self.state is not None else (0, 0)
        if violator is not None:
            winner: int | None = 1 - violator
            regular = False
            scores = [[2, parts[0]], [2, parts[1]]]
            scores[violator] = [0, 0]
            text = reason
        elif end is not None:
            winner = end.winner
            regular = True
            points = [1, 1] if winner is None else [2 if team == winner else 0 for team in (0, 1)]
            scores = [[points[0], end.swarms[0]], [points[1], end.swarms[1]]]
            text = end.reason % self.slots[winner].name() if winner is not None and "%s" in end.reason else end.reason
        else:
            winner, regular, scores, text = None, False, [[0, parts[0]], [0, parts[1]]], reason
        self.toPlayers(self.resultElement(winner, regular, text, scores))
        self.log.info("room {room}: {reason}", room=self.roomId, reason=text)
        for slot in self.slots:
            if slot.client is not None:
                slot.client.leftRoom(self.roomId)
        self.removeRoom(self.roomId)
        inputs._ended()

    def resultElement(self, winner: int | None, regular: bool, reason: str, scores: list[list[int]]) -> Element:
        definition = tag(
            "definition",
            None,
            *(
                tag(
                    "fragment",
                    {"name": name},
                    tag("aggregation", None, aggregation),
                    tag("relevantForRanking", None, "true"),
                )
                for name, aggregation in (("Siegpunkte", "SUM"), *self.adapter.fragments[1:])
            ),
        )
        entries = tag(
            "scores",
            None,
            *(
                tag(
                    "entry",
                    None,
                    tag("player", {"name": slot.displayName or None, "team": TEAM_NAMES[slot.team]}),
                    tag("score", None, *(tag("part", None, str(part)) for part in scores[slot.team])),
                )
                for slot in self.slots
            ),
        )
        winnerElement = tag(
            "winner",
            {
                "team": TEAM_NAMES[winner] if winner is not None else None,
                "regular": "true" if regular else "false",
                "reason": reason,
            },
        )
        return tag("data", {"class": "result"}, definition, entries, winnerElement)

    def teamOf(self, client: Client) -> int | None:
        for slot in self.slots:
            if slot.client is client:
                return slot.team
        return None


def _buildRoom() -> TypeMachine[Room, RoomCore]:
    builder = TypeMachineBuilder(Room, RoomCore)
    waiting = builder.state("waiting")
    running = builder.state("running")
    over = builder.state("over")

    for ignored in (
        Room.playerJoined,
        Room.move,
        Room.pause,
        Room.step,
        Room.cancel,
        Room.playerLeft,
        Room._start,
        Room._hardTimeout,
        Room._ended,
    ):
        over.upon(ignored).loop().returns(None)
    waiting.upon(Room._ended).to(over).returns(None)
    running.upon(Room._ended).to(over).returns(None)

    @waiting.upon(Room.playerJoined).loop()
    def joined(inputs: Room, core: RoomCore, slot: Slot) -> None:
        if all(s.client is not None for s in core.slots):
            inputs._start()

    @waiting.upon(Room._start).to(running)
    def start(inputs: Room, core: RoomCore) -> None:
        core.state = core.adapter.newGame(core.rng)
        for slot in core.slots:
            assert slot.client is not None
            slot.client.sendPacket(
                core.roomPacket(tag("data", {"class": "welcomeMessage", "color": TEAM_NAMES[slot.team]}))
            )
        if not core.paused:
            core.sendMemento()
            core.nextRequest(inputs)

    @waiting.upon(Room.move).loop()
    def moveBeforeStart(inputs: Room, core: RoomCore, client: Client, data: Element) -> None:
        client.sendPacket(errorPacket("the game has not started yet", data))

    @waiting.upon(Room.pause).loop()
    def pauseWaiting(inputs: Room, core: RoomCore, paused: bool) -> None:
        core.paused = paused
        core.toObservers(core.roomPacket(tag("data", {"class": "paused", "paused": "true" if paused else "false"})))

    waiting.upon(Room.step).loop().returns(None)

    @waiting.upon(Room.cancel).loop()
    def cancelWaiting(inputs: Room, core: RoomCore) -> None:
        for slot in core.slots:
            if slot.client is not None:
                slot.client.leftRoom(core.roomId)
        core.removeRoom(core.roomId)
        inputs._ended()

    @waiting.upon(Room.playerLeft).loop()
    def leftWaiting(inputs: Room, core: RoomCore, client: Client) -> None:
        for slot in core.slots:
            if slot.client is client:
                slot.client = None
        if all(slot.client is None and slot.reservation is None for slot in core.slots):
            core.removeRoom(core.roomId)
            inputs._ended()

    @running.upon(Room.move).loop()
    def move(inputs: Room, core: RoomCore, client: Client, data: Element) -> None:
        team = core.teamOf(client)
        toMove = core.adapter.teamToMove(core.state)
        if team is None:
            client.sendPacket(errorPacket("you are not a player of this room", data))
            return
        name = core.slots[team].name()
        if team != toMove or core.requestedAt is None:
            core.finish(inputs, None, team, f"{name} hat einen Zug gesendet, ohne dazu aufgefordert zu sein")
            return
        slot = core.slots[team]
        if core.timeouts and slot.canTimeout and core.clock.seconds() - core.requestedAt > SOFT_TIMEOUT:
            core.finish(
                inputs,
                None,
                team,
                f"{name} hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht.",
            )
            return
        try:
            parsed = core.adapter.parseMove(data)
            after = core.adapter.apply(core.state, parsed)
        except IllegalMove as error:
            message = f"Ungueltiger Zug von '{slot.displayName}'.\n{error}"
            core.toPlayers(
                tag("data", {"class": "error", "message": message}, echo(data, "originalMessage")), observers=True
            )
            core.finish(inputs, None, team, f"{name} hat einen ungueltigen Zug gesendet: {error}")
            return
        core.cancelTimer()
        core.requestedAt = None
        core.state = after
        core.sendMemento()
        end = core.adapter.end(after)
        if end is not None:
            core.finish(inputs, end)
            return
        core.nextRequest(inputs)

    @running.upon(Room._hardTimeout).loop()
    def hardTimeout(inputs: Room, core: RoomCore) -> None:
        core.hardTimer = None
        team = core.adapter.teamToMove(core.state)
        assert team is not None
        core.finish(
            inputs,
            None,
            team,
            f"{core.slots[team].name()} hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet.",
        )

    @running.upon(Room.pause).loop()
    def pause(inputs: Room, core: RoomCore, paused: bool) -> None:
        wasPaused, core.paused = core.paused, paused
        core.toObservers(core.roomPacket(tag("data", {"class": "paused", "paused": "true" if paused else "false"})))
        if wasPaused and not paused:
            core.resume(inputs)

    @running.upon(Room.step).loop()
    def step(inputs: Room, core: RoomCore) -> None:
        if core.paused and core.requestedAt is None:
            core.stepsAllowed += 1
            core.resume(inputs)

    @running.upon(Room.cancel).loop()
    def cancel(inputs: Room, core: RoomCore) -> None:
        core.finish(inputs, None, None, "Das Spiel wurde vom Administrator abgebrochen.")

    @running.upon(Room.playerLeft).loop()
    def left(inputs: Room, core: RoomCore, client: Client) -> None:
        team = core.teamOf(client)
        if team is None:
            return
        leaver = core.slots[team]
        leaver.client = None
        core.finish(inputs, None, team, f"{leaver.name()} hat das Spiel verlassen.")

    return builder.build()


RoomMachine = _buildRoom()
