"""The whole suite, longest tests first: what the README's command hands to trial's workers.

    python -m twisted.trial -j8 tests.longestfirst

Trial's workers take the next test of the suite whenever one is free, in the
suite's order, which is alphabetical: the many conformance runs, which mostly
wait on their targets' (scaled) limits, came first and left the two cores
idle, while the tests that keep the cores busy came together later. Handed
out longest first (the classic rule for a pool of equal workers), the long
waiting tests and the long busy ones overlap from the start, and the last
tests to end are short ones, so the workers end together.

The seconds are the ones ``benchmarks/test_times.py --write
tests/durations.json`` measured; a test it does not know yet goes first
(it may be long, and a short one costs nothing there). ``trial tests`` still
runs the same tests, alphabetically.

Before it hands the suite out it compiles velhanet's own code, the tests'
and the faulty stand-ins' to bytecode once: the suite starts hundreds of
Python processes, and where ``PYTHONDONTWRITEBYTECODE`` is set (this
machine's and CI's environment) each of them compiled every module it
imported again, a fifth of the suite's processor time (4:57 instead of 5:25
of wall time, measured). The hostile stand-ins are left as they are: a test
checks that their folders are exactly what they were.
"""

from __future__ import annotations

import compileall
import json
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from twisted.trial.runner import TestLoader
from twisted.trial.unittest import TestSuite

DURATIONS = Path(__file__).with_name("durations.json")
ROOT = Path(__file__).resolve().parent.parent
COMPILED = ("velhanet", "tests", "standins/faulty", "twisted/plugins")
"""What the suite's processes import, compiled once before the suite runs."""


def durations() -> dict[str, float]:
    """Each test's seconds as last measured, by trial's test id."""
    return {str(test): float(seconds) for test, seconds in json.loads(DURATIONS.read_text()).items()}


def cases(suite: Any) -> Iterator[Any]:
    """Every test case of a (nested) suite, in its order."""
    if isinstance(suite, unittest.TestSuite):  # trial's suites are the standard library's too
        for test in suite:
            yield from cases(test)
    else:
        yield suite


def longestFirst(tests: list[Any], seconds: dict[str, float]) -> list[Any]:
    """``tests`` by their seconds, longest first; those not in ``seconds`` before all; ties in their order."""
    return sorted(tests, key=lambda test: -seconds.get(test.id(), float("inf")))


def testSuite() -> TestSuite:
    """Trial's hook for a module that makes its own suite: all of ``tests``, longest first."""
    for folder in COMPILED:
        compileall.compile_dir(ROOT / folder, quiet=2)
    everything = TestLoader().loadByName("tests", recurse=True)
    return TestSuite(longestFirst(list(cases(everything)), durations()))
