"""A bot that plays a uniformly random legal move: for tests, and as a weak opponent."""

from __future__ import annotations

import random

from zope.interface import implementer

from velhanet.bots.interfaces import IBot
from velhanet.games.interfaces import IGameState, IllegalMove
from velhanet.i18n import _


@implementer(IBot)
class RandomBot:
    """Random legal moves from a seeded generator (so a failing test replays)."""

    def __init__(self, seed: int | None = None, *, allowPass: bool = False) -> None:
        self._random = random.Random(seed)
        self._allowPass = allowPass

    def chooseMove(self, state: IGameState) -> object:
        moves = state.legalMoves()
        if not self._allowPass:
            placing = [m for m in moves if type(m).__name__ != "Pass"]
            moves = placing or moves
        if not moves:
            raise IllegalMove(_("no legal move: the game is over"))
        return self._random.choice(moves)
