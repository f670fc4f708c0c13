"""What the sandbox costs: start-up per program, and a whole socha-match sandboxed against ``--sandbox off``.

    python benchmarks/sandbox.py startup [--runs 20]
    python benchmarks/sandbox.py match [--games 100] [--parallel 2] [--rounds 2]

``startup`` spawns one trivial program (this Python, ``-c "print(1)"``) from a
reactor, sandboxed and not, alternately, and prints the median seconds from
the spawn to its first line of output: what the sandbox adds before a
player can even connect (not counted against its first move: the server
starts timing at the move request).

``match`` plays the same ``socha-match`` of two example players (random
moves, seeded) with ``--sandbox on`` and ``--sandbox off``, alternately,
``--rounds`` times, and prints for each the wall seconds of the whole match,
the moves played, the CPU seconds of everything the match ran (the runner,
its server, the players, bwrap: the children's rusage) per move, and the
players' answer times as the observer saw them. Compare the ratios in one
run; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's velhanet, whatever is installed


def startup(runs: int) -> None:
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred, ensureDeferred

    from velhanet.sandbox import Sandbox, SandboxSettings
    from velhanet.sandbox.program import spawn
    from velhanet.sandbox.userns import enterUserNamespace

    enterUserNamespace()
    sandboxes = {mode: Sandbox.forCommand(SandboxSettings(mode), say=print) for mode in ("on", "off")}
    seconds: dict[str, list[float]] = {"on": [], "off": []}

    async def once(mode: str) -> None:
        began = time.perf_counter()
        program = spawn(sandboxes[mode], reactor, [sys.executable, "-c", "print(1)"], cwd=Path("/tmp"))
        firstLine: Deferred[None] = Deferred()
        original = program.childDataReceived

        def seen(fd: int, data: bytes) -> None:
            original(fd, data)
            if fd == 1 and not firstLine.called:
                firstLine.callback(None)

        program.childDataReceived = seen  # type: ignore[method-assign,assignment]
        await firstLine
        seconds[mode].append(time.perf_counter() - began)
        await program.ended

    async def all() -> None:
        for _ in range(runs):
            for mode in ("on", "off"):
                await once(mode)
        reactor.stop()

    reactor.callWhenRunning(lambda: ensureDeferred(all()))
    reactor.run()
    on, off = statistics.median(seconds["on"]), statistics.median(seconds["off"])
    print(
        f"start-up to first output, median of {runs}: sandboxed {on * 1000:.0f} ms, --sandbox off {off * 1000:.0f} ms"
    )
    print(f"the sandbox adds {(on - off) * 1000:.0f} ms per program ({on / off:.2f}x)")


def match(games: int, parallel: int, rounds: int) -> None:
    example = (
        f"{sys.executable} -m velhanet.socha.example --host {{host}} --port {{port}} --reservation {{reservation}}"
    )
    rows = []
    for round in range(rounds):
        for mode in ("on", "off"):
            logs = Path(tempfile.mkdtemp(prefix=f"velhanet-bench-{mode}-"))
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            subprocess.run(
                [
                    *(sys.executable, "-m", "velhanet.socha.match", example, example + " --seed {seed}"),
                    *("--games", str(games), "--parallel", str(parallel), "--sandbox", mode, "--log-dir", str(logs)),
                ],
                cwd=ROOT,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - began
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            data = json.loads((logs / "summary.json").read_text())
            moves = sum(game["moves"] for game in data["games"])
            answers = [t for game in data["games"] for side in game["answerTimes"] for t in side]
            rows.append((round, mode, wall, moves, cpu, statistics.median(answers)))
            print(
                f"round {round + 1} --sandbox {mode:3}: {games} games in {wall:6.1f} s, {moves} moves,"
                f" CPU {cpu * 1e3 / moves:6.2f} ms/move, median answer {statistics.median(answers) * 1000:.1f} ms",
                flush=True,
            )
    on = [row for row in rows if row[1] == "on"]
    off = [row for row in rows if row[1] == "off"]
    wallRatio = sum(r[2] for r in on) / sum(r[2] for r in off)
    cpuRatio = (sum(r[4] for r in on) / sum(r[3] for r in on)) / (sum(r[4] for r in off) / sum(r[3] for r in off))
    print(f"sandboxed / --sandbox off: wall {wallRatio:.2f}x, CPU per move {cpuRatio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    up = sub.add_parser("startup")
    up.add_argument("--runs", type=int, default=20)
    games = sub.add_parser("match")
    games.add_argument("--games", type=int, default=100)
    games.add_argument("--parallel", type=int, default=2)
    games.add_argument("--rounds", type=int, default=2)
    arguments = parser.parse_args()
    if arguments.what == "startup":
        startup(arguments.runs)
    else:
        match(arguments.games, arguments.parallel, arguments.rounds)


if __name__ == "__main__":
    main()
