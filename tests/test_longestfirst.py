"""The order the README's command hands the suite to trial's workers: every test, longest first."""

from __future__ import annotations

from twisted.trial.runner import TestLoader
from twisted.trial.unittest import SynchronousTestCase

from tests import longestfirst


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def id(self) -> str:
        return self.name


class LongestFirstTests(SynchronousTestCase):
    def test_longestFirstAndTheUnknownBeforeAll(self) -> None:
        tests = [Named(name) for name in ("short", "new", "long", "alsoShort", "newer")]
        ordered = longestfirst.longestFirst(tests, {"short": 0.1, "long": 30.0, "alsoShort": 0.1})
        self.assertEqual([test.name for test in ordered], ["new", "newer", "long", "short", "alsoShort"])

    def test_theSuiteIsTheWholeSuite(self) -> None:
        """Nothing lost, nothing twice: the same test ids as ``trial tests``, in another order."""
        ordered = [test.id() for test in longestfirst.cases(longestfirst.testSuite())]
        alphabetical = [test.id() for test in longestfirst.cases(TestLoader().loadByName("tests", recurse=True))]
        self.assertEqual(sorted(ordered), sorted(alphabetical))
        self.assertEqual(len(set(ordered)), len(ordered))
        self.assertGreater(len(ordered), 800)
        self.assertNotEqual(ordered, alphabetical)

    def test_theMeasuredSecondsNameTestsThatExist(self) -> None:
        """Most measured tests are still there (a renamed test only moves to the front until it is measured)."""
        known = {test.id() for test in longestfirst.cases(TestLoader().loadByName("tests", recurse=True))}
        measured = longestfirst.durations()
        self.assertGreater(len(measured.keys() & known), 0.9 * len(measured))
