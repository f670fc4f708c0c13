"""One Software-Challenge game room: an automat machine from the first join to ``left``.

States (``docs/machines/`` draws them all)::

    waiting ⇄(pause/resume)⇄ waitingPaused
       └──────(full)───────────┴─> greeting ─(welcome)─> starting ─(memento)─> announcing ─(moveRequest)─> awaitingMove
                           └─(paused room)─> pausedBeforeStart ─(step/resume)─> starting                      │ move
        paused <─(hold)─ judging <────────────────────────────────────────────────────────────────────────────┘
        (step/resume) ─> announcing <─(go)─ judging ─(game end, violation)─> over

A cancel, a player leaving, or a move nobody requested ends every started
state in ``over``. The administrator's pause is a state where nothing is
awaited (``waitingPaused``, ``pausedBeforeStart``, ``paused``); where a
packet or a move is on its way, the wish to hold after that move is the
``hold`` of the state's data, handed on to the next state as an input
argument, and the room enters ``paused`` once the move is judged.

Per client, as the official server: ``welcomeMessage`` (its team), the
``memento`` to both players and observers, ``moveRequest`` only to the
player to move; after each valid move the memento again, then the next
request or ``result`` and ``<left/>`` (players and observers).

Timing, as the official server (``docs/socha.md``, *the timing model*): each packet to a player is its
own write; the first memento after the welcome and the moveRequest after the memento go out L{PACKET_GAP}
later, in a read of their own. The move clock runs from the moveRequest's write to the move's read: over
2000 whole ms is a soft timeout, no move within 10 s a hard one; every timer is the data of the state that
waits for it.

The machine's core, L{RoomCore}, holds the seats (two players, the observers) and writes
everything the room sends them: the machine decides, the core writes the packets, the result and
``<left/>``. A test gives the machine a core whose clients are recording fakes (any object with
``sendPacket`` and ``leftRoom``).
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import Place, squareName
from velhanet.games.piranhas import TEAM_NAMES
from velhanet.games.piranhasnotation import moveNotation
from velhanet.i18n import _
from velhanet.indexedmachine import indexed
from velhanet.socha.games import GameEnd, GameType, HostedGame, KInARowGame, PiranhasGame
from velhanet.socha.wire import LEFT_THE_GAME, RoomResult, echo, errorPacket, resultData, tag
from velhanet.watching import NO_WATCHER, UNWATCHED, GameWatcher, WatchedGame

PACKET_GAP = 0.05
"""Seconds between two packets to one player that must arrive in separate reads."""


class Participant(typing.Protocol):
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
    client: Participant | None = None

    def name(self) -> str:
        return self.displayName or TEAM_NAMES[self.team]


def position(game: HostedGame) -> object:
    """A hosted game's engine state, for its spectators (L{velhanet.watching})."""
    if isinstance(game, PiranhasGame | KInARowGame):
        return game.state
    return None


def moveText(game: HostedGame) -> str:
    """The move just played, for the spectators' move list, on the squares the site's board labels.

    Piranhas as the Software-Challenge's rules write a move, ``A4 → C4`` (``docs/socha.md``); a velhanet game's
    stone as gomoku players write it, ``h8``.
    """
    if isinstance(game, PiranhasGame):
        move = game.state.lastMove
        return "?" if move is None or game.before is None else moveNotation(game.before.cells, move)
    if isinstance(game, KInARowGame):
        stone = game.state.lastMove
        return squareName(game.state.rules, stone.x, stone.y) if isinstance(stone, Place) else "pass"
    return "?"


@dataclass
class RoomCore:
    roomId: str
    gameType: GameType
    clock: IReactorTime
    removeRoom: Callable[[str], None]
    observers: list[Participant]
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

    def teamOf(self, client: Participant) -> int | None:
        for slot in self.slots:
            if slot.client is client:
                return slot.team
        return None

    def clear(self, client: Participant) -> None:
        for slot in self.slots:
            if slot.client is client:
                slot.client = None

    def played(self, game: HostedGame) -> None:
        """A move was judged legal: the spectators' site hears of it, the players and observers see the board."""
        if self.watched is not UNWATCHED:  # the move's text costs a walk of its line: only for a watched game
            self.watched.moved(moveText(game))
        self.sendMemento(game)

    def startWatching(self, game: HostedGame) -> None:
        """Report the game that starts to the spectators' site (nothing without ``--web``)."""
        players = [slot.name() for slot in self.slots]
        self.watched = self.watcher.started(
            "socha", self.gameType.gameType, players, lambda: position(game), hidden=self.hidden
        )

    # -- ending --------------------------------------------------------------------

    def finish(self, verdict: RoomResult) -> None:
        """Send the result and ``<left/>`` to all; free the room."""
        names = (self.slots[0].displayName, self.slots[1].displayName)
        self.toPlayers(resultData(self.gameType.fragments, names, TEAM_NAMES, verdict))
        self.log.info(_("room {room}: {reason}"), room=self.roomId, reason=verdict.reason)
        if verdict.winner is not None:
            ending = _("{player} wins: {reason}").format(
                player=self.slots[verdict.winner].name(), reason=verdict.reason
            )
        else:
            ending = verdict.reason
        self.watched.ended(ending)
        self.leaveAll()

    def ended(self, end: GameEnd) -> None:
        """The game ended by its rules."""
        winner = end.winner
        text = end.reason % self.slots[winner].name() if winner is not None and "%s" in end.reason else end.reason
        self.finish(RoomResult(winner, True, text, end.swarms))

    def violation(self, team: int, what: str) -> None:
        self.finish(RoomResult(1 - team, False, f"{self.slots[team].name()} {what}", self.parts(), violator=team))

    def unrequested(self, client: Participant) -> None:
        """A move nobody asked for: a process violation of its sender."""
        team = self.teamOf(client)
        assert team is not None, "the lobby routes only its players' moves to a room"
        self.violation(team, "hat einen Zug gesendet, ohne dazu aufgefordert zu sein")

    def playerLeft(self, client: Participant) -> None:
        team = self.teamOf(client)
        assert team is not None, "only players leave a room"
        self.slots[team].client = None
        self.violation(team, LEFT_THE_GAME)

    def cancelled(self, reason: str) -> None:
        self.finish(RoomResult(None, False, reason, self.parts()))

    def parts(self) -> tuple[int, int]:
        return self.game.parts() if self.game is not None else (0, 0)

    def leaveAll(self) -> None:
        """``<left/>`` to every player (who then closes) and observer (who stays connected)."""
        for slot in self.slots:
            if slot.client is not None:
                slot.client.leftRoom(self.roomId)
        self.toObservers(tag("left", {"roomId": self.roomId}))
        self.removeRoom(self.roomId)


SOFT_TIMEOUT_MS = 2000
HARD_TIMEOUT = 10.0


class Room(typing.Protocol):
    def playerJoined(self, slot: Slot) -> None:
        "A client took this slot (the lobby chose it)."

    def move(self, client: Participant, data: Element) -> None:
        "A move (room data of class move) from a player of this room."

    def pause(self) -> None:
        "Admin: request no further move until resumed or stepped."

    def resume(self) -> None:
        "Admin: go on."

    def step(self) -> None:
        "Admin: let one move be played in a paused room."

    def cancel(self, reason: str) -> None:
        "Admin, or the server stopping: end the game now, ``reason`` in the result."

    def playerLeft(self, client: Participant) -> None:
        "A player closed its connection or sent ``<close/>``."

    def _full(self, hold: bool) -> None:
        "private: both slots are filled; ``hold``: the room is paused."

    def _greet(self, hold: bool) -> None:
        "private: the last ``<joined/>`` has had its own read: send the welcomes."

    def _reopen(self) -> None:
        "private: judged: a player left before the welcome; wait for another."

    def _reopenPaused(self) -> None:
        "private: the same, in a paused room."

    def _begin(self, hold: bool) -> None:
        "private: judged: show the board and request the first move."

    def _beginPaused(self) -> None:
        "private: judged: the room starts paused; wait for step or resume."

    def _showBoard(self, hold: bool) -> None:
        "private: the welcome has had its own read: send the first memento."

    def _requestNow(self, hold: bool) -> None:
        "private: the memento has had its own read: send the moveRequest."

    def _hardTimeout(self) -> None:
        "private: no move within the hard limit."

    def _go(self, hold: bool) -> None:
        "private: request the next move; ``hold``: pause again after it (a step)."

    def _hold(self) -> None:
        "private: judged: the room is paused; request nothing."

    def _finished(self) -> None:
        "private: judged: the result and ``<left/>`` are out."


class _OnItsWay:
    """The data of a state where a packet or a move is on its way: timers, and the wish to hold after it.

    automat keeps a state's data after the machine left it for a state without data (``over``), and this data
    refers to the machine (its timers call the machine's inputs): L{cancel} lets go of those references, so that
    a finished room is freed at once, not left to the cyclic collector.
    """

    hold: bool
    """The administrator paused the room: it holds after the coming move."""

    def cancel(self) -> None:
        raise NotImplementedError


@dataclass
class _Pending(_OnItsWay):
    """A packet (welcome, memento, moveRequest) that waits for its own read."""

    hold: bool
    then: Callable[[bool], None]
    call: IDelayedCall | None = None

    def cancel(self) -> None:
        if self.call is not None and self.call.active():
            self.call.cancel()
        self.call, self.then = None, _nothing


def _nothing(hold: bool) -> None:
    """A cancelled packet's continuation."""


def _fire(pending: _Pending) -> None:
    then, pending.call, pending.then = pending.then, None, _nothing
    then(pending.hold)


def _afterGap(core: RoomCore, then: Callable[[bool], None], hold: bool) -> _Pending:
    pending = _Pending(hold, then)
    pending.call = core.clock.callLater(core.packetGap, _fire, pending)
    return pending


def _afterJoined(inputs: Room, core: RoomCore, hold: bool) -> _Pending:
    return _afterGap(core, inputs._greet, hold)


def _afterWelcome(inputs: Room, core: RoomCore, hold: bool) -> _Pending:
    return _afterGap(core, inputs._showBoard, hold)


def _afterMemento(inputs: Room, core: RoomCore, hold: bool) -> _Pending:
    return _afterGap(core, inputs._requestNow, hold)


@dataclass
class _Request(_OnItsWay):
    """The outstanding moveRequest: when it was written, the hard limit, and the hold after it."""

    slot: Slot
    requestedAt: float
    hardTimer: IDelayedCall | None
    hold: bool

    def cancel(self) -> None:
        if self.hardTimer is not None and self.hardTimer.active():
            self.hardTimer.cancel()
        self.hardTimer = None


def _requestMove(inputs: Room, core: RoomCore, hold: bool) -> _Request:
    slot = core.mover()
    assert slot is not None and slot.client is not None
    slot.client.sendPacket(core.roomPacket(tag("data", {"class": "moveRequest"})))
    timed = core.timeouts and slot.canTimeout
    timer = core.clock.callLater(HARD_TIMEOUT * core.timeScale, inputs._hardTimeout) if timed else None
    return _Request(slot, core.clock.seconds(), timer, hold)


def _judge(inputs: Room, core: RoomCore, request: _Request, client: Participant, data: Element) -> None:
    """The requested player's move: in time, legal, and then the end, a hold, or the next request."""
    request.cancel()
    slot, game = request.slot, core.game
    assert game is not None
    if client is not slot.client:
        core.unrequested(client)
        inputs._finished()
        return
    elapsed = int((core.clock.seconds() - request.requestedAt) * 1000)
    if core.timeouts and slot.canTimeout and elapsed > SOFT_TIMEOUT_MS * core.timeScale:
        core.violation(slot.team, "hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht.")
        inputs._finished()
        return
    try:
        game.play(data)
    except IllegalMove as error:
        message = f"Ungueltiger Zug von '{slot.displayName}'.\n{error}"
        core.toPlayers(tag("data", {"class": "error", "message": message}, echo(data, "originalMessage")))
        core.violation(slot.team, f"hat einen ungueltigen Zug gesendet: {error}")
        inputs._finished()
        return
    core.played(game)
    end = game.end()
    if end is not None:
        core.ended(end)
        inputs._finished()
    elif request.hold:
        inputs._hold()
    else:
        inputs._go(False)


def _buildRoom() -> tuple[TypeMachine[Room, RoomCore], Callable[[RoomCore], Room]]:
    """The room machine, and how to open a room that waits paused."""

    def _ignoreStep(inputs: Room, core: RoomCore, data: _OnItsWay) -> None:
        """A step while a move is already on its way: nothing more to allow."""

    def _holdAfter(inputs: Room, core: RoomCore, data: _OnItsWay) -> None:
        """The move on its way is still played; the room holds after it."""
        data.hold = True
        core.announcePause(True)

    def _goOnAfter(inputs: Room, core: RoomCore, data: _OnItsWay) -> None:
        data.hold = False
        core.announcePause(False)

    def _announcePaused(inputs: Room, core: RoomCore) -> None:
        core.announcePause(True)

    def _announceResumed(inputs: Room, core: RoomCore) -> None:
        core.announcePause(False)

    def _stepOnce(inputs: Room, core: RoomCore) -> None:
        """One move, then paused again."""
        inputs._go(True)

    def _resumeNow(inputs: Room, core: RoomCore) -> None:
        core.announcePause(False)
        inputs._go(False)

    def _notStarted(inputs: Room, core: RoomCore, client: Participant, data: Element) -> None:
        client.sendPacket(errorPacket("the game has not started yet", data))

    def _leftWaiting(inputs: Room, core: RoomCore, client: Participant) -> None:
        core.clear(client)
        if all(slot.client is None and slot.reservation is None for slot in core.slots):
            core.removeRoom(core.roomId)

    def _cancelWaiting(inputs: Room, core: RoomCore, reason: str) -> None:
        core.leaveAll()

    def _cancelPlain(inputs: Room, core: RoomCore, reason: str) -> None:
        core.cancelled(reason)

    def _leftPlain(inputs: Room, core: RoomCore, client: Participant) -> None:
        core.playerLeft(client)

    def _unrequestedPlain(inputs: Room, core: RoomCore, client: Participant, data: Element) -> None:
        core.unrequested(client)

    def _cancelTimed(inputs: Room, core: RoomCore, data: _OnItsWay, reason: str) -> None:
        data.cancel()
        core.cancelled(reason)

    def _leftTimed(inputs: Room, core: RoomCore, data: _OnItsWay, client: Participant) -> None:
        data.cancel()
        core.playerLeft(client)

    def _unrequestedTimed(inputs: Room, core: RoomCore, pending: _Pending, client: Participant, data: Element) -> None:
        pending.cancel()
        core.unrequested(client)

    builder = TypeMachineBuilder(Room, RoomCore)
    waiting = builder.state("waiting")
    waitingPaused = builder.state("waitingPaused")
    greeting = builder.state("greeting", _afterJoined)
    pausedBeforeStart = builder.state("pausedBeforeStart")
    starting = builder.state("starting", _afterWelcome)
    announcing = builder.state("announcing", _afterMemento)
    awaitingMove = builder.state("awaitingMove", _requestMove)
    judging = builder.state("judging")
    paused = builder.state("paused")
    over = builder.state("over")

    for _ignored in (Room.playerJoined, Room.move, Room.pause, Room.resume, Room.step, Room.cancel, Room.playerLeft):
        over.upon(_ignored).loop().returns(None)

    # -- waiting for players -------------------------------------------------------------

    @waiting.upon(Room.playerJoined).loop()
    def _joined(inputs: Room, core: RoomCore, slot: Slot) -> None:
        if all(s.client is not None for s in core.slots):
            inputs._full(False)

    @waitingPaused.upon(Room.playerJoined).loop()
    def _joinedPaused(inputs: Room, core: RoomCore, slot: Slot) -> None:
        if all(s.client is not None for s in core.slots):
            inputs._full(True)

    waiting.upon(Room.pause).to(waitingPaused)(_announcePaused)
    waitingPaused.upon(Room.resume).to(waiting)(_announceResumed)
    waiting.upon(Room.resume).loop()(_announceResumed)
    waitingPaused.upon(Room.pause).loop()(_announcePaused)
    for _open in (waiting, waitingPaused):
        _open.upon(Room._full).to(greeting).returns(None)
        _open.upon(Room.move).loop()(_notStarted)
        _open.upon(Room.step).loop().returns(None)
        _open.upon(Room.cancel).to(over)(_cancelWaiting)
        _open.upon(Room.playerLeft).loop()(_leftWaiting)

    @greeting.upon(Room._greet).to(judging)
    def _welcome(inputs: Room, core: RoomCore, pending: _Pending, hold: bool) -> None:
        core.game = core.gameType.newGame(core.rng)
        core.startWatching(core.game)
        for slot in core.slots:
            assert slot.client is not None
            slot.client.sendPacket(
                core.roomPacket(tag("data", {"class": "welcomeMessage", "color": TEAM_NAMES[slot.team]}))
            )
        if hold:
            inputs._beginPaused()
        else:
            inputs._begin(False)

    @greeting.upon(Room.playerLeft).to(judging)
    def _leftBeforeWelcome(inputs: Room, core: RoomCore, pending: _Pending, client: Participant) -> None:
        pending.cancel()
        core.clear(client)
        if pending.hold:
            inputs._reopenPaused()
        else:
            inputs._reopen()

    @greeting.upon(Room.cancel).to(over)
    def _cancelGreeting(inputs: Room, core: RoomCore, pending: _Pending, reason: str) -> None:
        pending.cancel()
        core.leaveAll()

    @greeting.upon(Room.move).loop()
    def _moveBeforeWelcome(inputs: Room, core: RoomCore, pending: _Pending, client: Participant, data: Element) -> None:
        client.sendPacket(errorPacket("the game has not started yet", data))

    # -- judging: where a behaviour's decision becomes the next state ----------------------

    judging.upon(Room._reopen).to(waiting).returns(None)
    judging.upon(Room._reopenPaused).to(waitingPaused).returns(None)
    judging.upon(Room._begin).to(starting).returns(None)
    judging.upon(Room._beginPaused).to(pausedBeforeStart).returns(None)
    judging.upon(Room._go).to(announcing).returns(None)
    judging.upon(Room._hold).to(paused).returns(None)
    judging.upon(Room._finished).to(over).returns(None)

    # -- paused: nothing is awaited --------------------------------------------------------

    pausedBeforeStart.upon(Room._go).to(starting).returns(None)  # shows the board, then one move
    paused.upon(Room._go).to(announcing).returns(None)
    for _still in (pausedBeforeStart, paused):
        _still.upon(Room.step).loop()(_stepOnce)
        _still.upon(Room.resume).loop()(_resumeNow)
        _still.upon(Room.pause).loop()(_announcePaused)
        _still.upon(Room.cancel).to(over)(_cancelPlain)
        _still.upon(Room.playerLeft).to(over)(_leftPlain)
        _still.upon(Room.move).to(over)(_unrequestedPlain)

    # -- the board and the request, each in a read of its own ------------------------------

    @starting.upon(Room._showBoard).to(announcing)
    def _showBoard(inputs: Room, core: RoomCore, pending: _Pending, hold: bool) -> None:
        assert core.game is not None
        core.sendMemento(core.game)

    @announcing.upon(Room._requestNow).to(awaitingMove)
    def _request(inputs: Room, core: RoomCore, pending: _Pending, hold: bool) -> None:
        """The moveRequest itself is written by L{awaitingMove}'s data factory, which starts the clock."""

    awaitingMove.upon(Room.move).to(judging)(_judge)

    @awaitingMove.upon(Room._hardTimeout).to(over)
    def _hardTimeout(inputs: Room, core: RoomCore, request: _Request) -> None:
        request.cancel()
        core.violation(request.slot.team, "hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet.")

    for _onItsWay in (greeting, starting, announcing, awaitingMove):
        _onItsWay.upon(Room.pause).loop()(_holdAfter)
        _onItsWay.upon(Room.resume).loop()(_goOnAfter)
        _onItsWay.upon(Room.step).loop()(_ignoreStep)
    for _timed in (starting, announcing, awaitingMove):
        _timed.upon(Room.cancel).to(over)(_cancelTimed)
        _timed.upon(Room.playerLeft).to(over)(_leftTimed)
    for _early in (starting, announcing):
        _early.upon(Room.move).to(over)(_unrequestedTimed)

    machine = indexed(builder.build())
    return machine, lambda core: machine(core, waitingPaused)


RoomMachine, _openPaused = _buildRoom()


def openRoom(core: RoomCore, paused: bool) -> Room:
    """A room waiting for its players; ``paused``: it will hold before the first move."""
    return _openPaused(core) if paused else RoomMachine(core)
