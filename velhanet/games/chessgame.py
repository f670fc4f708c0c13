"""Chess behind velhanet's game interface, with the rules of the ``chess`` library.

No chess rule is written here: legality, check, mate, stalemate and the draw
rules all come from python-chess. What this module adds is the Gambit view
of a move: the text a client sends may be ``<gameid>:<uci>`` (the original
Go client), a FEN of the position after the move (the draft protocol text),
plain UCI (``e2e4``, ``e7e8q``) or SAN (``Nf3``, ``O-O``, ``exd8=Q+``).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
from zope.interface import implementer

from velhanet.games.interfaces import IGameRules, IGameState, IllegalMove, Outcome
from velhanet.i18n import N_

WHITE, BLACK = 0, 1


def _fenKey(fen: str) -> str:
    """The parts of a FEN that identify a position (placement, side, castling, en passant)."""
    return " ".join(fen.split()[:4])


MOVE_PROBLEMS = {
    "wrongGame": N_("the move is for game {given!r}, but this game is {game!r}"),
    "empty": N_("the move is empty"),
    "noSuchPosition": N_("no legal move leads to the position {payload!r}"),
    "illegal": N_("{payload} is not legal here"),
    "noPiece": N_("{payload} is not legal here: there is no piece on {square}"),
    "notYours": N_("{payload} is not legal here: the piece on {square} is not {side}'s"),
    "stillInCheck": N_("{payload} is not legal here: it does not get out of check"),
    "illegalSan": N_("{payload} is not legal in this position"),
    "ambiguous": N_("{payload} is ambiguous: say which piece (e.g. Nbd2) or use UCI"),
    "unreadable": N_("{payload!r} is not a move in UCI (e2e4), SAN (Nf3) or FEN"),
}
"""What a refused chess move can be; ``side`` is "White" or "Black" (shown translated: L{velhanet.gambit.texts})."""


class MoveRefused(IllegalMove):
    """An illegal chess move, with its ``kind`` (a key of L{MOVE_PROBLEMS}) and the details.

    The message is English; a server that speaks another language formats
    ``kind`` and ``details`` with its own words (``velhanet.gambit.texts``).
    """

    def __init__(self, kind: str, **details: str) -> None:
        self.kind = kind
        self.details = details
        super().__init__(MOVE_PROBLEMS[kind].format(**details))


def parseMove(board: chess.Board, text: str, gameId: str | None = None) -> chess.Move:
    """The legal move ``text`` stands for in ``board``, in any accepted notation.

    Raises L{MoveRefused} naming what was wrong.
    """
    payload = text.strip()
    if ":" in payload:
        prefix, _, payload = payload.partition(":")
        if gameId is not None and prefix.strip().lower() != gameId.lower():
            raise MoveRefused("wrongGame", given=prefix.strip(), game=gameId)
        payload = payload.strip()
    if not payload:
        raise MoveRefused("empty")
    if "/" in payload:
        wanted = _fenKey(payload)
        for candidate in board.legal_moves:
            board.push(candidate)
            reached = _fenKey(board.fen())
            board.pop()
            if reached == wanted:
                return candidate
        raise MoveRefused("noSuchPosition", payload=payload)
    uci: chess.Move | None
    try:
        uci = chess.Move.from_uci(payload.lower() if len(payload) in (4, 5) else payload)
    except (chess.InvalidMoveError, ValueError):
        uci = None
    if uci is not None:
        if board.is_legal(uci):
            return uci
        raise _why(board, uci, payload)
    try:
        return board.parse_san(payload)
    except chess.IllegalMoveError:
        raise MoveRefused("illegalSan", payload=payload) from None
    except chess.AmbiguousMoveError:
        raise MoveRefused("ambiguous", payload=payload) from None
    except (chess.InvalidMoveError, ValueError):
        raise MoveRefused("unreadable", payload=payload) from None


def _why(board: chess.Board, move: chess.Move, payload: str) -> MoveRefused:
    piece = board.piece_at(move.from_square)
    square = chess.square_name(move.from_square)
    if piece is None:
        return MoveRefused("noPiece", payload=payload, square=square)
    if piece.color != board.turn:
        return MoveRefused("notYours", payload=payload, square=square, side=_colour(board.turn))
    if board.is_check():
        return MoveRefused("stillInCheck", payload=payload)
    return MoveRefused("illegal", payload=payload)


def _colour(turn: bool) -> str:
    return "White" if turn == chess.WHITE else "Black"


REPETITION_PLIES = 4
"""Fewest plies between two occurrences of one position: each side moves away and back."""


def gameOutcome(board: chess.Board) -> chess.Outcome | None:
    """How the game stands after the last move, the claimable draws claimed at once.

    python-chess's ``outcome(claim_draw=True)`` also asks whether a draw could
    be claimed *by the next move*, trying every legal move: a millisecond per
    call. A relay only needs the position as it is: mate, stalemate,
    insufficient material, the 75-move and fivefold rules, and the threefold
    repetition and 50-move rule reached now.

    This runs after every move, so it asks the library's questions in the
    cheapest order: whether any legal move exists (one generator step; only
    when none does is ``outcome()`` asked which end it is), then the move
    counter. A repetition is looked for only when enough reversible plies
    were played for one to be possible: ``is_repetition`` walks the whole
    move stack, and a position can occur a third time only 2 ×
    L{REPETITION_PLIES} plies after a capture or pawn move at the earliest.
    """
    if not any(board.generate_legal_moves()):
        return board.outcome()  # checkmate or stalemate
    if board.is_insufficient_material():
        return chess.Outcome(chess.Termination.INSUFFICIENT_MATERIAL, None)
    if board.is_seventyfive_moves():
        return chess.Outcome(chess.Termination.SEVENTYFIVE_MOVES, None)
    if board.halfmove_clock >= 2 * REPETITION_PLIES and board.is_repetition(3):
        if board.halfmove_clock >= 4 * REPETITION_PLIES and board.is_fivefold_repetition():
            return chess.Outcome(chess.Termination.FIVEFOLD_REPETITION, None)
        return chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
    if board.is_fifty_moves():
        return chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    return None


def playForgetting(board: chess.Board, move: chess.Move) -> None:
    """Play ``move`` on ``board``, keeping only the history a rule can still look at.

    python-chess keeps a snapshot of the position for every ply (about
    500 bytes each: 20 KB per game at move 20, 20 MB for a thousand games
    on a server). After a capture or a pawn move no earlier position can
    come back, so the repetition rules (which ``is_repetition`` checks only
    back to the last irreversible move anyway) need nothing older, and the
    50- and 75-move rules count with ``halfmove_clock``, which is no history.
    A relay that does not show the move list can drop it there; on the
    bench's lines the stack then holds four plies on average.
    """
    board.push(move)
    if board.halfmove_clock == 0:
        board.clear_stack()


TERMINATIONS = {
    chess.Termination.CHECKMATE: N_("checkmate"),
    chess.Termination.STALEMATE: N_("stalemate"),
    chess.Termination.INSUFFICIENT_MATERIAL: N_("insufficient material"),
    chess.Termination.SEVENTYFIVE_MOVES: N_("75-move rule"),
    chess.Termination.FIVEFOLD_REPETITION: N_("fivefold repetition"),
    chess.Termination.FIFTY_MOVES: N_("50-move rule"),
    chess.Termination.THREEFOLD_REPETITION: N_("threefold repetition"),
}
"""How each way a game can end is named in English (translated where shown: L{velhanet.gambit.texts})."""


def describeOutcome(outcome: chess.Outcome) -> str:
    reasons = TERMINATIONS
    reason = reasons.get(outcome.termination, outcome.termination.name.lower())
    if outcome.winner is None:
        return f"draw by {reason}"
    return f"{_colour(outcome.winner)} wins by {reason}"


@implementer(IGameState)
@dataclass(frozen=True)
class ChessState:
    """An immutable chess position (the board is copied on every move)."""

    board: chess.Board
    gameId: str | None = None
    resignedBy: int | None = None

    @property
    def toMove(self) -> int | None:
        if self.outcome is not None:
            return None
        return WHITE if self.board.turn == chess.WHITE else BLACK

    @property
    def outcome(self) -> Outcome | None:
        if self.resignedBy is not None:
            return Outcome(1 - self.resignedBy, "resign")
        result = gameOutcome(self.board)
        if result is None:
            return None
        winner = None if result.winner is None else (WHITE if result.winner == chess.WHITE else BLACK)
        return Outcome(winner, describeOutcome(result))

    @property
    def moveCount(self) -> int:
        return len(self.board.move_stack)

    def legalMoves(self) -> list[chess.Move]:
        return [] if self.outcome is not None else list(self.board.legal_moves)

    def parse(self, text: str) -> chess.Move:
        return parseMove(self.board, text, self.gameId)

    def apply(self, move: object, player: int | None = None) -> ChessState:
        if self.outcome is not None:
            raise IllegalMove(f"the game is already over ({self.outcome.reason})")
        if player is not None and player != self.toMove:
            raise IllegalMove(f"it is not {('White', 'Black')[player]}'s turn: {_colour(self.board.turn)} is to move")
        if isinstance(move, str):
            move = self.parse(move)
        if not isinstance(move, chess.Move) or move not in self.board.legal_moves:
            raise IllegalMove(f"{move} is not legal in this position")
        board = self.board.copy(stack=True)
        board.push(move)
        return ChessState(board, self.gameId)

    def resign(self, player: int) -> ChessState:
        return ChessState(self.board, self.gameId, resignedBy=player)


@implementer(IGameRules)
@dataclass(frozen=True)
class ChessRules:
    name: str = "chess"

    def initial(self, gameId: str | None = None) -> ChessState:
        return ChessState(chess.Board(), gameId)
