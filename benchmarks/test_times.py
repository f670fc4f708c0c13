"""The slowest tests of the suite, with their seconds: where the README's test command spends its time.

    python benchmarks/test_times.py [--parallel 2] [--top 25] [--write tests/durations.json] [tests.test_socha ...]

Trial's ``-j`` reports no time per test, so this runs each test module in a
trial of its own (``--reporter=timing``), ``--parallel`` of them at once, the
way ``-j`` keeps that many workers busy, and prints the slowest tests, each
module's seconds and the wall time. The machine is shared; compare one run's
lists, not absolute times. ``--write`` keeps every test's seconds for
``tests.longestfirst``, which hands the suite to trial's workers longest
first: rerun it for the modules whose tests were added or became slower or
faster (their entries are replaced, the others kept).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMED = re.compile(r"^(?P<test>[\w.]+) \.\.\. \[(?P<verdict>\w+)\]\s*\n\((?P<seconds>[\d.]+) secs\)", re.MULTILINE)


def modules() -> list[str]:
    return sorted(f"tests.{path.stem}" for path in (ROOT / "tests").glob("test_*.py"))


def timeModule(module: str) -> tuple[str, float, list[tuple[float, str, str]]]:
    """(module, its wall seconds, [(seconds, test, verdict)]) from one trial run in a scratch directory."""
    with tempfile.TemporaryDirectory(prefix="test-times-") as scratch:
        began = time.monotonic()
        run = subprocess.run(
            [sys.executable, "-m", "twisted.trial", "--reporter=timing", module],
            cwd=scratch,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        wall = time.monotonic() - began
    tests = [(float(m["seconds"]), m["test"], m["verdict"]) for m in TIMED.finditer(run.stdout)]
    return module, wall, tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="test modules (default: every tests/test_*.py)")
    parser.add_argument("--parallel", type=int, default=2, help="modules at once (default 2)")
    parser.add_argument("--top", type=int, default=25, help="how many of the slowest tests to list (default 25)")
    parser.add_argument("--write", metavar="FILE", help="also write every test's seconds to FILE (JSON)")
    arguments = parser.parse_args()
    began = time.monotonic()
    wanted = arguments.modules or modules()
    with ThreadPoolExecutor(arguments.parallel) as pool:
        results = list(pool.map(timeModule, sorted(wanted, key=_slowFirst)))
    wall = time.monotonic() - began
    tests = sorted((test for _, _, timed in results for test in timed), reverse=True)
    print(f"{'seconds':>8}  test")
    for seconds, test, verdict in tests[: arguments.top]:
        print(f"{seconds:8.1f}  {test}" + ("" if verdict == "OK" else f"  [{verdict}]"))
    print(f"\n{'seconds':>8}  module (wall, one trial each)")
    for module, moduleWall, _ in sorted(results, key=lambda result: -result[1]):
        print(f"{moduleWall:8.1f}  {module}")
    total = sum(seconds for seconds, _, _ in tests)
    if arguments.write:
        writeDurations(Path(arguments.write), wanted, tests)
    print(f"\n{len(tests)} tests, {total:.0f} s of tests, {wall:.0f} s wall with {arguments.parallel} at once")


def writeDurations(path: Path, measured: list[str], tests: list[tuple[float, str, str]]) -> None:
    """Every test's seconds into ``path``: the modules just measured replace what it had of them."""
    durations = json.loads(path.read_text()) if path.exists() else {}
    durations = {test: seconds for test, seconds in durations.items() if test.rsplit(".", 2)[0] not in measured}
    durations.update({test: round(seconds, 1) for seconds, test, _ in tests})
    path.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + "\n")


def _slowFirst(module: str) -> int:
    """Start the modules known to be long first, so that the last ones to end are short."""
    slow = ("sandbox_hostile", "league", "conformance", "socha_match", "web_browser", "socha", "velha_original")
    return next((index for index, name in enumerate(slow) if module.endswith(name)), len(slow))


if __name__ == "__main__":
    main()
