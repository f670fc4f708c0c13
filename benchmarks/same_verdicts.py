"""The same program, the same report: a class of deterministic programs graded many times, many ways.

    python benchmarks/same_verdicts.py [--families gambit,gobang,socha,velha,socha-player] [--times 5]
                                       [--modes seq,par,stress,cluster] [--scheduler tcp://198.18.0.1:8786]
                                       [--keep DIR] [--verdicts FILE [--first N]]

It builds one class per family in a temporary folder: velhanet's own
implementation and one student per fault of the family's faulty stand-in
(each program copied into its own folder, as a sandboxed program sees its own
folder only), and for ``socha-player`` velhanet's players, the faulty player
and the hostile folders. Every one of them does the same thing every time
(the two racy Gambit stand-ins too: in one run they never reach their seventh
JOIN or second END). Then, for each mode, it grades each class ``--times``
times with ``velhanet-grade FAMILY CLASS --again``:

- ``seq``: ``--workers 1``;
- ``par``: ``--workers 4``;
- ``stress``: ``--workers 4`` with ``stress-ng --cpu 2`` running beside it
  (a busy machine: two processes that want every core);
- ``cluster``: ``--scheduler`` (a running Dask cluster; ``benchmarks/two_hosts.sh``
  makes one of two network namespaces on a bridge, 198.18.0.1 and 198.18.0.2).

Every grading's verdicts (per student, rule id → status, and "cannot test"
with the first words of its reason) are compared with the first sequential
grading's: it prints, per mode, the gradings done, their wall seconds and the
number of verdicts that differed (the goal is 0), then a line per verdict
that differed. ``--verdicts FILE`` keeps every grading's verdicts (JSON) and
adds to it on a later invocation, so that a cluster run in another shell is
compared with the local runs. The machine may be shared: the numbers that
matter are the counts, not the times.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
TWISTD = f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l -"
STAND_INS = ROOT / "standins" / "faulty"
"""The faulty stand-ins, copied into the students' folders (they need nothing else of ``tests``)."""
HOSTILE = ROOT / "standins" / "hostile"
FAMILIES = ("gambit", "gobang", "socha", "velha", "socha-player")
WORKERS = {"seq": ["--workers", "1"], "par": ["--workers", "4"], "stress": ["--workers", "4"]}

Verdicts = dict[str, dict[str, str]]


def faultsOf(source: Path) -> list[str]:
    """The faults a stand-in takes: the keys of its ``FAULTS`` table, or the ``FAULT == "…"`` it tests."""
    text = source.read_text()
    table = re.search(r"^FAULTS[^=]*= \{(.*?)^\}", text, re.MULTILINE | re.DOTALL)
    if table:
        return re.findall(r'^\s+"([\w-]+)":', table.group(1), re.MULTILINE)
    return sorted(set(re.findall(r'FAULT == "([\w-]+)"', text)))


def student(folder: Path, command: str, copy: Path | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "velhanet-run").write_text(command + "\n")
    if copy is not None:
        shutil.copy(copy, folder)


VELHA_PEER = (
    f"{TWISTD} velha --nick Peerown --bot --move-delay 0 --interface {{address}} --port {{port}}"
    " --announce {announce} --invite vinvite --log-file -"
)
CLASSES = {
    # family: (velhanet's own program, the faulty stand-in, its arguments before the fault, after it)
    "gambit": (f"{TWISTD} gambit-server --listen tcp:{{port}}:interface=127.0.0.1", "gambit_server.py", "{port}", ""),
    "socha": (f"{TWISTD} socha-server --listen tcp:{{port}}:interface=127.0.0.1", "socha_server.py", "{port}", ""),
    "gobang": (f"{TWISTD} gobang-server --fifo-dir {{fifo_dir}}", "gobang_server.py", "{fifo_dir}", ""),
    "velha": (VELHA_PEER, "velha_peer.py", "{address} {announce}", "{port}"),
    "socha-player": (f"{PYTHON} -m velhanet.socha.example --port {{port}}", "socha_player.py", "{port}", ""),
}
"""How each family's class is made: velhanet's own program, and a student per fault of its stand-in."""


def makeClasses(root: Path, families: list[str]) -> dict[str, Path]:
    """One class folder per family: velhanet's own program and a student per fault of its stand-in (and for
    socha-player the hostile players too)."""
    classes = {}
    for family in families:
        folder = root / family
        classes[family] = folder
        own, standIn, before, after = CLASSES[family]
        student(folder / "own", own)
        source = STAND_INS / standIn
        for fault in faultsOf(source):
            student(folder / fault, f"{PYTHON} {standIn} {before} {fault} {after}".rstrip(), source)
        if family == "socha-player":
            for hostile in sorted(HOSTILE.iterdir()):
                if (hostile / "velhanet-run").exists():
                    shutil.copytree(hostile, folder / f"hostile-{hostile.name}")
    return classes


def verdictsOf(out: Path) -> Verdicts:
    found: Verdicts = {}
    for path in sorted(out.glob("*.json")):
        report = json.loads(path.read_text())
        found[path.stem] = {rule["id"]: rule["status"] for rule in report["rules"]}
        if report["cannotTest"]:
            found[path.stem]["cannot test"] = report["cannotTest"].split(":")[0]
    return found


def grade(family: str, folder: Path, out: Path, where: list[str]) -> float:
    command = [PYTHON, "-m", "velhanet.grading.command", family, str(folder), "--out", str(out), "--again", *where]
    environment = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    began = time.monotonic()
    with (out.parent / f"{out.name}.txt").open("w") as printed:
        subprocess.run(command, cwd=ROOT, env=environment, stdout=printed, stderr=subprocess.STDOUT, check=False)
    return time.monotonic() - began


def differing(reference: Verdicts, other: Verdicts) -> list[str]:
    lines = []
    for name in sorted(set(reference) | set(other)):
        mine, theirs = reference.get(name, {}), other.get(name, {})
        for rule in sorted(set(mine) | set(theirs)):
            if mine.get(rule, "absent") != theirs.get(rule, "absent"):
                lines.append(f"{name} {rule}: {mine.get(rule, 'absent')} / {theirs.get(rule, 'absent')}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--modes", default="seq,par,stress")
    parser.add_argument("--times", type=int, default=5)
    parser.add_argument("--first", type=int, default=1, help="the number of the first grading (to add to --verdicts)")
    parser.add_argument("--scheduler", default="", help="for the cluster mode")
    parser.add_argument("--keep", default="", help="a folder for the classes and outputs (default: temporary)")
    parser.add_argument("--verdicts", default="", help="a JSON file that keeps every grading's verdicts")
    arguments = parser.parse_args()
    families = [family for family in arguments.families.split(",") if family]
    modes = [mode for mode in arguments.modes.split(",") if mode]
    if "cluster" in modes and not arguments.scheduler:
        parser.error("the cluster mode needs --scheduler")
    root = Path(arguments.keep or tempfile.mkdtemp(prefix="velhanet-same-"))
    root.mkdir(parents=True, exist_ok=True)
    classes = (
        makeClasses(root / "classes", families)
        if not (root / "classes").exists()
        else {family: root / "classes" / family for family in families}
    )
    kept: dict[str, dict[str, Verdicts]] = {}
    if arguments.verdicts and Path(arguments.verdicts).exists():
        kept = json.loads(Path(arguments.verdicts).read_text())
    walls: dict[str, list[float]] = {}
    for mode in modes:
        where = ["--scheduler", arguments.scheduler] if mode == "cluster" else WORKERS[mode]
        for time_ in range(arguments.first, arguments.first + arguments.times):
            stress = subprocess.Popen(["stress-ng", "--cpu", "2", "--quiet"]) if mode == "stress" else None
            try:
                for family in families:
                    label = f"{family} {mode} {time_}"
                    out = root / "out" / label.replace(" ", "-")
                    shutil.rmtree(out, ignore_errors=True)
                    out.mkdir(parents=True)
                    wall = grade(family, classes[family], out, where)
                    walls.setdefault(f"{family} {mode}", []).append(wall)
                    kept.setdefault(family, {})[f"{mode} {time_}"] = verdictsOf(out)
                    print(f"{label}: {wall:.0f} s", flush=True)
                    if arguments.verdicts:
                        Path(arguments.verdicts).write_text(json.dumps(kept, indent=1, sort_keys=True))
            finally:
                if stress is not None:
                    stress.terminate()
                    stress.wait()
    print(f"\n{'family':<13} {'mode':<8} {'gradings':>8} {'wall s (mean)':>14} {'verdicts':>9} {'differed':>9}")
    lines = []
    for family, runs in kept.items():
        reference = runs.get("seq 1") or next(iter(runs.values()))
        for mode in dict.fromkeys(label.split()[0] for label in runs):
            graded = [label for label in runs if label.split()[0] == mode]
            count = sum(len(rules) for rules in reference.values())
            differed = 0
            for label in graded:
                found = differing(reference, runs[label])
                differed += len(found)
                lines += [f"  {family} {label}: {line}" for line in found]
            seconds = walls.get(f"{family} {mode}", [])
            mean = f"{sum(seconds) / len(seconds):.0f}" if seconds else "-"
            print(f"{family:<13} {mode:<8} {len(graded):>8} {mean:>14} {count:>9} {differed:>9}")
    if lines:
        print("\nverdicts that differed from the first sequential grading (student rule: first / this one):")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
