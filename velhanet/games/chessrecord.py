"""A chess game as chess players write it: SAN with move numbers, and PGN from python-chess's writer.

Every chess site, book and program writes ``1. e4 e5 2. Bd3 d6``: one number per
move of both sides, each half-move in standard algebraic notation. The servers
relay moves in UCI (``e2e4``) and keep no history (``chessgame.playForgetting``),
so a L{ChessRecord} replays the moves of one game on a board of its own, only
where a person reads them: the spectators' page, a client's console, a PGN file.
Nothing here is written by hand that python-chess does: SAN comes from
``Board.san``, PGN from ``chess.pgn``.
"""

from __future__ import annotations

import datetime
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import chess
import chess.pgn

from velhanet.games.chessgame import gameOutcome

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
"""The four PGN results."""

_RESULT_IN_TEXT = re.compile(r"\((1-0|0-1|1/2-1/2)\)\s*$")


def numberedSan(sans: Sequence[str], whiteFirst: bool = True, fullmove: int = 1) -> str:
    """``1. e4 e5 2. Bd3``: the half-moves ``sans`` with move numbers (``1... e5`` when Black begins)."""
    parts: list[str] = []
    white = whiteFirst
    for index, san in enumerate(sans):
        if white:
            parts.append(f"{fullmove}. {san}")
        elif index == 0:
            parts.append(f"{fullmove}... {san}")
        else:
            parts.append(san)
        if not white:
            fullmove += 1
        white = not white
    return " ".join(parts)


def resultOf(text: str | None) -> str:
    """The PGN result a Gambit end text carries (``Black wins by checkmate (0-1)``), else ``*``."""
    match = _RESULT_IN_TEXT.search(text or "")
    return match.group(1) if match else "*"


def emt(seconds: float) -> str:
    """The PGN comment of the time a move took (``[%emt 0:00:03.2]``, as lichess and ChessBase write it)."""
    tenths = round(seconds * 10)
    whole, tenth = divmod(tenths, 10)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"[%emt {hours}:{minutes:02d}:{secs:02d}.{tenth}]"


@dataclass
class ChessRecord:
    """The moves of one game in SAN, with the seconds each took; its PGN on request."""

    start: chess.Board = field(default_factory=chess.Board)
    moves: list[chess.Move] = field(default_factory=list)
    sans: list[str] = field(default_factory=list)
    seconds: list[float | None] = field(default_factory=list)
    board: chess.Board = field(init=False)

    def __post_init__(self) -> None:
        self.board = self.start.copy(stack=False)

    def play(self, move: chess.Move | str, seconds: float | None = None) -> str:
        """Add one half-move (a ``chess.Move`` or its UCI); its SAN, check and mate marks included.

        Raises ``ValueError`` when the move is not legal in the record's position
        (a server without validation may relay anything): the caller shows the
        text as it came.
        """
        chosen = move if isinstance(move, chess.Move) else chess.Move.from_uci(move.strip())  # ValueError
        if not self.board.is_legal(chosen):
            raise ValueError(f"{chosen.uci()} is not legal in {self.board.fen()}")
        san = self.board.san(chosen)
        self.board.push(chosen)
        self.moves.append(chosen)
        self.sans.append(san)
        self.seconds.append(seconds)
        return san

    def undo(self) -> None:
        """Take the last half-move back (a server refused it)."""
        self.board.pop()
        del self.moves[-1], self.sans[-1], self.seconds[-1]

    def numberedLast(self) -> str:
        """The last half-move with its number: ``12. Nf3`` for White, ``12... Nc6`` for Black."""
        board = self.board
        number = board.fullmove_number if board.turn == chess.BLACK else board.fullmove_number - 1
        return f"{number}{'.' if board.turn == chess.BLACK else '...'} {self.sans[-1]}"

    def numbered(self) -> str:
        return numberedSan(self.sans, self.start.turn == chess.WHITE, self.start.fullmove_number)

    def outcome(self) -> chess.Outcome | None:
        """How the game stands, by the rules the servers apply (claimable draws claimed at once)."""
        return gameOutcome(self.board)

    def game(
        self,
        white: str,
        black: str,
        result: str = "*",
        termination: str | None = None,
        event: str = "velhanet Gambit game",
        site: str = "?",
        date: datetime.date | None = None,
    ) -> chess.pgn.Game:
        """The game as python-chess's PGN tree: the seven tags, ``Termination``, and the move times as comments."""
        game = chess.pgn.Game()
        game.headers["Event"] = event
        game.headers["Site"] = site
        game.headers["Date"] = (date or datetime.date.today()).strftime("%Y.%m.%d")
        game.headers["Round"] = "-"
        game.headers["White"] = white
        game.headers["Black"] = black
        game.headers["Result"] = result if result in RESULTS else "*"
        if termination:
            game.headers["Termination"] = termination
        if self.start.fen() != chess.STARTING_FEN:
            game.setup(self.start)
        node: chess.pgn.GameNode = game
        for move, seconds in zip(self.moves, self.seconds, strict=True):
            node = node.add_variation(move)
            if seconds is not None:
                node.comment = emt(seconds)
        return game


def pgnText(game: chess.pgn.Game) -> str:
    """A game as PGN text (python-chess's exporter: tags, moves, comments), ending in a newline."""
    return game.accept(chess.pgn.StringExporter(headers=True, variations=False, comments=True)) + "\n"


def readGames(text: str) -> list[chess.pgn.Game]:
    """Every game of a PGN text, read with python-chess's own reader (the check that a file opens anywhere)."""
    games = []
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games
