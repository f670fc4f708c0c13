"""``gambit-client``: play chess on a Gambit server from the terminal, or let a bot play.

    gambit-client --user alice                 # create a game, print its id
    gambit-client --user bob --game e215       # join it
    gambit-client --user carol --bot           # the computer plays

Works with velhanet's server and with the original Go server: moves go out
as ``<gameid>:<uci>`` like the original client's, one message at a time;
incoming moves are accepted as ``id:uci``, UCI, SAN or FEN. Moves are
checked locally (python-chess) before they are sent.
"""

from __future__ import annotations

import argparse
import getpass
import random
import sys
from collections.abc import Callable

import chess
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.stdio import StandardIO
from twisted.protocols.basic import LineReceiver
from twisted.python.failure import Failure

from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message, encode
from velhanet.games.chessgame import describeOutcome, gameOutcome, parseMove
from velhanet.games.interfaces import IllegalMove
from velhanet.sendnow import noDelay

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 22022

JOIN_TIMEOUT = 10.0
"""The original server never answers a JOIN for an unknown id: give up after this long."""

PIECE_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def chooseBotMove(board: chess.Board, rng: random.Random) -> chess.Move:
    """A simple, not random player: mate if it can, win material, avoid hanging pieces."""
    best: list[chess.Move] = []
    bestScore = float("-inf")
    for move in board.legal_moves:
        score = 0.0
        mover = board.piece_type_at(move.from_square) or chess.PAWN
        captured = board.piece_type_at(move.to_square)
        if board.is_en_passant(move):
            captured = chess.PAWN
        if captured:
            score += PIECE_VALUE[captured]
        if move.promotion:
            score += PIECE_VALUE[move.promotion] - 1
        board.push(move)
        if board.is_checkmate():
            score += 1000
        elif board.is_stalemate() or board.is_insufficient_material():
            score -= 50
        else:
            if board.is_check():
                score += 0.3
            if board.is_attacked_by(board.turn, move.to_square):
                defended = board.is_attacked_by(not board.turn, move.to_square)
                score -= (
                    PIECE_VALUE[mover]
                    if not defended
                    else max(0, PIECE_VALUE[mover] - (PIECE_VALUE[captured] if captured else 0))
                )
            file, rank = chess.square_file(move.to_square), chess.square_rank(move.to_square)
            score += 0.05 * (3.5 - abs(3.5 - file)) + 0.05 * (3.5 - abs(3.5 - rank))
        board.pop()
        if score > bestScore + 1e-9:
            best, bestScore = [move], score
        elif abs(score - bestScore) <= 1e-9:
            best.append(move)
    return rng.choice(best)


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


class GambitClientProtocol(Protocol):
    """Bytes in and out for one session; sends one message at a time."""

    def __init__(self, session: ClientSession, trace: bool, onClosed: Callable[[], None] = lambda: None) -> None:
        self.session = session
        self.trace = trace
        self.onClosed = onClosed
        self.decoder = JsonStreamDecoder()

    def connectionMade(self) -> None:
        noDelay(self.transport)
        self.session.connected()

    def send(self, message: Message) -> None:
        raw = encode(message)
        if self.trace:
            self.session.say(f"[-> {raw.decode().rstrip()}]  {message.describe()}")
        assert self.transport is not None
        self.transport.write(raw)

    def dataReceived(self, data: bytes) -> None:
        for raw, item in self.decoder.feed(data):
            if self.trace:
                self.session.say(f"[<- {raw}]  {item.describe() if isinstance(item, Message) else item}")
            if isinstance(item, MalformedMessage):
                self.session.say(f"The server sent something unreadable: {item}")
                continue
            self.session.received(item)

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self.session.phase != "over":
            self.session.say(f"Connection to the server closed: {reason.getErrorMessage()}")
            self.session.finish(0 if self.session.phase == "playing" else 1)
        self.onClosed()


class _Console(LineReceiver):
    delimiter = b"\n"

    def __init__(self, onLine: Callable[[str], None], onClose: Callable[[], None]) -> None:
        self.onLine, self.onClose = onLine, onClose

    def lineReceived(self, line: bytes) -> None:
        self.onLine(line.decode("utf-8", "replace"))

    def connectionLost(self, reason: object = None) -> None:
        self.onClose()


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gambit-client",
        description="Play chess on a Gambit server (velhanet's or the original Go one). "
        "Moves are typed in SAN or UCI; with standard input from a file or a pipe, each line is played "
        "when it is your turn.",
    )
    parser.add_argument("--user", "-u", default=None, help="your name (default: your login name)")
    parser.add_argument("--game", "-g", default=None, help="join this game id (default: create a game)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"server host (default {DEFAULT_HOST})")
    parser.add_argument("--port", "-p", type=int, default=DEFAULT_PORT, help=f"server port (default {DEFAULT_PORT})")
    parser.add_argument("--bot", action="store_true", help="the computer plays")
    parser.add_argument(
        "--bot-delay", type=float, default=0.5, help="seconds the bot waits before a move (default 0.5)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot")
    parser.add_argument("--trace", action="store_true", help="show every message in and out, raw and decoded")
    arguments = parser.parse_args(argv)
    if arguments.user is None:
        arguments.user = getpass.getuser()
    return arguments


def serverOptions(arguments: argparse.Namespace) -> str:
    """``--host``/``--port`` as an opponent must give them to reach the same server."""
    options = ""
    if arguments.host != DEFAULT_HOST:
        options += f" --host {arguments.host}"
    if arguments.port != DEFAULT_PORT:
        options += f" --port {arguments.port}"
    return options


def run(reactor: object, arguments: argparse.Namespace) -> Deferred[None]:
    done: Deferred[None] = Deferred()
    out = sys.stdout
    exitCode: list[int] = []
    protocolHolder: list[GambitClientProtocol] = []

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    def closed() -> None:
        """The connection is gone: now the process may end, with the code finish() chose."""
        if not done.called:
            code = exitCode[0] if exitCode else 0
            if code:
                done.errback(SystemExit(code))
            else:
                done.callback(None)

    def finish(code: int) -> None:
        """End the session: close the connection cleanly first, so that what we sent is delivered."""
        if exitCode:
            return
        exitCode.append(code)
        session.phase = "over"
        transport = protocolHolder[0].transport if protocolHolder else None
        if transport is None:
            closed()
        else:
            transport.loseConnection()

    session = ClientSession(
        arguments.user,
        arguments.game,
        send=lambda message: protocolHolder[0].send(message),
        say=say,
        finish=finish,
        clock=reactor,  # type: ignore[arg-type]
        bot=random.Random(arguments.seed) if arguments.bot else None,
        botDelay=arguments.bot_delay,
        serverOptions=serverOptions(arguments),
    )
    endpoint = TCP4ClientEndpoint(reactor, arguments.host, arguments.port, timeout=10)

    def connected(protocol: GambitClientProtocol) -> None:
        if arguments.bot:
            return
        if sys.stdin.isatty():
            StandardIO(_Console(session.command, lambda: session.command("quit")), reactor=reactor)
        else:
            StandardIO(_Console(session.scriptedLine, session.scriptEnded), reactor=reactor)

    def failed(failure: Failure) -> None:
        say(f"Cannot reach the Gambit server at {arguments.host}:{arguments.port}: {failure.getErrorMessage()}")
        exitCode.append(2)
        closed()

    def build() -> GambitClientProtocol:
        protocol = GambitClientProtocol(session, arguments.trace, onClosed=closed)
        protocolHolder.append(protocol)
        return protocol

    endpoint.connect(Factory.forProtocol(build)).addCallbacks(connected, failed)  # type: ignore[arg-type]
    return done


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    react(run, (arguments,))
