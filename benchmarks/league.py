"""Games per hour of ``velhanet-league`` against the number of workers, and ``socha-match --parallel N`` beside it.

    python benchmarks/league.py [--workers 1,2,4,8] [--games-per-worker 6] [--think 0.1] [--sandbox on]

For each N it plays the same two-player league (velhanet's example player
against its greedy variant, both with ``--think``: they wait before every
answer without using the processor, so that the workers and not the cores
are the limit) twice, one after the other on this machine:

- ``velhanet-league run`` with ``--workers N`` (a Dask LocalCluster of N
  one-thread workers on 127.0.0.1, every player sandboxed);
- ``socha-match --parallel N`` of the same two commands, the same number
  of games, the same sandbox: the baseline on one machine.

It prints for each the wall seconds of the whole command and two rates in
games per hour: ``whole`` (games / wall, what a user waits for, cluster
start included) and ``steady`` (from the moment the first N games have
ended to the last one: the rate once every worker is busy, read from the
game logs' modification times, the same way for both). Then the ratios the
issue asks for: the league's steady rate against N times its own rate with
one worker (goal ≥ 0.9), and the league's against socha-match's (goal
≥ 0.95). The machine is shared; compare ratios from
one run, not absolute times.

The overhead per game is split in two: ``start`` is the game process's time
beyond what the moves needed (moves × (think + the server's 50 ms between
memento and moveRequest, as the official server)): the room, both sandboxes
and programs starting and joining; ``between`` is a worker's time per game
beyond the game process's: Dask's scheduling, the task, the result and its
recording.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's velhanet, whatever is installed

from velhanet.socha.room import PACKET_GAP  # noqa: E402  (after the path above)

PLAYER = "{python} -m velhanet.socha.example --host {{host}} --port {{port}} --reservation {{reservation}}"


def commands(think: float) -> tuple[str, str]:
    random = PLAYER.format(python=sys.executable) + f" --think {think}"
    return random, random + " --greedy"


def steadyRate(finishes: list[float], workers: int) -> float:
    """Games per hour between the end of the first C{workers} games and the end of the last."""
    finishes = sorted(finishes)
    span = finishes[-1] - finishes[workers - 1]
    return (len(finishes) - workers) / span * 3600 if span > 0 else float("nan")


def environment() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def league(folder: Path, workers: int, games: int, think: float, sandbox: str) -> dict[str, float]:
    """One ``velhanet-league run``: wall seconds, rates, moves and the mean game seconds from its database."""
    players = folder / "players"
    for name, command in zip(("random", "greedy"), commands(think), strict=True):
        (players / name).mkdir(parents=True)
        (players / name / "velhanet-run").write_text(command + "\n")
    (folder / "league.toml").write_text(f'name = "bench"\nplayers = "players"\npairs = {games // 2}\nseed = 1\n')
    began = time.monotonic()
    runLeague = [sys.executable, "-m", "velhanet.league.cli", "run", str(folder / "league.toml")]
    subprocess.run(
        [*runLeague, f"--workers={workers}", f"--sandbox={sandbox}"],
        check=True,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.monotonic() - began
    with sqlite3.connect(folder / "league.db") as database:
        rows = database.execute("SELECT moves, seconds FROM games WHERE state = 'done'").fetchall()
    logs = [path.stat().st_mtime for path in (folder / "league-logs").glob("*.xml")]
    return {
        "wall": wall,
        "whole": len(rows) / wall * 3600,
        "steady": steadyRate(logs, workers),
        "moves": statistics.mean(moves for moves, _ in rows),
        "game": statistics.mean(seconds for _, seconds in rows),
    }


def match(folder: Path, workers: int, games: int, think: float, sandbox: str) -> dict[str, float]:
    """The same games through ``socha-match --parallel N``."""
    began = time.monotonic()
    options = [f"--games={games}", f"--parallel={workers}", "--seed=1", f"--log-dir={folder / 'logs'}"]
    subprocess.run(
        [sys.executable, "-m", "velhanet.socha.match", *commands(think), *options, f"--sandbox={sandbox}"],
        check=True,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.monotonic() - began
    logs = [path.stat().st_mtime for path in (folder / "logs").glob("*.xml")]
    return {"wall": wall, "whole": len(logs) / wall * 3600, "steady": steadyRate(logs, workers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts to try (default 1,2,4,8)")
    parser.add_argument("--games-per-worker", type=int, default=6, help="games per worker (default 6)")
    parser.add_argument("--think", type=float, default=0.1, help="seconds each player waits per move (default 0.1)")
    parser.add_argument("--sandbox", default="on", choices=("on", "off"), help="(default on)")
    arguments = parser.parse_args()
    counts = [int(count) for count in arguments.workers.split(",")]
    print(f"players wait {arguments.think} s per move; {arguments.games_per_worker} games per worker")
    print("N  games  league: wall  whole/h  steady/h  moves  game s  start s  between s", end="")
    print(" | match: wall  whole/h  steady/h")
    oneWorker = None
    for workers in counts:
        games = workers * arguments.games_per_worker
        games += games % 2  # whole game pairs
        with tempfile.TemporaryDirectory(prefix="velhanet-league-bench-") as scratch:
            ours = league(Path(scratch) / "league", workers, games, arguments.think, arguments.sandbox)
            theirs = match(Path(scratch) / "match", workers, games, arguments.think, arguments.sandbox)
        if workers == 1:
            oneWorker = ours["steady"]
        start = ours["game"] - ours["moves"] * (arguments.think + PACKET_GAP)
        between = workers / ours["steady"] * 3600 - ours["game"]
        print(
            f"{workers:<2} {games:>5}  {ours['wall']:>12.1f}  {ours['whole']:>7.0f}  {ours['steady']:>8.0f}"
            f"  {ours['moves']:>5.1f}  {ours['game']:>6.2f}  {start:>7.2f}  {between:>9.2f} | {theirs['wall']:>11.1f}"
            f"  {theirs['whole']:>7.0f}  {theirs['steady']:>8.0f}",
            flush=True,
        )
        scaling = f"{ours['steady'] / (workers * oneWorker):.2f}" if oneWorker else "-"
        print(
            f"   league steady / (N x one worker) = {scaling}; league / socha-match: "
            f"steady {ours['steady'] / theirs['steady']:.2f}, whole {ours['whole'] / theirs['whole']:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
