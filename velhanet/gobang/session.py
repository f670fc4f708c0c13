"""One player's or kibitzer's view of a Gobang game, an automat machine: words in, board and prompts out.

States: ``signingOn`` (no word from the server yet) → ``waiting`` (the game
goes on; a kibitzer stays here) ⇄ ``asked`` (the server waits for our move;
a bot's pending move is the state's data) → ``resigned`` (we resigned; the
result is due) → ``over`` (a result, or we signed off), where nothing more is
heard. The server's first word, whatever it is, leaves ``signingOn`` and is
then handled as in ``waiting``.

The board is drawn once after a run of stones, before anything else is said
and at the end of each read (``endOfRead``): a kibitzer who joins a running
game gets the moves so far in one read, so it sees them as one board; in a
game, each stone arrives in a read of its own and gets its board. The empty
board is due from the first answer (the board size) on.

L{GobangSession} is what ``gobang-client`` runs between the FIFOs and the
terminal; the command line and the FIFOs themselves are in
L{velhanet.gobang.client}.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Concatenate, ParamSpec

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.bots.gobang import GobangBot
from velhanet.bots.tictactoe import SEARCH_LIMIT, PerfectBot
from velhanet.games.kinarow import KInARowState, Place
from velhanet.gobang.screen import COLOURS, gameName, renderBoard, rulesFor, runCommand
from velhanet.gobang.wire import ClientOp, ServerOp, ServerWord
from velhanet.i18n import N_, _
from velhanet.indexedmachine import indexed

ANSWER_TIMEOUT = 5.0
SERVER = "server"
"""The peer a client traces: it has only one."""

PLAYS = (N_("Black plays {x} {y}."), N_("White plays {x} {y}."))
PASSES = (N_("Black passes."), N_("White passes."))
RESIGNED = (N_("Black resigned. {result}"), N_("White resigned. {result}"))
RESULTS = {
    ServerOp.DRAW: N_("The game is a draw."),
    ServerOp.BLACK_WINS: N_("Black wins."),
    ServerOp.WHITE_WINS: N_("White wins."),
    ServerOp.ABORTED: N_("The game ended unexpectedly (a player left or the server stopped)."),
}
"""What a player reads at the end, by the result's opcode."""


class Session(typing.Protocol):
    """The inputs: the server's words, what the player typed (or the bot chose), and the machine's own."""

    def boardSize(self, size: int) -> None:
        "Opcode 7: the board's size (the server's first answer to a signon)."

    def stone(self, colour: int, x: int, y: int) -> None:
        "Opcodes 5 and 6: a stone of ``colour`` (0 black, 1 white) at x y; 0 0 is a pass."

    def removed(self, x: int, y: int) -> None:
        "Opcode 4: the stone at x y is taken off the board."

    def yourMove(self) -> None:
        "Opcode 8: the server asks us for a move."

    def illegal(self, x: int, y: int) -> None:
        "Opcode 9: the server refused the move x y."

    def result(self, opcode: int) -> None:
        "Opcodes 0 to 3: the game is over (a draw, black wins, white wins, aborted)."

    def unknown(self, description: str) -> None:
        "A word with an opcode the server never sends to a client."

    def endOfRead(self) -> None:
        "Everything one read of the FIFO brought has been handled."

    def place(self, x: int, y: int) -> None:
        "Our move: a stone at x y, or 0 0 to pass (typed and checked, or chosen by the bot)."

    def resign(self) -> None:
        "'resign'."

    def mistyped(self, why: str) -> None:
        "A line that is not a move we can send: ``why`` says what a move looks like."

    def signoff(self) -> None:
        "'quit', the terminal closed, or the client stops."

    def _asked(self) -> None:
        "private: the server asked a player (not a kibitzer) for a move."

    def _taken(self) -> None:
        "private: a stone of ours arrived that we did not play: the request is answered already."

    def _botMove(self) -> None:
        "private: the bot's delay is over."


@dataclass
class SessionCore:
    role: int
    """ClientOp.SIGNON_BLACK, SIGNON_WHITE or SIGNON_KIBITZ."""
    sendWord: Callable[[int, int, int], None]
    say: Callable[[str], None]
    finish: Callable[[int], None]
    clock: IReactorTime
    bot: random.Random | None = None
    botDelay: float = 0.2
    onFirstAnswer: Callable[[], None] = lambda: None
    size: int = 0
    stones: dict[tuple[int, int], int] = field(default_factory=dict)
    lastMove: tuple[int, int] | None = None
    """Our move that the server has not answered yet (a stone of ours, or opcode 9)."""
    turn: int = 0
    """The colour to move, as the stones the server announced say (black first)."""
    boardDue: bool = False
    """The board changed (or was never drawn) since it was last drawn: the screen's, not the game's."""

    @property
    def colour(self) -> int | None:
        return {ClientOp.SIGNON_BLACK: 0, ClientOp.SIGNON_WHITE: 1}.get(ClientOp(self.role))

    def allowPass(self) -> bool:
        """Whether the game allows a pass; before the board size arrives, as gobang does (no crash
        on a request that comes first)."""
        return rulesFor(self.size).allowPass if self.size else True

    def showBoard(self) -> None:
        """Draw the board if it changed since it was last drawn."""
        if self.boardDue and self.size:
            self.boardDue = False
            self.say(renderBoard(self.size, self.stones))

    def tell(self, text: str) -> None:
        """Say something after drawing the board as the stones so far left it."""
        self.showBoard()
        self.say(text)

    def why(self, x: int, y: int) -> str:
        """Our best guess why the server refused our move x y."""
        if x == 0 and y == 0:
            if not self.allowPass():
                return _("passing is not allowed in {game}.").format(game=gameName(self.size))
            return _("the server refused the pass.")
        if (x, y) in self.stones:
            return _("that point is taken.")
        if not (1 <= x <= self.size and 1 <= y <= self.size):
            return _("off the board (1 to {size}).").format(size=self.size)
        return _("the server refused it.")

    def play(self, x: int, y: int) -> None:
        self.lastMove = (x, y)
        self.sendWord(ClientOp.MOVE, x, y)

    def position(self) -> KInARowState:
        """The stones the server announced as a position of the game's rules (who is to move: ``turn``)."""
        return rulesFor(self.size).position([(x - 1, y - 1, c) for (x, y), c in self.stones.items()], self.turn)

    def botChoice(self) -> tuple[int, int]:
        """The bot's move, 1-based; 0 0 passes (also when it cannot choose: the server decides what is legal)."""
        assert self.bot is not None
        seed = self.bot.randrange(1 << 30)
        bot = PerfectBot(seed) if self.size * self.size <= SEARCH_LIMIT else GobangBot(seed)
        try:
            move = bot.chooseMove(self.position())
        except Exception as error:  # never fall silent
            self.tell(_("The bot cannot choose a move ({error}); passing.").format(error=error))
            return 0, 0
        return (move.x + 1, move.y + 1) if isinstance(move, Place) else (0, 0)


@dataclass
class Asked:
    """``asked``: the server waits for our move; the bot's pending move, if a bot plays."""

    timer: IDelayedCall | None

    def stop(self) -> None:
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None


def ask(inputs: Session, core: SessionCore) -> Asked:
    """Entering ``asked``: the bot's move is armed, or the player is asked for one."""
    if core.bot is not None:
        return Asked(core.clock.callLater(core.botDelay, inputs._botMove))
    core.tell(_("Your move (x y, pass, resign):") if core.allowPass() else _("Your move (x y, resign):"))
    return Asked(None)


# -- the server's words, as every state before the end hears them -----------------------


def sizeGiven(inputs: Session, core: SessionCore, size: int) -> None:
    if core.size:
        core.tell(_("The server sent the board size again ({size}); ignored.").format(size=size))
        return
    core.size = size
    core.say(_("Connection established, board size = {size}.").format(size=size))
    core.boardDue = True
    if core.colour is not None:
        core.tell(_("Waiting for your partner to sign on ..."))


def placeStone(core: SessionCore, colour: int, x: int, y: int, asked: bool) -> bool:
    """A stone the server announced; whether it is one of ours that we did not play (a forged word)."""
    forged = colour == core.colour and core.lastMove != (x, y)
    if forged:
        if core.lastMove is not None:
            ours = _("not our {x} {y}: our move will be refused as out of turn").format(
                x=core.lastMove[0], y=core.lastMove[1]
            )
        elif asked:
            ours = _("before we moved: we wait for the next request")
        else:
            ours = _("unasked")
        core.tell(
            _("The server played {x} {y} for us, {why} (somebody writes words in our name).").format(x=x, y=y, why=ours)
        )
    if colour == core.colour:
        core.lastMove = None
    core.turn = 1 - colour
    if x == 0 and y == 0:
        core.say(_(PASSES[colour]))
    else:
        core.stones[(x, y)] = colour
        core.boardDue = True
        core.say(_(PLAYS[colour]).format(x=x, y=y))
    return forged


def stonePlayed(inputs: Session, core: SessionCore, colour: int, x: int, y: int) -> None:
    placeStone(core, colour, x, y, asked=False)


def stoneRemoved(inputs: Session, core: SessionCore, x: int, y: int) -> None:
    core.stones.pop((x, y), None)
    core.boardDue = True


def checkTurn(core: SessionCore) -> None:
    """Opcode 8 for a player: a request for the other colour is reported, and the game goes on as the server says."""
    assert core.colour is not None
    if core.turn != core.colour:
        core.tell(
            _(
                "The server asks us to move for {colour}, not {ours} "
                "(a signon forged in our name?); playing on as the server says."
            ).format(colour=_(COLOURS[core.turn]), ours=_(COLOURS[core.colour]))
        )


def moveAsked(inputs: Session, core: SessionCore) -> None:
    if core.colour is None:
        core.tell(_("The server asks a kibitzer to move; ignored."))
        return
    checkTurn(core)
    inputs._asked()


def moveRefused(inputs: Session, core: SessionCore, x: int, y: int) -> None:
    if core.lastMove != (x, y):
        core.tell(
            _("The server refused a move {x} {y} that we did not send: somebody writes words in our name.").format(
                x=x, y=y
            )
        )
    else:
        core.lastMove = None
        core.tell(_("Illegal move {x} {y}: {why}").format(x=x, y=y, why=core.why(x, y)))


def unknownWord(inputs: Session, core: SessionCore, description: str) -> None:
    core.tell(_("Unknown answer from the server ({word}); ignored.").format(word=description))


def drawBoard(inputs: Session, core: SessionCore) -> None:
    core.showBoard()


def notAsked(inputs: Session, core: SessionCore, *typed: object, **named: object) -> None:
    """Whatever was typed: it is not our move (or we only watch)."""
    if core.colour is None:
        core.say(_("You are watching; type 'quit' to leave."))
    else:
        core.say(_("Wait until the server asks for your move."))


def gameOver(core: SessionCore, opcode: int, resigned: bool) -> None:
    text = _(RESULTS[ServerOp(opcode)])
    if opcode in (ServerOp.BLACK_WINS, ServerOp.WHITE_WINS):
        winner = opcode - ServerOp.BLACK_WINS
        if resigned:
            text = _("You resigned. {result}").format(result=text)
        elif core.size and not core.position().hasLine(winner):  # no line: the loser resigned
            text = _(RESIGNED[1 - winner]).format(result=text)
    core.tell(text)
    core.say(_("Game over!"))
    core.finish(3 if opcode == ServerOp.ABORTED else 0)


def signedOff(core: SessionCore) -> None:
    core.sendWord(ClientOp.SIGNOFF, 0, 0)
    core.say(_("Signed off."))
    core.finish(3)


P = ParamSpec("P")


def _firstAnswer(
    behaviour: Callable[Concatenate[Session, SessionCore, P], None],
) -> Callable[Concatenate[Session, SessionCore, P], None]:
    """``behaviour``, after telling the client the server answered (it stops waiting for an answer)."""

    def answered(inputs: Session, core: SessionCore, *args: P.args, **kwargs: P.kwargs) -> None:
        core.onFirstAnswer()
        behaviour(inputs, core, *args, **kwargs)

    answered.__name__ = f"answered, {behaviour.__name__}"
    return answered


def _buildSession() -> TypeMachine[Session, SessionCore]:
    builder = TypeMachineBuilder(Session, SessionCore)
    signingOn = builder.state("signingOn")
    waiting = builder.state("waiting")
    asked = builder.state("asked", ask)
    resigned = builder.state("resigned")
    over = builder.state("over")

    def ended(inputs: Session, core: SessionCore, opcode: int) -> None:
        gameOver(core, opcode, resigned=False)

    def signoff(inputs: Session, core: SessionCore) -> None:
        signedOff(core)

    # -- before the first answer -----------------------------------------------------
    signingOn.upon(Session.boardSize).to(waiting)(_firstAnswer(sizeGiven))
    signingOn.upon(Session.stone).to(waiting)(_firstAnswer(stonePlayed))
    signingOn.upon(Session.removed).to(waiting)(_firstAnswer(stoneRemoved))
    signingOn.upon(Session.yourMove).to(waiting)(_firstAnswer(moveAsked))
    signingOn.upon(Session.illegal).to(waiting)(_firstAnswer(moveRefused))
    signingOn.upon(Session.unknown).to(waiting)(_firstAnswer(unknownWord))
    signingOn.upon(Session.result).to(over)(_firstAnswer(ended))
    signingOn.upon(Session.endOfRead).loop().returns(None)

    # -- the game goes on: what every state before the end hears alike ---------------
    for plain in (waiting, resigned):
        plain.upon(Session.boardSize).loop()(sizeGiven)
        plain.upon(Session.stone).loop()(stonePlayed)
        plain.upon(Session.removed).loop()(stoneRemoved)
        plain.upon(Session.yourMove).loop()(moveAsked)
        plain.upon(Session.illegal).loop()(moveRefused)
        plain.upon(Session.unknown).loop()(unknownWord)
        plain.upon(Session.endOfRead).loop()(drawBoard)
        plain.upon(Session._asked).to(asked).returns(None)
    asked.upon(Session.boardSize, nodata=True).loop()(sizeGiven)
    asked.upon(Session.removed, nodata=True).loop()(stoneRemoved)
    asked.upon(Session.illegal, nodata=True).loop()(moveRefused)
    asked.upon(Session.unknown, nodata=True).loop()(unknownWord)
    asked.upon(Session.endOfRead, nodata=True).loop()(drawBoard)

    for plain in (signingOn, waiting, resigned):
        plain.upon(Session.place).loop()(notAsked)
        plain.upon(Session.resign).loop()(notAsked)
        plain.upon(Session.mistyped).loop()(notAsked)
        plain.upon(Session.signoff).to(over)(signoff)
    waiting.upon(Session.result).to(over)(ended)

    # -- our move --------------------------------------------------------------------
    @asked.upon(Session.stone).loop()
    def stoneWhileAsked(inputs: Session, core: SessionCore, pending: Asked, colour: int, x: int, y: int) -> None:
        if placeStone(core, colour, x, y, asked=True):
            inputs._taken()  # that request is answered: a move now would be out of turn

    @asked.upon(Session._taken).to(waiting)
    def requestTaken(inputs: Session, core: SessionCore, pending: Asked) -> None:
        pending.stop()

    @asked.upon(Session.yourMove).loop()
    def askedAgain(inputs: Session, core: SessionCore, pending: Asked) -> None:
        """One request, one answer: a repeated request (opcode 9 then 8 for a move forged in our
        name) replaces the pending one."""
        checkTurn(core)
        pending.stop()
        pending.timer = ask(inputs, core).timer

    @asked.upon(Session.place).to(waiting)
    def place(inputs: Session, core: SessionCore, pending: Asked, x: int, y: int) -> None:
        pending.stop()
        core.play(x, y)

    @asked.upon(Session._botMove).to(waiting)
    def botMove(inputs: Session, core: SessionCore, pending: Asked) -> None:
        pending.timer = None
        core.play(*core.botChoice())

    @asked.upon(Session.mistyped).loop()
    def mistyped(inputs: Session, core: SessionCore, pending: Asked, why: str) -> None:
        core.say(why)

    @asked.upon(Session.resign).to(resigned)
    def resign(inputs: Session, core: SessionCore, pending: Asked) -> None:
        pending.stop()
        core.sendWord(ClientOp.RESIGN, 0, 0)

    @asked.upon(Session.result).to(over)
    def endedWhileAsked(inputs: Session, core: SessionCore, pending: Asked, opcode: int) -> None:
        pending.stop()
        gameOver(core, opcode, resigned=False)

    @asked.upon(Session.signoff).to(over)
    def signoffWhileAsked(inputs: Session, core: SessionCore, pending: Asked) -> None:
        pending.stop()
        signedOff(core)

    # -- the end ---------------------------------------------------------------------
    @resigned.upon(Session.result).to(over)
    def endedAfterResigning(inputs: Session, core: SessionCore, opcode: int) -> None:
        gameOver(core, opcode, resigned=True)

    for late in (
        Session.boardSize,
        Session.stone,
        Session.removed,
        Session.yourMove,
        Session.illegal,
        Session.result,
        Session.unknown,
        Session.endOfRead,
        Session.place,
        Session.resign,
        Session.mistyped,
        Session.signoff,
    ):
        over.upon(late).loop().returns(None)

    return indexed(builder.build())


SessionMachine = _buildSession()


class GobangSession:
    """The client's logic between the FIFOs (``sendWord``) and the screen (``say``): the machine's face."""

    def __init__(
        self,
        role: int,
        sendWord: Callable[[int, int, int], None],
        say: Callable[[str], None],
        finish: Callable[[int], None],
        clock: IReactorTime,
        bot: random.Random | None = None,
        botDelay: float = 0.2,
        onFirstAnswer: Callable[[], None] = lambda: None,
    ) -> None:
        self.role = role  # ClientOp.SIGNON_BLACK / WHITE / KIBITZ
        self.sendWord, self.say, self.finish, self.clock = sendWord, say, finish, clock
        self.core = SessionCore(role, sendWord, say, finish, clock, bot, botDelay, onFirstAnswer)
        self.machine = SessionMachine(self.core)

    @property
    def colour(self) -> int | None:
        return self.core.colour

    def received(self, word: ServerWord) -> None:
        opcode = word.opcode
        if opcode == ServerOp.BOARD_SIZE:
            self.machine.boardSize(word.y)
        elif opcode in (ServerOp.BLACK_STONE, ServerOp.WHITE_STONE):
            self.machine.stone(opcode - ServerOp.BLACK_STONE, word.x, word.y)
        elif opcode == ServerOp.REMOVE_STONE:
            self.machine.removed(word.x, word.y)
        elif opcode == ServerOp.YOUR_MOVE:
            self.machine.yourMove()
        elif opcode == ServerOp.ILLEGAL:
            self.machine.illegal(word.x, word.y)
        elif opcode in (ServerOp.DRAW, ServerOp.BLACK_WINS, ServerOp.WHITE_WINS, ServerOp.ABORTED):
            self.machine.result(opcode)
        else:
            self.machine.unknown(word.describe())

    def endOfRead(self) -> None:
        """Everything one read brought is handled: the board it changed is drawn now."""
        self.machine.endOfRead()

    def command(self, line: str) -> None:
        runCommand(self.machine, self.core, line)

    def play(self, x: int, y: int) -> None:
        """Our move x y (0 0 passes), unchecked: the server decides."""
        self.machine.place(x, y)

    def signoff(self) -> None:
        self.machine.signoff()
