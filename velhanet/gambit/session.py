"""The Gambit client's logic: a game as the player sees it, between a connection and a screen.

L{ClientSession} knows no socket and no terminal: it is given ``send``,
``say``, ``finish`` and a clock, so tests drive it in memory against either
server (``client.py`` wires it to TCP and standard input).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import chess
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.bots.chess import chooseBotMove
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessgame import describeOutcome, gameOutcome, parseMove
from velhanet.games.interfaces import IllegalMove

JOIN_TIMEOUT = 10.0
"""The original server never answers a JOIN for an unknown id: give up after this long."""


def renderBoard(board: chess.Board, colour: chess.Color) -> str:
    rows = board.unicode(empty_square="·", orientation=colour).splitlines()
    ranks = "87654321" if colour == chess.WHITE else "12345678"
    files = "a b c d e f g h" if colour == chess.WHITE else "h g f e d c b a"
    return "\n".join(f"{rank} {row}" for rank, row in zip(ranks, rows, strict=True)) + f"\n  {files}"


HELP = """\
moves: SAN (e4, Nf3, O-O, exd8=Q) or UCI (e2e4, e7e8q)
  draw     offer a draw (or accept the opponent's offer)
  resign   give up the game
  board    show the board again
  quit     leave (the server tells your opponent)"""

END_GRACE = 2.0
"""Seconds to wait for the server's END once the board shows the game is over.

velhanet's server sends END at mate and at every draw; the original server
sends nothing at a draw or to the mated side, so the client ends by itself."""

ERROR_GRACE = 1.0
"""Seconds an ERROR to our JOIN waits for an OK: the original server refuses a
same-name JOIN with an ERROR and then joins the player anyway."""

DRAW_ACK = 2.0
"""Seconds to wait for the server to confirm a draw offer (the original ignores cmd 6)."""


class ClientSession:
    """The client's logic, between a connection (``send``) and a screen (``say``).

    Works the same on velhanet's server and on the original Go server: every
    waiting step has a way out (a JOIN nobody answers, a game the original
    server never closes), and a normal end reads as one.
    """

    def __init__(
        self,
        user: str,
        gameId: str | None,
        send: Callable[[Message], None],
        say: Callable[[str], None],
        finish: Callable[[int], None],
        clock: IReactorTime,
        bot: random.Random | None = None,
        botDelay: float = 0.5,
        serverOptions: str = "",
    ) -> None:
        self.user, self.gameId = user, gameId
        self._send, self.say, self.finish, self.clock = send, say, finish, clock
        self.bot, self.botDelay = bot, botDelay
        self.serverOptions = serverOptions
        """``--host``/``--port`` as the user gave them, for the join hint."""
        self.phase = "connecting"
        self.colour: chess.Color = chess.WHITE
        self.opponent = ""
        self.board = chess.Board()
        self.lastSent: chess.Move | None = None
        self.theirOffer = False
        self.myOffer = False
        self._timer: IDelayedCall | None = None
        self._refusal: str | None = None
        self._drawAck: IDelayedCall | None = None
        self.verdict = ""
        """The end of the game as our own board shows it, once it is over."""
        self.drawHintGiven = False
        self.scripted: list[str] | None = None
        """Lines from a standard input that is not a terminal: played when the client is ready."""
        self.inputEnded = False

    def send(self, message: Message) -> None:
        self._send(message)

    def connected(self) -> None:
        if self.gameId is None:
            self.phase = "creating"
            self.send(Message(Cmd.CREATE, self.user, ""))
        else:
            self.phase = "joining"
            self.say(f"Joining game {self.gameId} as {self.user} ...")
            self.send(Message(Cmd.JOIN, self.user, self.gameId))
            self._arm(JOIN_TIMEOUT, self._joinTimedOut)

    def _arm(self, delay: float, call: Callable[[], None]) -> None:
        self._cancelTimer()
        self._timer = self.clock.callLater(delay, call)

    def _joinTimedOut(self) -> None:
        self._timer = None
        self.say(f"No answer to JOIN {self.gameId} within {JOIN_TIMEOUT:g} s: is the id right?")
        self.finish(1)

    def _cancelTimer(self) -> None:
        for call in (self._timer, self._drawAck):
            if call is not None and call.active():
                call.cancel()
        self._timer = self._drawAck = None

    def myTurn(self) -> bool:
        return self.phase == "playing" and self.board.turn == self.colour and not self.board.is_game_over()

    def received(self, message: Message) -> None:
        cmd = message.cmd
        if cmd == Cmd.ERROR:
            self._error(message.args)
        elif cmd == Cmd.OK:
            self._ok(message.args)
        elif cmd == Cmd.MOVE:
            self._opponentMoved(message.args)
        elif cmd == Cmd.DRAW:
            self.theirOffer = True
            self.say(f"{self.opponent} offers a draw: type 'draw' to accept, or move to decline.")
        elif cmd == Cmd.END:
            self._cancelTimer()
            text = message.args or "the game has ended"
            if self.verdict:
                # Our board already decided it; the original server may add "X ha abandonado"
                # when the winner leaves first, which is not how this game ended.
                self.say(f"GAME OVER: {self.verdict} (the server says: {text})")
            else:
                self.say(f"GAME OVER: {text}")
            self.phase = "over"
            self.finish(0)

    def _error(self, text: str) -> None:
        if self.phase == "creating":
            self._cancelTimer()
            self.say(f"The server refused: {text}")
            self.finish(1)
        elif self.phase == "joining" and self._refusal is None:
            # Final unless an OK follows: the original server joins a same-name player after its ERROR.
            self._refusal = text
            self._arm(ERROR_GRACE, self._refused)
        else:
            self.say(f"Server: {text}")
            if self.lastSent is not None and self.board.move_stack and self.board.peek() == self.lastSent:
                self.board.pop()
                self.lastSent = None
                self.say("Your move was not played.")
                self._prompt()

    def _refused(self) -> None:
        self._timer = None
        self.say(f"The server refused: {self._refusal}")
        self.finish(1)

    def _ok(self, args: str) -> None:
        if self.phase == "creating":
            self.gameId = args
            self.phase = "waiting"
            self.say(f"Game {args} created; you play White. Tell your opponent to run:")
            self.say(f"    gambit-client --user NAME --game {args}{self.serverOptions}")
            self.say("Waiting for your opponent ...")
        elif self.phase == "waiting":
            self._start(chess.WHITE, args)
        elif self.phase == "joining":
            self._cancelTimer()
            if self._refusal is not None:
                self.say(f"Server: {self._refusal} (and it joined us anyway, as the original Gambit server does)")
            self._start(chess.BLACK, args)
        elif self.phase == "playing" and self.myOffer and self._drawAck is not None:
            self._drawAck.cancel()
            self._drawAck = None
            self.say(f"Server: {args}.")
            if not self.drawHintGiven:
                self.drawHintGiven = True
                self.say(f"(If {self.opponent} plays with the original Gambit client, it does not see draw offers.)")

    def _start(self, colour: chess.Color, opponent: str) -> None:
        self.colour, self.opponent, self.phase = colour, opponent, "playing"
        if opponent == self.user:
            self.say(f"Your opponent is also called {opponent}: your moves go out without a user name.")
        if colour == chess.WHITE:
            self.say(f"{opponent} joined your game {self.gameId}. You play White. Type 'help' for commands.")
        else:
            self.say(f"You joined {opponent}'s game {self.gameId}. You play Black. Type 'help' for commands.")
        self.show()
        self._prompt()

    def _opponentMoved(self, args: str) -> None:
        if self.phase != "playing" or self.board.turn == self.colour:
            self.say(f"Ignored a move from the server out of turn: {args!r}")
            return
        try:
            move = parseMove(self.board, args, None)
        except IllegalMove as error:
            self.say(f"Ignored an unreadable move from {self.opponent}: {error}")
            return
        san = self.board.san(move)
        self.board.push(move)
        self.lastSent = None
        self.say(f"{self.opponent} played {san}")
        if self.myOffer:
            self._offerSettled()
            self.say(f"{self.opponent} played on: your draw offer is declined.")
        self.show()
        if self.board.is_checkmate():
            # The original server does not detect mate; its client announces it with END.
            self.say("Checkmate: you lost.")
            self.send(Message(Cmd.END, self._moveUser(), ""))
            self._over("checkmate, you lost")
            return
        outcome = gameOutcome(self.board)
        if outcome is not None:
            self.say(describeOutcome(outcome))
            self._over(describeOutcome(outcome))
            return
        self._prompt()

    def _offerSettled(self) -> None:
        self.myOffer = False
        if self._drawAck is not None and self._drawAck.active():
            self._drawAck.cancel()
        self._drawAck = None

    def _over(self, verdict: str) -> None:
        """The board says the game is over: wait briefly for the server's END, then leave."""
        self.phase = "over"
        self.verdict = verdict
        self._offerSettled()
        self._arm(END_GRACE, self._leaveAfterGame)

    def _leaveAfterGame(self) -> None:
        self._timer = None
        self.say(f"GAME OVER: {self.verdict} (the server sent no END; the original Gambit server does not)")
        self.finish(0)

    def _moveUser(self) -> str:
        """The ``User`` of what we send: our name, except as White against our own name.

        The original server sends a MOVE to White when its ``User`` is Black's
        name, else to Black: with both players named alike, White's moves
        would come back to White. An empty ``User`` reaches Black.
        """
        if self.colour == chess.WHITE and self.opponent == self.user:
            return ""
        return self.user

    def _prompt(self) -> None:
        if not self.myTurn():
            return
        if self.bot is not None:
            self._arm(self.botDelay, self._botMove)
        elif self.scripted is not None:
            self._nextScripted()
        else:
            self.say("Your move:")

    def _botMove(self) -> None:
        self._timer = None
        if self.myTurn() and self.bot is not None:
            self.play(chooseBotMove(self.board, self.bot).uci())

    def show(self) -> None:
        self.say(renderBoard(self.board, self.colour))

    def play(self, text: str) -> None:
        if not self.myTurn():
            self.say("Not your turn." if self.phase == "playing" else "The game has not started.")
            return
        try:
            move = parseMove(self.board, text, None)
        except IllegalMove as error:
            self.say(f"Illegal: {error}")
            self._prompt()
            return
        san = self.board.san(move)
        self.board.push(move)
        self.lastSent = move
        self.send(Message(Cmd.MOVE, self._moveUser(), f"{self.gameId}:{move.uci()}"))
        self.say(f"You played {san}")
        if self.theirOffer:
            self.theirOffer = False
            self.say(f"You played on: {self.opponent}'s draw offer is declined.")
        self.show()
        outcome = gameOutcome(self.board)
        if outcome is not None:
            self.say(describeOutcome(outcome))
            self._over(describeOutcome(outcome))

    def offerDraw(self) -> None:
        if self.phase != "playing":
            self.say("No game is running.")
            return
        self.send(Message(Cmd.DRAW, self.user, ""))
        if self.theirOffer:
            self.say("Draw accepted.")
            return
        self.myOffer = True
        self.say(f"Draw offered to {self.opponent}; it stands until {self.opponent} moves.")
        if self._drawAck is None:
            self._drawAck = self.clock.callLater(DRAW_ACK, self._drawNotConfirmed)

    def _drawNotConfirmed(self) -> None:
        self._drawAck = None
        self.say("The server did not confirm the draw offer: the original Gambit server ignores draw offers.")

    def command(self, line: str) -> None:
        word = line.strip()
        if not word:
            return
        if word == "help":
            self.say(HELP)
        elif word == "board":
            self.show()
        elif word == "draw":
            self.offerDraw()
        elif word == "resign":
            if self.phase == "playing":
                self.send(Message(Cmd.END, self._moveUser(), f"{self.user} resigns: {self.opponent} wins"))
                self.say("You resigned.")
                self.phase = "over"
                self._arm(0.3, lambda: self.finish(0))
        elif word in ("quit", "exit"):
            if self.phase == "over":
                return  # the game has ended already (standard input closing after it)
            self.say("Leaving the game.")
            self.phase = "over"
            self.finish(0)
        else:
            self.play(word)

    # -- a standard input that is not a terminal ---------------------------------------

    def scriptedLine(self, line: str) -> None:
        """A line from a file or a pipe: kept until the client can use it (it is never dropped)."""
        if self.scripted is None:
            self.scripted = []
        if line.strip():
            self.scripted.append(line)
        if self.myTurn():
            self._nextScripted()

    def scriptEnded(self) -> None:
        """Standard input is exhausted; leave when a move is wanted and none is left."""
        self.inputEnded = True
        if self.scripted is None:
            self.scripted = []
        if self.myTurn():
            self._nextScripted()

    def _nextScripted(self) -> None:
        assert self.scripted is not None
        if self.scripted:
            self.command(self.scripted.pop(0))
        elif self.inputEnded:
            self.say("Standard input has ended and it is your move: leaving the game.")
            self.command("quit")
