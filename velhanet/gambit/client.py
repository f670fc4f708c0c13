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


class ClientSession:
    """The client's logic, between a connection (``send``) and a screen (``say``)."""

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
    ) -> None:
        self.user, self.gameId = user, gameId
        self._send, self.say, self.finish, self.clock = send, say, finish, clock
        self.bot, self.botDelay = bot, botDelay
        self.phase = "connecting"
        self.colour: chess.Color = chess.WHITE
        self.opponent = ""
        self.board = chess.Board()
        self.lastSent: chess.Move | None = None
        self.drawOffered = False
        self._timer: IDelayedCall | None = None

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
            self._timer = self.clock.callLater(JOIN_TIMEOUT, self._joinTimedOut)

    def _joinTimedOut(self) -> None:
        self._timer = None
        self.say(f"No answer to JOIN {self.gameId} within {JOIN_TIMEOUT:g} s: is the id right?")
        self.finish(1)

    def _cancelTimer(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

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
            self.drawOffered = True
            self.say(f"{self.opponent} offers a draw: type 'draw' to accept, or just move.")
        elif cmd == Cmd.END:
            self._cancelTimer()
            self.say(f"GAME OVER: {message.args or 'the game has ended'}")
            self.phase = "over"
            self.finish(0)

    def _error(self, text: str) -> None:
        if self.phase in ("creating", "joining"):
            self._cancelTimer()
            self.say(f"The server refused: {text}")
            self.finish(1)
            return
        self.say(f"Server: {text}")
        if self.lastSent is not None and text.startswith("move refused") and self.board.move_stack:
            self.board.pop()
            self.lastSent = None
            self._prompt()

    def _ok(self, args: str) -> None:
        if self.phase == "creating":
            self.gameId = args
            self.phase = "waiting"
            self.say(f"Game {args} created; you play White. Tell your opponent to run:")
            self.say(f"    gambit-client --user NAME --game {args}")
            self.say("Waiting for your opponent ...")
        elif self.phase == "waiting":
            self._start(chess.WHITE, args)
        elif self.phase == "joining":
            self._cancelTimer()
            self._start(chess.BLACK, args)

    def _start(self, colour: chess.Color, opponent: str) -> None:
        self.colour, self.opponent, self.phase = colour, opponent, "playing"
        side = "White" if colour == chess.WHITE else "Black"
        self.say(f"{opponent} joined. You play {side}. Type 'help' for commands.")
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
        self.drawOffered = False
        self.say(f"{self.opponent} played {san}")
        self.show()
        if self.board.is_checkmate():
            # The original server does not detect mate; its client announces it with END.
            self.say("Checkmate: you lost.")
            self.send(Message(Cmd.END, self.user, ""))
            return
        outcome = gameOutcome(self.board)
        if outcome is not None:
            self.say(describeOutcome(outcome))
            return
        self._prompt()

    def _prompt(self) -> None:
        if not self.myTurn():
            return
        if self.bot is not None:
            self._timer = self.clock.callLater(self.botDelay, self._botMove)
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
            return
        san = self.board.san(move)
        self.board.push(move)
        self.lastSent = move
        self.send(Message(Cmd.MOVE, self.user, f"{self.gameId}:{move.uci()}"))
        self.say(f"You played {san}")
        self.show()
        outcome = gameOutcome(self.board)
        if outcome is not None:
            self.say(f"{describeOutcome(outcome)}; waiting for the server to close the game ...")

    def command(self, line: str) -> None:
        word = line.strip()
        if not word:
            return
        if word == "help":
            self.say(HELP)
        elif word == "board":
            self.show()
        elif word == "draw":
            if self.phase != "playing":
                self.say("No game is running.")
                return
            self.send(Message(Cmd.DRAW, self.user, ""))
            self.say("Draw accepted." if self.drawOffered else "Draw offered.")
        elif word == "resign":
            if self.phase == "playing":
                self.send(Message(Cmd.END, self.user, f"{self.user} resigns: {self.opponent} wins"))
                self.say("You resigned.")
                self.phase = "over"
                self.clock.callLater(0.3, self.finish, 0)
        elif word in ("quit", "exit"):
            self.finish(0)
        else:
            self.play(word)


class GambitClientProtocol(Protocol):
    """Bytes in and out for one session; sends one message at a time."""

    def __init__(self, session: ClientSession, trace: bool) -> None:
        self.session = session
        self.trace = trace
        self.decoder = JsonStreamDecoder()

    def connectionMade(self) -> None:
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


class _Console(LineReceiver):
    delimiter = b"\n"

    def __init__(self, onLine: Callable[[str], None], onClose: Callable[[], None]) -> None:
        self.onLine, self.onClose = onLine, onClose

    def lineReceived(self, line: bytes) -> None:
        self.onLine(line.decode("utf-8", "replace"))

    def connectionLost(self, reason: object = None) -> None:
        self.onClose()


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gambit-client", description="Play chess on a Gambit server.")
    parser.add_argument("--user", "-u", default=None, help="your name (default: your login name)")
    parser.add_argument("--game", "-g", default=None, help="join this game id (default: create a game)")
    parser.add_argument("--host", default="localhost", help="server host (default localhost)")
    parser.add_argument("--port", "-p", type=int, default=22022, help="server port (default 22022)")
    parser.add_argument("--bot", action="store_true", help="the computer plays")
    parser.add_argument("--bot-delay", type=float, default=0.5, help="seconds the bot waits before a move")
    parser.add_argument("--seed", type=int, default=None, help="seed for the bot")
    parser.add_argument("--trace", action="store_true", help="show every message in and out, raw and decoded")
    arguments = parser.parse_args(argv)
    if arguments.user is None:
        arguments.user = getpass.getuser()
    return arguments


def run(reactor: object, arguments: argparse.Namespace) -> Deferred[None]:
    done: Deferred[None] = Deferred()
    out = sys.stdout

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    def finish(code: int) -> None:
        if not done.called:
            if code:
                done.errback(SystemExit(code))
            else:
                done.callback(None)

    protocolHolder: list[GambitClientProtocol] = []
    session = ClientSession(
        arguments.user,
        arguments.game,
        send=lambda message: protocolHolder[0].send(message),
        say=say,
        finish=finish,
        clock=reactor,  # type: ignore[arg-type]
        bot=random.Random(arguments.seed) if arguments.bot else None,
        botDelay=arguments.bot_delay,
    )
    endpoint = TCP4ClientEndpoint(reactor, arguments.host, arguments.port, timeout=10)

    def connected(protocol: GambitClientProtocol) -> None:
        if not arguments.bot:
            StandardIO(_Console(session.command, lambda: finish(0)), reactor=reactor)

    def failed(failure: Failure) -> None:
        say(f"Cannot reach the Gambit server at {arguments.host}:{arguments.port}: {failure.getErrorMessage()}")
        finish(2)

    def build() -> GambitClientProtocol:
        protocol = GambitClientProtocol(session, arguments.trace)
        protocolHolder.append(protocol)
        return protocol

    endpoint.connect(Factory.forProtocol(build)).addCallbacks(connected, failed)  # type: ignore[arg-type]
    return done


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    react(run, (arguments,))
