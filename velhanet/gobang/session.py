"""One player's or kibitzer's view of a Gobang game: words in, board and prompts out.

L{GobangSession} is what ``gobang-client`` runs between the FIFOs and the
terminal: it decodes the server's words, keeps the board, draws it, reads the
moves typed (or lets a bot choose them) and says how the game ended. The
command line and the FIFOs themselves are in L{velhanet.gobang.client}.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.bots.gobang import GobangBot
from velhanet.bots.tictactoe import SEARCH_LIMIT, PerfectBot
from velhanet.games.kinarow import KInARowRules, Place, gobangRules, winningLine
from velhanet.gobang.wire import (
    ClientOp,
    ServerOp,
    ServerWord,
)

ANSWER_TIMEOUT = 5.0
SERVER = "server"
"""The peer a client traces: it has only one."""
SYMBOLS = ("X", "O")
COLOURS = ("black", "white")
LEGEND = "X = black, O = white"


def renderBoard(size: int, stones: dict[tuple[int, int], int]) -> str:
    """x = column 1..size left to right, y = row 1..size top to bottom; black X, white O (the legend
    ends the header line)."""
    width = 3 if size >= 10 else 2
    lines = [" " * 3 + "".join(f"{x:>{width}}" for x in range(1, size + 1)) + f"   {LEGEND}"]
    for y in range(1, size + 1):
        cells = "".join(f"{SYMBOLS[stones[(x, y)]] if (x, y) in stones else '.':>{width}}" for x in range(1, size + 1))
        lines.append(f"{y:>3}{cells}")
    return "\n".join(lines)


def rulesFor(size: int) -> KInARowRules:
    """Tic-tac-toe on 3x3 (the server's --game tictactoe), else gobang."""
    return KInARowRules("tictactoe", 3, 3, 3) if size == 3 else gobangRules(size)


def gameName(size: int) -> str:
    return "tic-tac-toe" if size == 3 else "gobang"


def hasLine(size: int, stones: dict[tuple[int, int], int], colour: int) -> bool:
    """Does ``colour`` have a winning line on the board (five or more; three in tic-tac-toe)?"""
    rules = rulesFor(size)
    cells = bytearray(size * size)
    for (x, y), owner in stones.items():
        cells[(y - 1) * size + x - 1] = owner + 1
    return any(
        winningLine(cells, size, size, rules.k, x - 1, y - 1) for (x, y), owner in stones.items() if owner == colour
    )


class GobangSession:
    """The client's logic between the FIFOs (``sendWord``) and the screen (``say``).

    The board is drawn once after a run of stones, before anything else is said
    and at the end of each read (L{endOfRead}): a kibitzer who joins a running
    game gets the moves so far in one read, so it sees them as one board; in a
    game, each stone arrives in a read of its own and gets its board. The empty
    board is due from the first answer (the board size) on.
    """

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
        self.bot, self.botDelay = bot, botDelay
        self.onFirstAnswer = onFirstAnswer
        self.size = 0
        self.stones: dict[tuple[int, int], int] = {}
        self.answered = False
        self.asked = False
        self.over = False
        self.lastMove: tuple[int, int] | None = None
        """Our move that the server has not answered yet (a stone of ours, or opcode 9)."""
        self.turn = 0
        """The colour to move, as the stones the server announced say (black first)."""
        self.boardDue = False
        """The board changed (or was never drawn) since it was last drawn."""
        self.resigned = False
        self._timer: IDelayedCall | None = None

    @property
    def colour(self) -> int | None:
        return {ClientOp.SIGNON_BLACK: 0, ClientOp.SIGNON_WHITE: 1}.get(ClientOp(self.role))

    def received(self, word: ServerWord) -> None:
        if not self.answered:
            self.answered = True
            self.onFirstAnswer()
        opcode = word.opcode
        if self.over:
            return
        if opcode == ServerOp.BOARD_SIZE:
            if self.size:
                self.tell(f"The server sent the board size again ({word.y}); ignored.")
                return
            self.size = word.y
            self.say(f"Connection established, board size = {self.size}.")
            self.boardDue = True
            if self.colour is not None:
                self.tell("Waiting for your partner to sign on ...")
        elif opcode in (ServerOp.BLACK_STONE, ServerOp.WHITE_STONE):
            self._stone(opcode - ServerOp.BLACK_STONE, word.x, word.y)
        elif opcode == ServerOp.REMOVE_STONE:
            self.stones.pop((word.x, word.y), None)
            self.boardDue = True
        elif opcode == ServerOp.YOUR_MOVE:
            self._yourMove()
        elif opcode == ServerOp.ILLEGAL:
            if self.lastMove != (word.x, word.y):
                self.tell(
                    f"The server refused a move {word.x} {word.y} that we did not send: "
                    "somebody writes words in our name."
                )
            else:
                self.lastMove = None
                self.tell(f"Illegal move {word.x} {word.y}: {self._why(word.x, word.y)}")
        elif opcode in (ServerOp.DRAW, ServerOp.BLACK_WINS, ServerOp.WHITE_WINS, ServerOp.ABORTED):
            self._end(opcode)
        else:
            self.tell(f"Unknown answer from the server ({word.describe()}); ignored.")

    def showBoard(self) -> None:
        """Draw the board if it changed since it was last drawn."""
        if self.boardDue and self.size:
            self.boardDue = False
            self.say(renderBoard(self.size, self.stones))

    def endOfRead(self) -> None:
        """Everything one read brought is handled: the board it changed is drawn now."""
        if not self.over:
            self.showBoard()

    def tell(self, text: str) -> None:
        """Say something after drawing the board as the stones so far left it."""
        self.showBoard()
        self.say(text)

    def _stone(self, colour: int, x: int, y: int) -> None:
        if colour == self.colour and self.lastMove != (x, y):
            if self.lastMove is not None:
                ours = f"not our {self.lastMove[0]} {self.lastMove[1]}: our move will be refused as out of turn"
            elif self.asked:
                ours = "before we moved: we wait for the next request"
            else:
                ours = "unasked"
            self.tell(f"The server played {x} {y} for us, {ours} (somebody writes words in our name).")
            self.asked = False  # that request is answered: a move now would be out of turn
            if self._timer is not None and self._timer.active():
                self._timer.cancel()
        if colour == self.colour:
            self.lastMove = None
        self.turn = 1 - colour
        if x == 0 and y == 0:
            self.say(f"{COLOURS[colour].capitalize()} passes.")
        else:
            self.stones[(x, y)] = colour
            self.boardDue = True
            self.say(f"{COLOURS[colour].capitalize()} plays {x} {y}.")

    def _yourMove(self) -> None:
        """Opcode 8. Any answer we did not expect is reported, and the game goes on from what the server says."""
        if self.colour is None:
            self.tell("The server asks a kibitzer to move; ignored.")
            return
        if self.turn != self.colour:
            self.tell(
                f"The server asks us to move for {COLOURS[self.turn]}, not {COLOURS[self.colour]} "
                "(a signon forged in our name?); playing on as the server says."
            )
        self.asked = True
        self._ask()

    def _why(self, x: int, y: int) -> str:
        if x == 0 and y == 0:
            if not rulesFor(self.size).allowPass:
                return f"passing is not allowed in {gameName(self.size)}."
            return "the server refused the pass."
        if (x, y) in self.stones:
            return "that point is taken."
        if not (1 <= x <= self.size and 1 <= y <= self.size):
            return f"off the board (1 to {self.size})."
        return "the server refused it."

    def _ask(self) -> None:
        if self.bot is not None:
            # One request, one answer: a repeated request (opcode 9 then 8 for
            # a move forged in our name) replaces the pending one.
            if self._timer is not None and self._timer.active():
                self._timer.cancel()
            self._timer = self.clock.callLater(self.botDelay, self._botMove)
        else:
            self.tell("Your move (x y, pass, resign):" if rulesFor(self.size).allowPass else "Your move (x y, resign):")

    def _botMove(self) -> None:
        self._timer = None
        assert self.bot is not None
        rules = rulesFor(self.size)
        bot = (
            PerfectBot(self.bot.randrange(1 << 30))
            if self.size * self.size <= SEARCH_LIMIT
            else GobangBot(self.bot.randrange(1 << 30))
        )
        try:
            state = rules.position([(x - 1, y - 1, c) for (x, y), c in self.stones.items()], toMove=self.turn)
            move = bot.chooseMove(state)
        except Exception as error:  # the server decides what is legal; never fall silent
            self.tell(f"The bot cannot choose a move ({error}); passing.")
            self.play(0, 0)
            return
        if isinstance(move, Place):
            self.play(move.x + 1, move.y + 1)
        else:
            self.play(0, 0)

    def play(self, x: int, y: int) -> None:
        self.asked = False
        self.lastMove = (x, y)
        self.sendWord(ClientOp.MOVE, x, y)

    def command(self, line: str) -> None:
        words = line.split()
        if not words:
            return
        if words[0] in ("quit", "exit"):
            self.signoff()
            return
        if self.colour is None:
            self.say("You are watching; type 'quit' to leave.")
            return
        if not self.asked:
            self.say("Wait until the server asks for your move.")
            return
        if words[0] == "pass":
            if rulesFor(self.size).allowPass:
                self.play(0, 0)
            else:
                self.say(f"Passing is not allowed in {gameName(self.size)}; type 'x y' or 'resign'.")
        elif words[0] == "resign":
            self.asked = False
            self.resigned = True
            self.sendWord(ClientOp.RESIGN, 0, 0)
        elif len(words) == 2 and all(w.isdigit() for w in words):
            x, y = int(words[0]), int(words[1])
            if not (1 <= x <= self.size and 1 <= y <= self.size):
                self.say(f"x and y go from 1 to {self.size}.")
            elif (x, y) in self.stones:
                self.say("That point is taken.")
            else:
                self.play(x, y)
        else:
            self.say(
                "Type two numbers 'x y', or 'pass', or 'resign'."
                if rulesFor(self.size).allowPass
                else "Type two numbers 'x y', or 'resign'."
            )

    def signoff(self) -> None:
        if not self.over:
            self.over = True
            self.sendWord(ClientOp.SIGNOFF, 0, 0)
            self.say("Signed off.")
            self.finish(3)

    def _end(self, opcode: int) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self.over = True
        text = {
            ServerOp.DRAW: "The game is a draw.",
            ServerOp.BLACK_WINS: "Black wins.",
            ServerOp.WHITE_WINS: "White wins.",
            ServerOp.ABORTED: "The game ended unexpectedly (a player left or the server stopped).",
        }[ServerOp(opcode)]
        if opcode in (ServerOp.BLACK_WINS, ServerOp.WHITE_WINS):
            winner = opcode - ServerOp.BLACK_WINS
            if self.resigned:
                text = f"You resigned. {text}"
            elif self.size and not hasLine(self.size, self.stones, winner):  # no line: the loser resigned
                text = f"{COLOURS[1 - winner].capitalize()} resigned. {text}"
        self.tell(text)
        self.say("Game over!")
        self.finish(3 if opcode == ServerOp.ABORTED else 0)
