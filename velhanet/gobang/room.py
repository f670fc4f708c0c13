"""One game on the Gobang server: an automat machine from the first signon to the end.

States: ``waiting`` (one or no player seated) → ``playing`` → ``over``. The
game asks black for the first move once both players are in, answers every
move from the player to move (stones to everyone, or opcode 9 then 8 again
to the mover), tells everyone the end (0 draw, 1 black, 2 white, 3 aborted),
and catches kibitzers up with the moves so far, in the order they were played. It only talks to
participants through L{Participant}; it knows nothing of FIFOs.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from automat import TypeMachine, TypeMachineBuilder
from twisted.logger import Logger

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import PASS, RESIGN, KInARowRules, KInARowState, Place, squareName
from velhanet.gobang.wire import ServerOp, ServerWord
from velhanet.i18n import N_, _
from velhanet.indexedmachine import indexed
from velhanet.watching import NO_WATCHER, UNWATCHED, GameWatcher, WatchedGame

BLACK, WHITE = 0, 1
COLOUR = (N_("black"), N_("white"))
"""A colour's name inside a sentence (``_(COLOUR[colour])``)."""
WINS = (N_("black wins ({reason})"), N_("white wins ({reason})"))
MOVED = (N_("black {square}"), N_("white {square}"))
"""A stone in the spectators' move list."""
PASSED = (N_("black passes"), N_("white passes"))
LEFT = (N_("the black player (pid {pid}) left: {why}"), N_("the white player (pid {pid}) left: {why}"))
STONE = (ServerOp.BLACK_STONE, ServerOp.WHITE_STONE)


class Participant(typing.Protocol):
    """A participant as the game sees it: a pid and a way to send it words."""

    pid: int

    def send(self, word: ServerWord) -> None: ...


class Room(typing.Protocol):
    def seat(self, colour: int, channel: Participant) -> None:
        "A player signed on with this colour (the server chose this game for it)."

    def kibitz(self, channel: Participant) -> None:
        "An observer signed on."

    def move(self, channel: Participant, x: int, y: int) -> None:
        "Opcode 4 from a participant (1-based; 0,0 = pass)."

    def resign(self, channel: Participant) -> None:
        "Opcode 8 from a participant."

    def leave(self, channel: Participant, why: str) -> None:
        "A participant signed off (opcode 0) or its process died."

    def shutdown(self) -> None:
        "The server stops: everyone gets opcode 3."

    def _start(self) -> None:
        "private: both seats are taken."

    def _ended(self) -> None:
        "private: the result has been sent; nothing more happens in this game."


@dataclass
class RoomCore:
    number: int
    rules: KInARowRules
    onOver: Callable[[RoomCore], None]
    """Called once when the game has ended: the server forgets its participants."""
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.gobang.room"))
    """Named as when this module was ``game.py``: operators filter the log by it."""
    seats: list[Participant | None] = field(default_factory=lambda: [None, None])
    kibitzers: list[Participant] = field(default_factory=list)
    state: KInARowState | None = None
    moves: list[ServerWord] = field(default_factory=list)
    """Every stone word broadcast so far (a pass as 0,0), in order: a late kibitzer's catch-up."""
    watcher: GameWatcher = NO_WATCHER
    """Where the game is reported for the spectators' site (``--web``); it never acts on the game."""
    watched: WatchedGame = UNWATCHED

    def participants(self) -> list[Participant]:
        return [c for c in self.seats if c is not None] + self.kibitzers

    def broadcast(self, word: ServerWord) -> None:
        for channel in self.participants():
            channel.send(word)

    def colourOf(self, channel: Participant) -> int | None:
        for colour, seated in enumerate(self.seats):
            if seated is channel:
                return colour
        return None

    def askToMove(self) -> None:
        assert self.state is not None and self.state.toMove is not None
        seated = self.seats[self.state.toMove]
        assert seated is not None
        seated.send(ServerWord(ServerOp.YOUR_MOVE))

    def dropKibitzer(self, channel: Participant) -> None:
        """A kibitzer leaves; it is told (opcode 3), in case the signoff was forged in its name."""
        self.kibitzers.remove(channel)
        channel.send(ServerWord(ServerOp.ABORTED))

    def end(self, opcode: int, why: str) -> None:
        self.log.info(_("game {number} over: {why}"), number=self.number, why=why)
        self.watched.ended(why)
        self.broadcast(ServerWord(opcode))
        self.onOver(self)

    def result(self, state: KInARowState) -> tuple[int, str]:
        """The opcode that tells everyone how ``state`` ended, and why, for the log."""
        outcome = state.outcome
        assert outcome is not None
        if outcome.winner is None:
            return ServerOp.DRAW, _("draw ({reason})").format(reason=outcome.reason)
        winner = outcome.winner
        return (ServerOp.BLACK_WINS, ServerOp.WHITE_WINS)[winner], _(WINS[winner]).format(reason=outcome.reason)


def _buildRoom() -> TypeMachine[Room, RoomCore]:
    builder = TypeMachineBuilder(Room, RoomCore)
    waiting = builder.state("waiting")
    playing = builder.state("playing")
    over = builder.state("over")

    for ignored in (Room.seat, Room.kibitz, Room.move, Room.resign, Room.leave, Room.shutdown, Room._start):
        over.upon(ignored).loop().returns(None)
    waiting.upon(Room._ended).to(over).returns(None)
    playing.upon(Room._ended).to(over).returns(None)

    @waiting.upon(Room.seat).loop()
    def seat(inputs: Room, core: RoomCore, colour: int, channel: Participant) -> None:
        core.seats[colour] = channel
        if all(core.seats):
            inputs._start()

    @waiting.upon(Room._start).to(playing)
    def start(inputs: Room, core: RoomCore) -> None:
        core.state = core.rules.initial()
        core.log.info(_("game {number} starts"), number=core.number)
        players = [
            _("{colour} (pid {pid})").format(colour=_(COLOUR[colour]), pid=seated.pid)
            for colour, seated in enumerate(core.seats)
            if seated
        ]
        rules = core.rules
        core.watched = core.watcher.started(
            "gobang", f"{rules.name} {rules.width}x{rules.height}", players, lambda: core.state
        )
        core.askToMove()

    @waiting.upon(Room.kibitz).loop()
    @playing.upon(Room.kibitz).loop()
    def kibitz(inputs: Room, core: RoomCore, channel: Participant) -> None:
        core.kibitzers.append(channel)
        for word in core.moves:
            channel.send(word)

    @waiting.upon(Room.move).loop()
    def moveTooEarly(inputs: Room, core: RoomCore, channel: Participant, x: int, y: int) -> None:
        core.log.info(_("pid {pid}: game {number} has not started; move dropped"), pid=channel.pid, number=core.number)

    @waiting.upon(Room.resign).loop()
    def resignTooEarly(inputs: Room, core: RoomCore, channel: Participant) -> None:
        core.log.info(
            _("pid {pid}: game {number} has not started; resign dropped"), pid=channel.pid, number=core.number
        )

    @waiting.upon(Room.shutdown).to(over)
    @playing.upon(Room.shutdown).to(over)
    def shutdown(inputs: Room, core: RoomCore) -> None:
        core.end(ServerOp.ABORTED, _("the server stops"))

    @playing.upon(Room.move).loop()
    def move(inputs: Room, core: RoomCore, channel: Participant, x: int, y: int) -> None:
        state = core.state
        assert state is not None and state.toMove is not None
        if core.colourOf(channel) != state.toMove:
            core.log.info(
                _("pid {pid}: move out of turn in game {number}; dropped"), pid=channel.pid, number=core.number
            )
            return
        size = core.rules.width
        try:
            if x == 0 and y == 0:
                after = state.apply(PASS)
            elif not (1 <= x <= size and 1 <= y <= size):
                raise IllegalMove(_("({x}, {y}) is off the {size}x{size} board").format(x=x, y=y, size=size))
            else:
                after = state.apply(Place(x - 1, y - 1))
        except IllegalMove as error:
            core.log.info(_("pid {pid}: illegal move {x},{y}: {why}"), pid=channel.pid, x=x, y=y, why=str(error))
            channel.send(ServerWord(ServerOp.ILLEGAL, x, y))
            core.askToMove()
            return
        core.state = after
        stone = ServerWord(STONE[state.toMove], x, y)
        core.moves.append(stone)
        core.broadcast(stone)
        # the square as the site's board labels it: h8, the row counted from the bottom (the wire's y from the top)
        mover = state.toMove
        if x or y:
            core.watched.moved(_(MOVED[mover]).format(square=squareName(core.rules, x - 1, y - 1)))
        else:
            core.watched.moved(_(PASSED[mover]))
        if after.outcome is not None:
            core.end(*core.result(after))
            inputs._ended()
            return
        core.askToMove()

    @playing.upon(Room.resign).loop()
    def resign(inputs: Room, core: RoomCore, channel: Participant) -> None:
        state = core.state
        assert state is not None
        if core.colourOf(channel) != state.toMove:
            core.log.info(
                _("pid {pid}: resign out of turn; dropped (only the player to move may resign)"), pid=channel.pid
            )
            return
        core.state = state.apply(RESIGN)
        core.end(*core.result(core.state))
        inputs._ended()

    @waiting.upon(Room.leave).loop()
    @playing.upon(Room.leave).loop()
    def leave(inputs: Room, core: RoomCore, channel: Participant, why: str) -> None:
        """A kibitzer leaves alone; a player who leaves ends the game for everyone (opcode 3)."""
        if channel in core.kibitzers:
            core.dropKibitzer(channel)
            return
        if core.state is None:
            why = _("pid {pid} left before the game started ({why})").format(pid=channel.pid, why=why)
        else:
            why = _(LEFT[core.colourOf(channel) or 0]).format(pid=channel.pid, why=why)
        core.end(ServerOp.ABORTED, why)
        inputs._ended()

    return indexed(builder.build())


RoomMachine = _buildRoom()
