"""One Software-Challenge game room: an automat machine from the first join to ``left``.

States (``docs/machines/`` draws them all)::

    waiting ─(full)─> greeting ─(welcome)─> starting ─(memento)─> announcing ─(moveRequest)─> awaitingMove
                           └─(paused room)─> pausedBeforeStart ─(step/resume)─> starting          │ move
        paused <─(paused)─ judging <──────────────────────────────────────────────────────────────┘
        (step/resume) ─> announcing <─(next)─ judging ─(game end, violation)─> over

A cancel, a player leaving, or a move nobody requested ends every started
state in ``over``.

Per client, as the official server: ``welcomeMessage`` (its team), the
``memento`` to both players and observers, ``moveRequest`` only to the
player to move; after each valid move the memento again, then the next
request or ``result`` and ``<left/>`` (players and observers).

Timing, as the official server (backend 26.1.0), so that a real ``socha``
player spends its 2 s on its move and not in the library: each packet to
a player is its own write, and a packet that must be read on its own —
the first memento after the welcome, the moveRequest after the memento —
goes out L{PACKET_GAP} later. The ``socha`` library handles one message per
loop turn and waits 0.1 s for *new* data before it looks at a second message
that came in the same read, so a welcome, memento and moveRequest written
together cost a player ~0.24 s of its 2 s; the official server leaves
12–90 ms there (a forced GC). The move clock starts when the moveRequest is
written and stops when the move has been read; a move after more than
2000 ms (whole milliseconds, as the official ``ActionTimeout``) is a soft
timeout, no move within 10 s a hard one. Every timer is the data of the
state that waits for it.
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
from velhanet.socha.xml import echo, errorPacket, resultElement, tag

SOFT_TIMEOUT_MS = 2000
HARD_TIMEOUT = 10.0
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


class Room(Protocol):
    def playerJoined(self, slot: Slot) -> None:
        "A client took this slot (the lobby chose it)."

    def move(self, client: Client, data: Element) -> None:
        "A move (room data of class move) from a player of this room."

    def pause(self) -> None:
        "Admin: request no further move until resumed or stepped."

    def resume(self) -> None:
        "Admin: go on."

    def step(self) -> None:
        "Admin: let one move be played in a paused room."

    def cancel(self) -> None:
        "Admin: end the game now."

    def playerLeft(self, client: Client) -> None:
        "A player closed its connection or sent ``<close/>``."

    def _full(self) -> None:
        "private: both slots are filled."

    def _greet(self) -> None:
        "private: the last ``<joined/>`` has had its own read: send the welcomes."

    def _begin(self) -> None:
        "private: judged: show the board and request the first move."

    def _beginPaused(self) -> None:
        "private: judged: the room starts paused; wait for step or resume."

    def _showBoard(self) -> None:
        "private: the welcome has had its own read: send the first memento."

    def _requestNow(self) -> None:
        "private: the memento has had its own read: send the moveRequest."

    def _hardTimeout(self) -> None:
        "private: no move within the hard limit."

    def _next(self) -> None:
        "private: judged: request the next move."

    def _hold(self) -> None:
        "private: judged: the room is paused; request nothing."

    def _finished(self) -> None:
        "private: judged: the result and ``<left/>`` are out."


@dataclass
class RoomCore:
    roomId: str
    adapter: GameAdapter
    clock: IReactorTime
    removeRoom: Callable[[str], None]
    observers: list[Client]
    slots: list[Slot] = field(default_factory=lambda: [Slot(0), Slot(1)])
    paused: bool = False
    """The administrator's wish: no new moveRequest until unpaused or stepped."""
    timeouts: bool = True
    packetGap: float = PACKET_GAP
    rng: random.Random = field(default_factory=random.Random)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.socha.room"))
    state: Any = None
    cancelReason: str = "Das Spiel wurde vom Administrator abgebrochen."
    """The result's reason when the room is cancelled: by an administrator, or as the server stops."""

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
        self.toPlayers(tag("data", {"class": "memento"}, self.adapter.stateElement(self.state)))

    def announcePause(self) -> None:
        self.toObservers(
            self.roomPacket(tag("data", {"class": "paused", "paused": "true" if self.paused else "false"}))
        )

    def mover(self) -> Slot | None:
        team = self.adapter.teamToMove(self.state)
        return None if team is None else self.slots[team]

    def teamOf(self, client: Client) -> int | None:
        for slot in self.slots:
            if slot.client is client:
                return slot.team
        return None

    # -- ending --------------------------------------------------------------------

    def finish(self, end: GameEnd | None, violator: int | None = None, reason: str = "") -> None:
        """Send the result (regular, or against a violator) and ``<left/>`` to all; free the room."""
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
        players = [(slot.displayName, TEAM_NAMES[slot.team], scores[slot.team]) for slot in self.slots]
        names = self.adapter.fragments[1:]
        self.toPlayers(resultElement(names, players, TEAM_NAMES[winner] if winner is not None else None, regular, text))
        self.log.info("room {room}: {reason}", room=self.roomId, reason=text)
        self.leaveAll()

    def leaveAll(self) -> None:
        """``<left/>`` to every player (who then closes) and observer (who stays connected)."""
        for slot in self.slots:
            if slot.client is not None:
                slot.client.leftRoom(self.roomId)
        self.toObservers(tag("left", {"roomId": self.roomId}))
        self.removeRoom(self.roomId)

    def violation(self, team: int, what: str) -> None:
        self.finish(None, team, f"{self.slots[team].name()} {what}")


# -- the data of the waiting states -------------------------------------------------


class _Timed:
    """The data of a state that holds a delayed call; every way out cancels it."""

    def cancel(self) -> None:
        raise NotImplementedError


@dataclass
class _Pending(_Timed):
    """A packet (memento or moveRequest) that waits for its own read."""

    call: IDelayedCall

    def cancel(self) -> None:
        if self.call.active():
            self.call.cancel()


def _afterJoined(inputs: Room, core: RoomCore) -> _Pending:
    return _Pending(core.clock.callLater(core.packetGap, inputs._greet))


def _afterWelcome(inputs: Room, core: RoomCore) -> _Pending:
    return _Pending(core.clock.callLater(core.packetGap, inputs._showBoard))


def _afterMemento(inputs: Room, core: RoomCore) -> _Pending:
    return _Pending(core.clock.callLater(core.packetGap, inputs._requestNow))


@dataclass
class _Request(_Timed):
    """The outstanding moveRequest: when it was written, and the hard limit."""

    slot: Slot
    requestedAt: float
    hardTimer: IDelayedCall | None

    def cancel(self) -> None:
        if self.hardTimer is not None and self.hardTimer.active():
            self.hardTimer.cancel()

    def elapsedMs(self, now: float) -> int:
        return int((now - self.requestedAt) * 1000)


def _requestMove(inputs: Room, core: RoomCore) -> _Request:
    slot = core.mover()
    assert slot is not None and slot.client is not None
    slot.client.sendPacket(core.roomPacket(tag("data", {"class": "moveRequest"})))
    timed = core.timeouts and slot.canTimeout
    timer = core.clock.callLater(HARD_TIMEOUT, inputs._hardTimeout) if timed else None
    return _Request(slot, core.clock.seconds(), timer)


# -- behaviours shared by several states ---------------------------------------------


def _unrequested(core: RoomCore, client: Client) -> None:
    """A move nobody asked for: a process violation of its sender."""
    team = core.teamOf(client)
    assert team is not None, "the lobby routes only its players' moves to a room"
    core.violation(team, "hat einen Zug gesendet, ohne dazu aufgefordert zu sein")


def _left(core: RoomCore, client: Client) -> None:
    team = core.teamOf(client)
    assert team is not None, "only players leave a room"
    core.slots[team].client = None
    core.violation(team, "hat das Spiel verlassen.")


def _cancelled(core: RoomCore) -> None:
    core.finish(None, None, core.cancelReason)


def _setPaused(core: RoomCore, paused: bool) -> None:
    core.paused = paused
    core.announcePause()


def _buildRoom() -> TypeMachine[Room, RoomCore]:
    builder = TypeMachineBuilder(Room, RoomCore)
    waiting = builder.state("waiting")
    greeting = builder.state("greeting", _afterJoined)
    pausedBeforeStart = builder.state("pausedBeforeStart")
    starting = builder.state("starting", _afterWelcome)
    announcing = builder.state("announcing", _afterMemento)
    awaitingMove = builder.state("awaitingMove", _requestMove)
    judging = builder.state("judging")
    paused = builder.state("paused")
    over = builder.state("over")

    for ignored in (Room.playerJoined, Room.move, Room.pause, Room.resume, Room.step, Room.cancel, Room.playerLeft):
        over.upon(ignored).loop().returns(None)

    # -- waiting for players --------------------------------------------------------

    @waiting.upon(Room.playerJoined).loop()
    def joined(inputs: Room, core: RoomCore, slot: Slot) -> None:
        if all(s.client is not None for s in core.slots):
            inputs._full()

    waiting.upon(Room._full).to(greeting).returns(None)

    @greeting.upon(Room._greet).to(judging)
    def welcome(inputs: Room, core: RoomCore, pending: _Pending) -> None:
        core.state = core.adapter.newGame(core.rng)
        for slot in core.slots:
            assert slot.client is not None
            slot.client.sendPacket(
                core.roomPacket(tag("data", {"class": "welcomeMessage", "color": TEAM_NAMES[slot.team]}))
            )
        if core.paused:
            inputs._beginPaused()
        else:
            inputs._begin()

    @greeting.upon(Room.playerLeft).to(waiting)
    def leftBeforeWelcome(inputs: Room, core: RoomCore, pending: _Pending, client: Client) -> None:
        pending.cancel()
        for slot in core.slots:
            if slot.client is client:
                slot.client = None

    @greeting.upon(Room.cancel).to(over)
    def cancelGreeting(inputs: Room, core: RoomCore, pending: _Pending) -> None:
        pending.cancel()
        core.leaveAll()

    @waiting.upon(Room.move).loop()
    def moveBeforeStart(inputs: Room, core: RoomCore, client: Client, data: Element) -> None:
        client.sendPacket(errorPacket("the game has not started yet", data))

    @greeting.upon(Room.move).loop()
    def moveBeforeWelcome(inputs: Room, core: RoomCore, pending: _Pending, client: Client, data: Element) -> None:
        client.sendPacket(errorPacket("the game has not started yet", data))

    @waiting.upon(Room.pause).loop()
    def pauseWaiting(inputs: Room, core: RoomCore) -> None:
        _setPaused(core, True)

    @waiting.upon(Room.resume).loop()
    def resumeWaiting(inputs: Room, core: RoomCore) -> None:
        _setPaused(core, False)

    waiting.upon(Room.step).loop().returns(None)

    @waiting.upon(Room.cancel).to(over)
    def cancelWaiting(inputs: Room, core: RoomCore) -> None:
        core.leaveAll()

    @waiting.upon(Room.playerLeft).loop()
    def leftWaiting(inputs: Room, core: RoomCore, client: Client) -> None:
        for slot in core.slots:
            if slot.client is client:
                slot.client = None
        if all(slot.client is None and slot.reservation is None for slot in core.slots):
            core.removeRoom(core.roomId)

    # -- started, paused before anyone saw the board -----------------------------------

    pausedBeforeStart.upon(Room.step).to(starting).returns(None)  # shows the board, then one move

    @pausedBeforeStart.upon(Room.resume).to(starting)
    def resumeFirst(inputs: Room, core: RoomCore) -> None:
        _setPaused(core, False)

    @pausedBeforeStart.upon(Room.pause).loop()
    @paused.upon(Room.pause).loop()
    def pauseAgain(inputs: Room, core: RoomCore) -> None:
        _setPaused(core, True)

    # -- the board and the request, each in a read of its own ---------------------------

    @starting.upon(Room._showBoard).to(announcing)
    def showBoard(inputs: Room, core: RoomCore, pending: _Pending) -> None:
        core.sendMemento()

    @announcing.upon(Room._requestNow).to(awaitingMove)
    def request(inputs: Room, core: RoomCore, pending: _Pending) -> None:
        """The moveRequest itself is written by L{awaitingMove}'s data factory, which starts the clock."""

    for announcing_ in (greeting, starting, announcing):

        @announcing_.upon(Room.pause).loop()
        def pauseSoon(inputs: Room, core: RoomCore, pending: _Pending) -> None:
            """The move being announced is still played; the room holds after it."""
            _setPaused(core, True)

        @announcing_.upon(Room.resume).loop()
        def resumeSoon(inputs: Room, core: RoomCore, pending: _Pending) -> None:
            _setPaused(core, False)

        announcing_.upon(Room.step).loop()(_ignoreStep)

    # -- a move is due ---------------------------------------------------------------

    @awaitingMove.upon(Room.move).to(judging)
    def move(inputs: Room, core: RoomCore, request: _Request, client: Client, data: Element) -> None:
        request.cancel()
        if client is not request.slot.client:
            _unrequested(core, client)
            inputs._finished()
            return
        slot = request.slot
        elapsed = request.elapsedMs(core.clock.seconds())
        if core.timeouts and slot.canTimeout and elapsed > SOFT_TIMEOUT_MS:
            core.violation(slot.team, "hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht.")
            inputs._finished()
            return
        try:
            after = core.adapter.apply(core.state, core.adapter.parseMove(data))
        except IllegalMove as error:
            message = f"Ungueltiger Zug von '{slot.displayName}'.\n{error}"
            core.toPlayers(tag("data", {"class": "error", "message": message}, echo(data, "originalMessage")))
            core.violation(slot.team, f"hat einen ungueltigen Zug gesendet: {error}")
            inputs._finished()
            return
        core.state = after
        core.sendMemento()
        end = core.adapter.end(after)
        if end is not None:
            core.finish(end)
            inputs._finished()
        elif core.paused:
            inputs._hold()
        else:
            inputs._next()

    @awaitingMove.upon(Room._hardTimeout).to(over)
    def hardTimeout(inputs: Room, core: RoomCore, request: _Request) -> None:
        core.violation(request.slot.team, "hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet.")

    @awaitingMove.upon(Room.pause).loop()
    def pauseWhileRequested(inputs: Room, core: RoomCore, request: _Request) -> None:
        """The outstanding move is still played; the room holds after it."""
        _setPaused(core, True)

    @awaitingMove.upon(Room.resume).loop()
    def resumeWhileRequested(inputs: Room, core: RoomCore, request: _Request) -> None:
        _setPaused(core, False)

    awaitingMove.upon(Room.step).loop()(_ignoreStep)

    judging.upon(Room._begin).to(starting).returns(None)
    judging.upon(Room._beginPaused).to(pausedBeforeStart).returns(None)
    judging.upon(Room._next).to(announcing).returns(None)
    judging.upon(Room._hold).to(paused).returns(None)
    judging.upon(Room._finished).to(over).returns(None)

    # -- paused between moves ----------------------------------------------------------

    paused.upon(Room.step).to(announcing).returns(None)

    @paused.upon(Room.resume).to(announcing)
    def resumePaused(inputs: Room, core: RoomCore) -> None:
        _setPaused(core, False)

    # -- the ends every started state shares ----------------------------------------------

    def cancelPlain(inputs: Room, core: RoomCore) -> None:
        _cancelled(core)

    def leftPlain(inputs: Room, core: RoomCore, client: Client) -> None:
        _left(core, client)

    def unrequestedPlain(inputs: Room, core: RoomCore, client: Client, data: Element) -> None:
        _unrequested(core, client)

    for plain in (pausedBeforeStart, paused):
        plain.upon(Room.cancel).to(over)(cancelPlain)
        plain.upon(Room.playerLeft).to(over)(leftPlain)
        plain.upon(Room.move).to(over)(unrequestedPlain)

    def cancelTimed(inputs: Room, core: RoomCore, data: _Timed) -> None:
        data.cancel()
        _cancelled(core)

    def leftTimed(inputs: Room, core: RoomCore, data: _Timed, client: Client) -> None:
        data.cancel()
        _left(core, client)

    def unrequestedTimed(inputs: Room, core: RoomCore, pending: _Pending, client: Client, data: Element) -> None:
        pending.cancel()
        _unrequested(core, client)

    for timed in (starting, announcing, awaitingMove):
        timed.upon(Room.cancel).to(over)(cancelTimed)
        timed.upon(Room.playerLeft).to(over)(leftTimed)
    for early in (starting, announcing):
        early.upon(Room.move).to(over)(unrequestedTimed)

    return builder.build()


def _ignoreStep(inputs: Room, core: RoomCore, data: _Timed) -> None:
    """A step while a move is already on its way: nothing more to allow."""


RoomMachine = _buildRoom()
