"""A heuristic gobang player: tactics first, then a window-count evaluation.

Every window of five cells in a row that holds no enemy stone is a place
where a five can still be made; the more of my stones it holds, the more
it is worth. A cell's value for a player is the sum over the windows
through it, which rewards open threes and fours (they lie in several live
windows) over blocked ones. On top of that, a fixed order of tactics:

1. complete a five if possible;
2. block the opponent's five;
3. make a double threat (two different cells that each complete a five,
   i.e. an open four or a double four) — the opponent cannot stop both;
4. stop the opponent's double threat (block the open three);
5. otherwise the best attack-plus-defence value, with a slight pull towards
   the centre and a seeded random choice among equals.

Only empty cells near existing stones are considered, so a move costs a few
milliseconds even on 15×15 (see ``benchmarks/gobang_bot.py``).
"""

from __future__ import annotations

import random
from typing import Final

from zope.interface import implementer

from velhanet.bots.interfaces import IBot
from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import EMPTY, PASS, KInARowState, Move, Place
from velhanet.i18n import _

WINDOW_VALUE: Final = (1, 12, 150, 2_000, 1_000_000)
"""Value of a live window by how many of the player's stones it already holds."""

DEFENCE_WEIGHT: Final = 0.85
"""How much blocking is worth next to building: slightly less, so a bot attacks when even."""

NEIGHBOURHOOD: Final = 2
"""Candidate moves lie within this many cells (king moves) of a stone."""


@implementer(IBot)
class GobangBot:
    """Plays any k-in-a-row board (built for gobang, k=5); never passes while it can place."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def chooseMove(self, state: KInARowState) -> Move:
        if state.outcome is not None or state.toMove is None:
            raise IllegalMove(_("no move to choose: the game is over"))
        me = state.toMove
        analysis = _Analysis(state)
        candidates = analysis.candidates()
        if not candidates:
            return PASS
        for tactic in (
            lambda: analysis.completing(me),
            lambda: analysis.completing(1 - me),
            lambda: analysis.doubleThreats(me, candidates),
            lambda: analysis.doubleThreats(1 - me, candidates),
        ):
            cells = tactic()
            if cells:
                return self._best(analysis, sorted(cells), me)
        return self._best(analysis, candidates, me)

    def _best(self, analysis: _Analysis, cells: list[int], me: int) -> Place:
        width = analysis.width
        centreX, centreY = (width - 1) / 2, (analysis.height - 1) / 2
        best: list[int] = []
        bestValue = float("-inf")
        for cell in cells:
            x, y = cell % width, cell // width
            value = (
                analysis.cellValue(cell, me)
                + DEFENCE_WEIGHT * analysis.cellValue(cell, 1 - me)
                - 0.01 * (abs(x - centreX) + abs(y - centreY))
            )
            if value > bestValue + 1e-9:
                best, bestValue = [cell], value
            elif abs(value - bestValue) <= 1e-9:
                best.append(cell)
        choice = self._random.choice(best)
        return Place(choice % width, choice // width)


class _Analysis:
    """Stone counts per window for one position, computed once per move choice."""

    def __init__(self, state: KInARowState) -> None:
        rules = state.rules
        self.width, self.height = rules.width, rules.height
        self.cells = state.cells
        self.windows = rules.geometry.windows
        self.cellWindows = rules.geometry.cellWindows
        cells = state.cells
        counts: tuple[list[int], list[int]] = ([0] * len(self.windows), [0] * len(self.windows))
        for index, window in enumerate(self.windows):
            black = white = 0
            for cell in window:
                value = cells[cell]
                if value == 1:
                    black += 1
                elif value == 2:
                    white += 1
            counts[0][index], counts[1][index] = black, white
        self.counts = counts
        self.k = rules.k

    def candidates(self) -> list[int]:
        """Empty cells near a stone; the centre on an empty board."""
        cells, width, height = self.cells, self.width, self.height
        if not any(cells):
            return [(height // 2) * width + width // 2]
        near: set[int] = set()
        for index, value in enumerate(cells):
            if value == EMPTY:
                continue
            x, y = index % width, index // width
            for ny in range(max(0, y - NEIGHBOURHOOD), min(height, y + NEIGHBOURHOOD + 1)):
                row = ny * width
                for nx in range(max(0, x - NEIGHBOURHOOD), min(width, x + NEIGHBOURHOOD + 1)):
                    if cells[row + nx] == EMPTY:
                        near.add(row + nx)
        return sorted(near)

    def completing(self, player: int) -> set[int]:
        """Cells where ``player`` would complete k in a row right now."""
        own, enemy = self.counts[player], self.counts[1 - player]
        found: set[int] = set()
        for index, window in enumerate(self.windows):
            if own[index] == self.k - 1 and enemy[index] == 0:
                found.update(cell for cell in window if self.cells[cell] == EMPTY)
        return found

    def threatsAfter(self, cell: int, player: int) -> set[int]:
        """Cells that would complete a row for ``player`` after it plays ``cell``."""
        own, enemy = self.counts[player], self.counts[1 - player]
        found: set[int] = set()
        for index in self.cellWindows[cell]:
            if own[index] == self.k - 2 and enemy[index] == 0:
                found.update(c for c in self.windows[index] if c != cell and self.cells[c] == EMPTY)
        return found

    def doubleThreats(self, player: int, candidates: list[int]) -> list[int]:
        """Candidate cells from which ``player`` would threaten two different completions."""
        return [cell for cell in candidates if len(self.threatsAfter(cell, player)) >= 2]

    def cellValue(self, cell: int, player: int) -> float:
        """Sum of the live windows through ``cell`` for ``player``, by their stone count."""
        own, enemy = self.counts[player], self.counts[1 - player]
        total = 0
        for index in self.cellWindows[cell]:
            if enemy[index] == 0:
                total += WINDOW_VALUE[min(own[index], len(WINDOW_VALUE) - 1)]
        return float(total)
