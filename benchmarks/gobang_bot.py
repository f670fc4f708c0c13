"""Time the gobang bot on 15x15: median and worst move time over many positions.

Positions come from seeded games of the bot against a random player and
against itself, so they cover openings, crowded middle games and endgames.

    python -m benchmarks.gobang_bot [--games 40] [--size 15]
"""

from __future__ import annotations

import argparse
import statistics
import time

from velhanet.bots.gobang import GobangBot
from velhanet.bots.randombot import RandomBot
from velhanet.games.kinarow import KInARowState, gobangRules


def positions(games: int, size: int) -> list[KInARowState]:
    found: list[KInARowState] = []
    for seed in range(games):
        black = GobangBot(seed)
        white = GobangBot(seed + 1000) if seed % 2 else RandomBot(seed)
        state = gobangRules(size).initial()
        while state.outcome is None:
            found.append(state)
            player = black if state.toMove == 0 else white
            state = state.apply(player.chooseMove(state))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--size", type=int, default=15)
    args = parser.parse_args()
    sample = positions(args.games, args.size)
    bot = GobangBot(seed=0)
    timings: list[float] = []
    for state in sample:
        start = time.perf_counter()
        bot.chooseMove(state)
        timings.append(time.perf_counter() - start)
    timings.sort()
    print(f"gobang bot on {args.size}x{args.size}: {len(timings)} positions from {args.games} games")
    print(f"  median {statistics.median(timings) * 1000:.2f} ms")
    print(f"  p99    {timings[int(len(timings) * 0.99) - 1] * 1000:.2f} ms")
    print(f"  worst  {timings[-1] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
