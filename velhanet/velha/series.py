"""The rules of a best-of-5 JogoVelha series, pure: no machine, no clock, no I/O.

The board itself is ``velhanet.games.kinarow``'s tic-tac-toe: it decides what
is legal, whose turn it is and how a game ends. This module adds only what
JogoVelha says on top of it: cells numbered 1–9 on the wire, the starter
plays X, three wins or five games end the series, and who starts the next
game. The match machine (``velhanet.velha.room``) asks these questions and
turns the answers into its inputs; the tests can ask them directly.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from velhanet.games.interfaces import IllegalMove, Outcome
from velhanet.games.kinarow import TICTACTOE, KInARowState, Place
from velhanet.i18n import N_
from velhanet.velha.said import said

WINS_NEEDED = 3
MAX_GAMES = 5


def positionToPlace(position: int) -> Place:
    """JogoVelha numbers cells 1–9 row by row; the engine uses (x, y) from 0."""
    return Place((position - 1) % 3, (position - 1) // 3)


def placeToPosition(place: Place) -> int:
    return place.y * 3 + place.x + 1


class AfterGame(enum.Enum):
    """What follows a finished game (text MSG09, and ``docs/velha.md`` after a draw)."""

    SERIES_OVER = enum.auto()
    """A third win, or the fifth game played."""
    I_START = enum.auto()
    """We lost, or drew a game we did not start: we send MSG09 and start the next."""
    THEY_START = enum.auto()
    """We won: the loser sends MSG09 and starts."""
    THEY_START_AFTER_DRAW = enum.auto()
    """We drew a game we started: the peer should start, which the original program never says."""


@dataclass
class Series:
    """The score, the current game and what velhanet has learned about the peer, from our side."""

    board: KInARowState = field(default_factory=TICTACTOE.initial)
    score: list[int] = field(default_factory=lambda: [0, 0])
    """Games won: [ours, theirs]."""
    gameNumber: int = 0
    iStarted: bool = False
    moves: list[tuple[int, bool]] = field(default_factory=list)
    """The current game's moves: (position, by us)."""
    peerEndedLastGame: bool = False
    """The peer's move ended the last game: the original then shows its result dialog on its UI thread
    and goes on reading, so a move of ours that arrives before its user closes the dialog is lost.
    (When our move ended it, the dialog blocks its reader: what we send meanwhile is only delayed.)"""
    peerStartsAnyway: bool = False
    """Learned: the peer has started a game that was ours (the original program does)."""

    def newGame(self, iStart: bool) -> None:
        self.gameNumber += 1
        self.restartGame(iStart)

    def restartGame(self, iStart: bool) -> None:
        """Begin the current game afresh, with the same number."""
        self.iStarted = iStart
        self.board = TICTACTOE.initial()
        self.moves = []

    def mySide(self) -> int:
        """Engine player index of our stones: the starter is player 0 (X)."""
        return 0 if self.iStarted else 1

    def play(self, position: int, byMe: bool) -> str | None:
        """Play ``position`` for us or the peer; the rule it breaks, or None.

        The engine decides; only a refused move is looked at again, to name
        the rule in JogoVelha's words (cells 1–9, a free position).
        """
        side = self.mySide() if byMe else 1 - self.mySide()
        place = positionToPlace(position)
        try:
            self.board = self.board.apply(place, player=side)
        except IllegalMove as error:
            if not 1 <= position <= 9:
                return said(
                    N_("position {position} is not on the board (text MSG08: positions 1 to 9)"), position=position
                )
            if self.board.stoneAt(place.x, place.y) is not None:
                return said(N_("position {position} is already taken (text MSG08: a free position)"), position=position)
            return said(N_("position {position}: {error}"), position=position, error=error)
        self.moves.append((position, byMe))
        return None

    def untouched(self) -> bool:
        """Nothing is on the board of the current game yet."""
        return self.board.moveCount == 0

    def ourFirstMoveOnly(self) -> bool:
        """A game after the first that we started, with nothing on the board but our first move."""
        return self.gameNumber > 1 and self.iStarted and self.board.moveCount == 1

    def firstMoveLost(self, position: int) -> bool:
        """Does the peer's move on ``position`` show that our first move of this game never reached it?

        Only in a game we started after one the peer ended (our first move may
        have arrived under its result dialog), and only when the peer now
        plays on the very cell of that first move, which it would never do if
        it had seen it.
        """
        return (
            self.gameNumber > 1
            and self.iStarted
            and self.peerEndedLastGame
            and bool(self.moves)
            and self.moves[0] == (position, True)
        )

    def quietStart(self) -> bool:
        """Start the next game without sending MSG09 until our first move goes out?

        Yes when the peer ended the last game and has been seen starting such
        games itself. The original program then opens its result dialog on
        its UI thread while its reader thread writes every message it reads
        into the same Swing table: a MSG09 read at that instant has crashed
        its UI thread, and once left its reader reading nothing more. It
        never needs our MSG09 (it moves first anyway), so the MSG09 waits
        with our first move, and is not sent at all when the peer starts.
        """
        return self.peerStartsAnyway and self.peerEndedLastGame

    def answersTheirFirstMoveAfterTheirEnding(self) -> bool:
        """Is our last move the answer to the peer's first move of a game after one the peer ended?

        The moment at which the original program's reader is seen to stop:
        it played its own first move from its UI thread, and never reads ours.
        """
        moves = self.moves
        return self.gameNumber > 1 and self.peerEndedLastGame and len(moves) == 2 and not moves[0][1] and moves[1][1]

    def scoreGame(self, outcome: Outcome) -> str:
        """Count a finished game: "won", "lost" or "draw", from our side."""
        self.peerEndedLastGame = not self.moves[-1][1]
        if outcome.winner is None:
            return "draw"
        if outcome.winner == self.mySide():
            self.score[0] += 1
            return "won"
        self.score[1] += 1
        return "lost"

    def afterGame(self, result: str) -> AfterGame:
        if self.seriesDecided():
            return AfterGame.SERIES_OVER
        if result == "lost" or (result == "draw" and not self.iStarted):
            return AfterGame.I_START
        if result == "won":
            return AfterGame.THEY_START
        return AfterGame.THEY_START_AFTER_DRAW

    def seriesDecided(self) -> bool:
        return max(self.score) >= WINS_NEEDED or self.gameNumber >= MAX_GAMES

    def lastGame(self) -> bool:
        """No game may follow this one, whatever its result."""
        return self.gameNumber >= MAX_GAMES

    def seriesResult(self) -> str:
        ours, theirs = self.score
        return "won" if ours > theirs else "lost" if theirs > ours else "draw"

    def scoreboard(self) -> tuple[int, int]:
        return (self.score[0], self.score[1])
