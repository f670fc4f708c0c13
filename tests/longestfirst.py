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
"""

from __future__ import annotations

import json
import unittest
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from twisted.trial.runner import TestLoader
from twisted.trial.unittest import TestSuite

DURATIONS = Path(__file__).with_name("durations.json")


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
    everything = TestLoader().loadByName("tests", recurse=True)
    return TestSuite(longestFirst(list(cases(everything)), durations()))
