"""Perfect play for small k-in-a-row boards (tic-tac-toe) by exhaustive search.

Negamax over every continuation, memoised by position. A win is worth more
the sooner it comes, so the bot wins as fast as the opponent allows and, when
it cannot win, draws; among equally good moves it picks one at random
(seeded), which keeps games varied without ever giving anything away.
"""

from __future__ import annotations

import random
from typing import Final

from zope.interface import implementer

from velhanet.bots.interfaces import IBot
from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import EMPTY, KInARowRules, KInARowState, Place
from velhanet.i18n import _

SEARCH_LIMIT: Final = 16
"""Largest board (in cells) searched exhaustively; 3×3 takes a few milliseconds once."""

_memo: dict[tuple[KInARowRules, bytes, int], int] = {}


def _score(before: KInARowState, after: KInARowState, mover: int) -> int:
    """Value for ``mover`` of having moved from ``before`` to ``after``."""
    if after.outcome is not None:
        return before.cells.count(EMPTY) if after.outcome.winner == mover else 0
    return -_value(after)


def _value(state: KInARowState) -> int:
    """Value of ``state`` for the player to move, under perfect play by both.

    Positive: that player wins (larger = sooner); 0: draw; negative: loses.
    A position is fully described by its cells and the player to move (no
    passes in these games), which is the memo key.
    """
    mover = state.toMove
    assert mover is not None
    key = (state.rules, state.cells, mover)
    known = _memo.get(key)
    if known is not None:
        return known
    best = max(_score(state, state.apply(m), mover) for m in state.legalMoves() if isinstance(m, Place))
    _memo[key] = best
    return best


@implementer(IBot)
class PerfectBot:
    """Never loses a k-in-a-row game small enough to search completely."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def chooseMove(self, state: KInARowState) -> Place:
        if state.outcome is not None or state.toMove is None:
            raise IllegalMove(_("no move to choose: the game is over"))
        rules = state.rules
        if rules.width * rules.height > SEARCH_LIMIT:
            raise ValueError(
                _("{width}x{height} is too large for exhaustive search").format(width=rules.width, height=rules.height)
            )
        mover = state.toMove
        scored = [
            (_score(state, state.apply(move), mover), move) for move in state.legalMoves() if isinstance(move, Place)
        ]
        best = max(score for score, _ in scored)
        return self._random.choice([move for score, move in scored if score == best])
