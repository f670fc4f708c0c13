"""Where the suite's processor time goes: each test's CPU seconds, the processes it started included.

    python benchmarks/test_cpu.py [--top 30] [-- TRIAL ARGUMENTS]    # default: -j8 tests.longestfirst

The suite is bound by its CPU on a small machine (docs/getting-started-contributor.md, "Fifth step"), and
trial reports no time per test under ``-j``, let alone the CPU of the processes a test starts. This runs
the README's test command with a ``sitecustomize`` of its own on ``PYTHONPATH``: in each of trial's
workers it wraps every test's ``run`` and writes, as one JSON line, the worker's own CPU and its waited-for
children's (``getrusage``: the programs, servers and graders the test started, and what those waited
for) before and after. It prints the CPU by module, by class and the dearest tests, beside the wall
seconds. What a test started and never waited for (a daemon, an orphan) is not counted; neither is what
other tests' processes took from the same cores, so the sum is the suite's work, not its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HOOK = """
import json, os, resource, sys, time

if sys.argv and sys.argv[0].endswith("workertrial.py"):  # trial's -j workers only
    from twisted.trial.unittest import SynchronousTestCase

    _run = SynchronousTestCase.run

    def _cpu(who):
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    def run(self, result):
        own, children, began = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), time.monotonic()
        try:
            return _run(self, result)
        finally:
            line = {
                "test": self.id(),
                "own": _cpu(resource.RUSAGE_SELF) - own,
                "children": _cpu(resource.RUSAGE_CHILDREN) - children,
                "wall": time.monotonic() - began,
            }
            with open(os.environ["VELHANET_TEST_CPU_LOG"], "a") as log:
                log.write(json.dumps(line) + "\\n")

    SynchronousTestCase.run = run
"""
"""The workers' ``sitecustomize``: one line per test, appended (each worker writes whole lines)."""


def measure(trial: list[str], log: Path) -> tuple[int, float, float]:
    """Run trial with the hook; its exit status, wall seconds and CPU seconds (its whole tree)."""
    with tempfile.TemporaryDirectory(prefix="velhanet-test-cpu-") as hookFolder:
        (Path(hookFolder) / "sitecustomize.py").write_text(HOOK)
        path = os.pathsep.join(p for p in (hookFolder, str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        environment = dict(os.environ, PYTHONPATH=path, VELHANET_TEST_CPU_LOG=str(log))
        began, before = time.monotonic(), os.times()
        status = subprocess.run([sys.executable, "-m", "twisted.trial", *trial], cwd=ROOT, env=environment).returncode
        after = os.times()
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    return status, time.monotonic() - began, cpu


def table(title: str, rows: dict[str, list[float]], top: int) -> None:
    print(f"\n{'CPU s':>8} {'wall s':>8} {'tests':>6}  {title}")
    for name, (cpu, wall, count) in sorted(rows.items(), key=lambda row: -row[1][0])[:top]:
        print(f"{cpu:8.1f} {wall:8.1f} {int(count):6}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=30, help="rows of each table (default 30)")
    parser.add_argument("--keep", metavar="FILE", help="keep the JSON lines in FILE")
    parser.add_argument("trial", nargs="*", default=["-j8", "tests.longestfirst"], help="trial's arguments")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="velhanet-test-cpu-log-") as scratch:
        log = Path(arguments.keep or Path(scratch) / "tests.jsonl")
        log.unlink(missing_ok=True)
        status, wall, cpu = measure(arguments.trial, log)
        tests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    classes: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    single: dict[str, list[float]] = {}
    for test in tests:
        spent = test["own"] + test["children"]
        single[test["test"]] = [spent, test["wall"], 1]
        for rows, name in ((modules, test["test"].rsplit(".", 2)[0]), (classes, test["test"].rsplit(".", 1)[0])):
            rows[name][0] += spent
            rows[name][1] += test["wall"]
            rows[name][2] += 1
    table("module", modules, arguments.top)
    table("class", classes, arguments.top)
    table("test", single, arguments.top)
    counted = sum(row[0] for row in single.values())
    print(
        f"\n{len(tests)} tests: {counted:.0f} s of CPU counted under them; trial's whole tree {cpu:.0f} s of CPU"
        f" in {wall:.0f} s of wall time (exit status {status})"
    )
    sys.exit(status)


if __name__ == "__main__":
    main()
