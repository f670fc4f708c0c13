"""A chess game's moves as chess players read them, for the spectators' site: SAN with move numbers, and PGN.

The Gambit room reports each move in UCI (``e2e4``) and nothing more: SAN
needs the position, and the relay is measured per move. So the site turns a
game's UCI into SAN itself, here, only for a game someone watches or whose
PGN is asked for (L{velhanet.web.hub.GameRecord}), and incrementally: each
move is played once on the L{ChessRecord}'s own board, whoever asks and
however often. Imported only then, with the chess library.

A server with ``--no-validate`` relays what it is sent: from the first move
that is not legal in the record's position on, the moves are shown as they
came (the position is unknown from there), and the PGN stops before it.
"""

from __future__ import annotations

import datetime
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from velhanet.gambit.texts import Texts
from velhanet.games.chessrecord import ChessRecord, pgnText, resultOf
from velhanet.watching import Score

if TYPE_CHECKING:
    import chess


def numbered(index: int, text: str) -> str:
    """Half-move ``index`` (0: White's first) as the page lists it: ``1. e4`` for White, ``e5`` for Black."""
    return f"{index // 2 + 1}. {text}" if index % 2 == 0 else text


class PlayedMove(typing.Protocol):
    """A move as the hub keeps it (``hub.Move``): its text as it came, and its time if known."""

    text: str
    seconds: float | None


@dataclass
class SanList:
    """One game's moves in SAN, played on a board of its own up to the moves reported so far."""

    record: ChessRecord = field(default_factory=ChessRecord)
    shown: list[str] = field(default_factory=list)
    """Each half-move as the page lists it (``1. e4``, ``e5``, ``2. Nf3`` …)."""
    illegal: int | None = None
    """The index of the first move that was not legal (``--no-validate``): shown as it came, and all after it."""
    ends: dict[str, str] = field(default_factory=dict)
    """The game's end in each language a page asked for it (L{endIn})."""

    def follow(self, moves: Sequence[PlayedMove]) -> list[str]:
        """Translate the moves not translated yet; every move's text as the page lists it."""
        for move in moves[len(self.shown) :]:
            text = move.text
            if self.illegal is None:
                try:
                    text = self.record.play(move.text, move.seconds)
                except ValueError:
                    self.illegal = len(self.shown)
            self.shown.append(numbered(len(self.shown), text))
        return self.shown

    def boardAfter(self, moves: int) -> chess.Board:
        """The position after ``moves`` half-moves; past the first move that was not legal, the one before it."""
        board = self.record.start.copy(stack=False)
        for move in self.record.moves[:moves]:
            board.push(move)
        return board

    def pgn(
        self, white: str, black: str, ended: str | None, site: str, startedAt: float, score: Score | None = None
    ) -> str:
        """The game so far as PGN: the tags, the legal moves with their times, the result and why it ended."""
        result, termination = self.ending(ended, score)
        date = datetime.datetime.fromtimestamp(startedAt, datetime.UTC).date()
        return pgnText(self.record.game(white, black, result, termination, site=site, date=date))

    def ending(self, ended: str | None, score: Score | None = None) -> tuple[str, str]:
        """PGN's ``Result`` and ``Termination`` from the board and the room's end text (None: still playing).

        The Gambit room reports its ``score`` with every end (who won off the board, and how); without one,
        ``Result`` is the one in the end text (``Black wins by checkmate (0-1)``, L{resultOf}) or the board's
        when it is over; ``*`` while playing or when unknown. ``Termination`` in PGN's words:
        ``normal`` (the rules, an agreement, a resignation), ``abandoned`` (a player left), ``rules
        infraction`` (a move that is not legal was relayed), ``unterminated``.
        """
        if ended is None:
            return "*", "unterminated"
        if self.illegal is not None:
            return "*", "rules infraction"
        if score is not None:
            return score.result, score.termination
        result = resultOf(ended)
        outcome = self.record.outcome()
        if result == "*" and outcome is not None:
            result = outcome.result()
        if result != "*":
            return result, "normal"
        return "*", "unterminated"

    def endIn(self, language: str, score: Score, players: Sequence[str]) -> str:
        """The end of a Gambit game as a page in ``language`` says it, from its room's ``score`` and the board: the
        room's own text is in the server's language (Spanish, as the original server's, unless ``--language``)."""
        said = self.ends.get(language)
        if said is None:
            said = self.ends[language] = Texts(language).ended(score, self.record.outcome(), players)
        return said


class KeepsSan(typing.Protocol):
    """A game that keeps its moves in SAN (``hub.GameRecord``)."""

    def san(self) -> SanList: ...


def stepsOf(record: Callable[[], KeepsSan | None]) -> Callable[[int], str]:
    """A finished chess game's boards, through a weak reference: its record holds their cache, and the cache must
    not hold the record (a forgotten game is freed at once, not at the cyclic collector's next pass)."""
    from velhanet.web.boards import chessBoard

    def boardAt(moves: int) -> str:
        return "" if (alive := record()) is None else chessBoard(alive.san().boardAfter(moves))

    return boardAt
