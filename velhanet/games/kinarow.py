"""One engine for every k-in-a-row game on a W×H board.

Tic-tac-toe is 3×3 with k=3; the gobang of the FIFO exercise is N×N with
k=5, where five *or more* stones in a row win, a player may pass (two passes
in a row draw) and the game is drawn as soon as no line of five can still be
completed by either player ("wenn nirgendwo auf dem Brett mehr Platz zur
Vervollständigung einer Fünferreihe ist").

Coordinates are 0-based, ``x`` the column and ``y`` the row; protocols that
count from 1 (gobang) or number cells 1–9 (JogoVelha) convert at their edge.
Player 0 moves first (black in gobang, the starter in tic-tac-toe).

People read a square as gomoku and renju players write it, and as the
spectators' site labels its boards (L{squareName}): the column's letter from
the left, then the row's number counted from the bottom, ``h8`` the centre
of a 15×15 board; the engine's row 0 is the top row as drawn.

The early-draw test is incremental: every window of k cells in a row is
marked with the colours it holds, and a window holding both colours can never
be completed again. Placing a stone touches at most 4·k windows, so checking
the draw costs the same on a 63×63 board as on a 5×5 one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Final

from zope.interface import implementer

from velhanet.games.interfaces import IGameRules, IGameState, IllegalMove, Outcome

EMPTY: Final = 0
"""Value of an empty cell in L{KInARowState.cells}; player p's stones are p + 1."""

DIRECTIONS: Final = ((1, 0), (0, 1), (1, 1), (1, -1))
"""Row, column, diagonal and anti-diagonal: every line a winning row can lie on."""


@dataclass(frozen=True, slots=True)
class Place:
    """Put a stone on cell (x, y), 0-based."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Give up this turn (allowed only where the rules say so)."""


@dataclass(frozen=True, slots=True)
class Resign:
    """The player to move gives up the game."""


PASS: Final = Pass()
RESIGN: Final = Resign()
Move = Place | Pass | Resign


@dataclass(frozen=True, slots=True)
class _Geometry:
    """Precomputed windows of k cells for one (width, height, k), shared by all games."""

    windows: tuple[tuple[int, ...], ...]
    cellWindows: tuple[tuple[int, ...], ...]


@cache
def _geometry(width: int, height: int, k: int) -> _Geometry:
    windows: list[tuple[int, ...]] = []
    for y in range(height):
        for x in range(width):
            for dx, dy in DIRECTIONS:
                endX, endY = x + dx * (k - 1), y + dy * (k - 1)
                if 0 <= endX < width and 0 <= endY < height:
                    windows.append(tuple((y + dy * i) * width + x + dx * i for i in range(k)))
    perCell: list[list[int]] = [[] for _ in range(width * height)]
    for index, window in enumerate(windows):
        for cell in window:
            perCell[cell].append(index)
    return _Geometry(tuple(windows), tuple(tuple(w) for w in perCell))


@implementer(IGameRules)
@dataclass(frozen=True, slots=True)
class KInARowRules:
    """The parameters of one k-in-a-row game.

    ``allowPass``: a player may pass; two passes in a row draw.
    ``earlyDraw``: the game is drawn once no window of k cells is free of
    either colour. Off for tic-tac-toe, whose JogoVelha text draws only on a
    full board (both peers must agree on when a game ends).
    """

    name: str
    width: int
    height: int
    k: int
    allowPass: bool = False
    earlyDraw: bool = False

    def __post_init__(self) -> None:
        if not (1 <= self.width <= 64 and 1 <= self.height <= 64):
            raise ValueError(f"board {self.width}x{self.height} is not between 1x1 and 64x64")
        if not 1 <= self.k <= max(self.width, self.height):
            raise ValueError(f"k={self.k} does not fit on a {self.width}x{self.height} board")

    @property
    def geometry(self) -> _Geometry:
        return _geometry(self.width, self.height, self.k)

    def initial(self) -> KInARowState:
        return KInARowState(
            rules=self,
            cells=bytes(self.width * self.height),
            windowMarks=bytes(len(self.geometry.windows)),
            openWindows=len(self.geometry.windows),
        )

    def position(self, stones: Iterable[tuple[int, int, int]], toMove: int) -> KInARowState:
        """A position made from its stones (x, y, player) with ``toMove`` to play.

        For a client that sees the board from outside (a kibitzer, a bot
        behind a FIFO): the order of the moves is unknown, only the stones.
        """
        cells = bytearray(self.width * self.height)
        marks = bytearray(len(self.geometry.windows))
        openWindows = len(self.geometry.windows)
        for x, y, player in stones:
            index = y * self.width + x
            if not (0 <= x < self.width and 0 <= y < self.height) or cells[index] != EMPTY:
                raise IllegalMove(f"cannot put a stone on ({x}, {y})")
            cells[index] = player + 1
            for windowIndex in self.geometry.cellWindows[index]:
                before = marks[windowIndex]
                marks[windowIndex] = before | (1 << player)
                if before != 3 and marks[windowIndex] == 3:
                    openWindows -= 1
        return KInARowState(
            rules=self,
            cells=bytes(cells),
            windowMarks=bytes(marks),
            openWindows=openWindows,
            toMove=toMove,
            moveCount=len(cells) - cells.count(EMPTY),
        )


TICTACTOE: Final = KInARowRules("tictactoe", 3, 3, 3)


def columnName(x: int) -> str:
    """The letters of column ``x`` (0-based): ``a`` … ``z``, then ``aa``, ``ab`` … (boards up to 64 wide)."""
    name = ""
    x += 1
    while x:
        x, rest = divmod(x - 1, 26)
        name = chr(ord("a") + rest) + name
    return name


def squareName(rules: KInARowRules, x: int, y: int) -> str:
    """Square (x, y), 0-based with row 0 on top, as a person reads it: ``h8`` (the row counted from the bottom)."""
    return f"{columnName(x)}{rules.height - y}"


def gobangRules(size: int = 11) -> KInARowRules:
    """Gobang as the FIFO exercise plays it: five or more in a row, passes, early draw."""
    return KInARowRules("gobang", size, size, 5, allowPass=True, earlyDraw=True)


@implementer(IGameState)
@dataclass(frozen=True, slots=True)
class KInARowState:
    """An immutable k-in-a-row position; build the first one with L{KInARowRules.initial}.

    ``cells`` is row-major, ``y * width + x``, holding L{EMPTY} or player + 1.
    Copying a state copies two small ``bytes`` objects, so search is cheap.
    """

    rules: KInARowRules
    cells: bytes
    windowMarks: bytes = field(repr=False)
    openWindows: int = field(repr=False)
    toMove: int | None = 0
    outcome: Outcome | None = None
    moveCount: int = 0
    consecutivePasses: int = 0
    lastMove: Move | None = None

    # -- queries -----------------------------------------------------------

    def stoneAt(self, x: int, y: int) -> int | None:
        """The player whose stone is on (x, y), or None for an empty cell."""
        self._checkOnBoard(x, y)
        value = self.cells[y * self.rules.width + x]
        return None if value == EMPTY else value - 1

    def stones(self) -> list[tuple[int, int, int]]:
        """Every stone on the board as (x, y, player), row by row."""
        width = self.rules.width
        return [(i % width, i // width, v - 1) for i, v in enumerate(self.cells) if v != EMPTY]

    def hasLine(self, player: int) -> bool:
        """Does ``player`` have a winning line (k or more in a row) on the board?"""
        width, height, k = self.rules.width, self.rules.height, self.rules.k
        return any(
            winningLine(self.cells, width, height, k, x, y) for x, y, owner in self.stones() if owner == player
        )

    def legalMoves(self) -> list[Move]:
        """Every empty cell, plus L{PASS} where passing is allowed.

        Resigning is always allowed to the player to move and is left out,
        so that a bot choosing among legal moves never resigns by accident.
        """
        if self.outcome is not None:
            return []
        width = self.rules.width
        moves: list[Move] = [Place(i % width, i // width) for i, v in enumerate(self.cells) if v == EMPTY]
        if self.rules.allowPass:
            moves.append(PASS)
        return moves

    # -- the one way to change a game -------------------------------------

    def apply(self, move: object, player: int | None = None) -> KInARowState:
        if self.outcome is not None or self.toMove is None:
            raise IllegalMove(f"the game is already over ({_describe(self.outcome)})")
        if player is not None and player != self.toMove:
            raise IllegalMove(f"it is not player {player}'s turn: player {self.toMove} is to move")
        mover = self.toMove
        if isinstance(move, Resign):
            return self._next(move, outcome=Outcome(1 - mover, "resign"))
        if isinstance(move, Pass):
            if not self.rules.allowPass:
                raise IllegalMove(f"passing is not allowed in {self.rules.name}")
            passes = self.consecutivePasses + 1
            return self._next(
                move,
                consecutivePasses=passes,
                outcome=Outcome(None, "passes") if passes >= 2 else None,
            )
        if not isinstance(move, Place):
            raise IllegalMove(f"not a {self.rules.name} move: {move!r}")
        return self._place(move, mover)

    # -- internals ---------------------------------------------------------

    def _checkOnBoard(self, x: int, y: int) -> None:
        if not (0 <= x < self.rules.width and 0 <= y < self.rules.height):
            raise IllegalMove(
                f"cell ({x}, {y}) is off the {self.rules.width}x{self.rules.height} board"
                f" (x must be 0..{self.rules.width - 1}, y 0..{self.rules.height - 1})"
            )

    def _place(self, move: Place, mover: int) -> KInARowState:
        x, y = move.x, move.y
        self._checkOnBoard(x, y)
        rules = self.rules
        index = y * rules.width + x
        if self.cells[index] != EMPTY:
            raise IllegalMove(f"cell ({x}, {y}) is already occupied by player {self.cells[index] - 1}")
        cells = bytearray(self.cells)
        cells[index] = mover + 1
        line = winningLine(cells, rules.width, rules.height, rules.k, x, y)
        marks = bytearray(self.windowMarks)
        openWindows = self.openWindows
        colourBit = 1 << mover
        for windowIndex in rules.geometry.cellWindows[index]:
            before = marks[windowIndex]
            after = before | colourBit
            if before != 3 and after == 3:
                openWindows -= 1
            marks[windowIndex] = after
        outcome: Outcome | None
        if line:
            outcome = Outcome(mover, "line", line)
        elif rules.earlyDraw and openWindows == 0:
            outcome = Outcome(None, "blocked")
        elif EMPTY not in cells:
            outcome = Outcome(None, "full")
        else:
            outcome = None
        return self._next(
            move,
            cells=bytes(cells),
            windowMarks=bytes(marks),
            openWindows=openWindows,
            consecutivePasses=0,
            outcome=outcome,
        )

    def _next(self, move: Move, *, outcome: Outcome | None, **changes: object) -> KInARowState:
        fields: dict[str, object] = {
            "rules": self.rules,
            "cells": self.cells,
            "windowMarks": self.windowMarks,
            "openWindows": self.openWindows,
            "consecutivePasses": self.consecutivePasses,
        }
        fields.update(changes)
        return KInARowState(
            **fields,  # type: ignore[arg-type]
            toMove=None if outcome is not None else 1 - (self.toMove or 0),
            outcome=outcome,
            moveCount=self.moveCount + 1,
            lastMove=move,
        )


def winningLine(
    cells: bytes | bytearray, width: int, height: int, k: int, x: int, y: int
) -> tuple[tuple[int, int], ...]:
    """The longest run of at least k stones through (x, y), or () if there is none.

    Five *or more* count: an overline of six is a gobang win, as the text
    says ("mindestens fünf eigene Steine").
    """
    colour = cells[y * width + x]
    if colour == EMPTY:
        return ()
    best: tuple[tuple[int, int], ...] = ()
    for dx, dy in DIRECTIONS:
        run = [(x, y)]
        for sign in (1, -1):
            cx, cy = x + sign * dx, y + sign * dy
            while 0 <= cx < width and 0 <= cy < height and cells[cy * width + cx] == colour:
                run.append((cx, cy))
                cx, cy = cx + sign * dx, cy + sign * dy
        if len(run) >= k and len(run) > len(best):
            best = tuple(sorted(run, key=lambda c: c[0] * dx + c[1] * dy))
    return best


def _describe(outcome: Outcome | None) -> str:
    if outcome is None:
        return "unknown result"
    if outcome.winner is None:
        return f"drawn: {outcome.reason}"
    return f"player {outcome.winner} won: {outcome.reason}"
