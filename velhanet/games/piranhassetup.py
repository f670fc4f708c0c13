"""How a game of Piranhas begins: the official random setup, and the rules object that deals it.

The board is symmetric: team ONE on the left and right edges, team TWO on the
bottom and top ones, fish of the same random sizes mirrored (S:M:L = 4:3:2),
and two squids in the inner block 2…7, never on one row, column or diagonal
(backend ``Board.randomFields``). The rules of play are in ``piranhas.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from zope.interface import implementer

from velhanet.games.interfaces import IGameRules
from velhanet.games.piranhas import ONE, SIZE, SQUID, TWO, PiranhasState, fish


def randomBoard(rng: random.Random) -> bytes:
    """The official setup: symmetric random fish sizes and two squids apart."""
    cells = bytearray(SIZE * SIZE)

    def size() -> int:
        roll = rng.randrange(9)
        return 1 if roll < 4 else 2 if roll < 7 else 3

    for index in range(1, SIZE - 1):
        first, second = size(), size()
        cells[index * SIZE + 0] = fish(ONE, first)
        cells[0 * SIZE + index] = fish(TWO, first)
        cells[index * SIZE + SIZE - 1] = fish(ONE, second)
        cells[(SIZE - 1) * SIZE + index] = fish(TWO, second)
    squids: list[tuple[int, int]] = []
    while len(squids) < 2:
        x, y = rng.randint(2, 7), rng.randint(2, 7)
        if all(x != sx and y != sy and x - y != sx - sy and x + y != sx + sy for sx, sy in squids):
            squids.append((x, y))
            cells[y * SIZE + x] = SQUID
    return bytes(cells)


@implementer(IGameRules)
@dataclass(frozen=True)
class PiranhasRules:
    name: str = "swc_2026_piranhas"

    def initial(self, rng: random.Random | None = None) -> PiranhasState:
        return PiranhasState(randomBoard(rng or random.Random()))
