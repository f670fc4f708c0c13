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
L{velhanet.gobang.client}, the inputs, core and shared steps in
L{velhanet.gobang.sessioncore}.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Concatenate, ParamSpec

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IReactorTime

from velhanet.gobang.sessioncore import (
    ANSWER_TIMEOUT,
    SERVER,
    Asked,
    Client,
    GobangCore,
    ask,
    checkTurn,
    drawBoard,
    gameOver,
    moveAsked,
    moveRefused,
    notAsked,
    placeStone,
    renderBoard,
    runCommand,
    signedOff,
    sizeGiven,
    stonePlayed,
    stoneRemoved,
    unknownWord,
)
from velhanet.gobang.wire import ClientOp, ServerOp, ServerWord
from velhanet.indexedmachine import indexed

__all__ = ["ANSWER_TIMEOUT", "SERVER", "GobangSession", "SessionMachine", "renderBoard"]

P = ParamSpec("P")


def _firstAnswer(
    behaviour: Callable[Concatenate[Client, GobangCore, P], None],
) -> Callable[Concatenate[Client, GobangCore, P], None]:
    """``behaviour``, after telling the client the server answered (it stops waiting for an answer)."""

    def answered(inputs: Client, core: GobangCore, *args: P.args, **kwargs: P.kwargs) -> None:
        core.onFirstAnswer()
        behaviour(inputs, core, *args, **kwargs)

    answered.__name__ = f"answered, {behaviour.__name__}"
    return answered


def _buildSession() -> TypeMachine[Client, GobangCore]:
    builder = TypeMachineBuilder(Client, GobangCore)
    signingOn = builder.state("signingOn")
    waiting = builder.state("waiting")
    asked = builder.state("asked", ask)
    resigned = builder.state("resigned")
    over = builder.state("over")

    def ended(inputs: Client, core: GobangCore, opcode: int) -> None:
        gameOver(core, opcode, resigned=False)

    def signoff(inputs: Client, core: GobangCore) -> None:
        signedOff(core)

    # -- before the first answer -----------------------------------------------------
    signingOn.upon(Client.boardSize).to(waiting)(_firstAnswer(sizeGiven))
    signingOn.upon(Client.stone).to(waiting)(_firstAnswer(stonePlayed))
    signingOn.upon(Client.removed).to(waiting)(_firstAnswer(stoneRemoved))
    signingOn.upon(Client.yourMove).to(waiting)(_firstAnswer(moveAsked))
    signingOn.upon(Client.illegal).to(waiting)(_firstAnswer(moveRefused))
    signingOn.upon(Client.unknown).to(waiting)(_firstAnswer(unknownWord))
    signingOn.upon(Client.result).to(over)(_firstAnswer(ended))
    signingOn.upon(Client.endOfRead).loop().returns(None)

    # -- the game goes on: what every state before the end hears alike ---------------
    for plain in (waiting, resigned):
        plain.upon(Client.boardSize).loop()(sizeGiven)
        plain.upon(Client.stone).loop()(stonePlayed)
        plain.upon(Client.removed).loop()(stoneRemoved)
        plain.upon(Client.yourMove).loop()(moveAsked)
        plain.upon(Client.illegal).loop()(moveRefused)
        plain.upon(Client.unknown).loop()(unknownWord)
        plain.upon(Client.endOfRead).loop()(drawBoard)
        plain.upon(Client._asked).to(asked).returns(None)
    asked.upon(Client.boardSize, nodata=True).loop()(sizeGiven)
    asked.upon(Client.removed, nodata=True).loop()(stoneRemoved)
    asked.upon(Client.illegal, nodata=True).loop()(moveRefused)
    asked.upon(Client.unknown, nodata=True).loop()(unknownWord)
    asked.upon(Client.endOfRead, nodata=True).loop()(drawBoard)

    for plain in (signingOn, waiting, resigned):
        plain.upon(Client.place).loop()(notAsked)
        plain.upon(Client.resign).loop()(notAsked)
        plain.upon(Client.mistyped).loop()(notAsked)
        plain.upon(Client.signoff).to(over)(signoff)
    waiting.upon(Client.result).to(over)(ended)

    # -- our move --------------------------------------------------------------------
    @asked.upon(Client.stone).loop()
    def stoneWhileAsked(inputs: Client, core: GobangCore, pending: Asked, colour: int, x: int, y: int) -> None:
        if placeStone(core, colour, x, y, asked=True):
            inputs._taken()  # that request is answered: a move now would be out of turn

    @asked.upon(Client._taken).to(waiting)
    def requestTaken(inputs: Client, core: GobangCore, pending: Asked) -> None:
        pending.stop()

    @asked.upon(Client.yourMove).loop()
    def askedAgain(inputs: Client, core: GobangCore, pending: Asked) -> None:
        """One request, one answer: a repeated request (opcode 9 then 8 for a move forged in our
        name) replaces the pending one."""
        checkTurn(core)
        pending.stop()
        pending.timer = ask(inputs, core).timer

    @asked.upon(Client.place).to(waiting)
    def place(inputs: Client, core: GobangCore, pending: Asked, x: int, y: int) -> None:
        pending.stop()
        core.play(x, y)

    @asked.upon(Client._botMove).to(waiting)
    def botMove(inputs: Client, core: GobangCore, pending: Asked) -> None:
        pending.timer = None
        core.play(*core.botChoice())

    @asked.upon(Client.mistyped).loop()
    def mistyped(inputs: Client, core: GobangCore, pending: Asked, why: str) -> None:
        core.say(why)

    @asked.upon(Client.resign).to(resigned)
    def resign(inputs: Client, core: GobangCore, pending: Asked) -> None:
        pending.stop()
        core.sendWord(ClientOp.RESIGN, 0, 0)

    @asked.upon(Client.result).to(over)
    def endedWhileAsked(inputs: Client, core: GobangCore, pending: Asked, opcode: int) -> None:
        pending.stop()
        gameOver(core, opcode, resigned=False)

    @asked.upon(Client.signoff).to(over)
    def signoffWhileAsked(inputs: Client, core: GobangCore, pending: Asked) -> None:
        pending.stop()
        signedOff(core)

    # -- the end ---------------------------------------------------------------------
    @resigned.upon(Client.result).to(over)
    def endedAfterResigning(inputs: Client, core: GobangCore, opcode: int) -> None:
        gameOver(core, opcode, resigned=True)

    for late in (
        Client.boardSize,
        Client.stone,
        Client.removed,
        Client.yourMove,
        Client.illegal,
        Client.result,
        Client.unknown,
        Client.endOfRead,
        Client.place,
        Client.resign,
        Client.mistyped,
        Client.signoff,
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
        self.core = GobangCore(role, sendWord, say, finish, clock, bot, botDelay, onFirstAnswer)
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
