"""What every conformance test shares: the target, rule-naming checks and deviations.

A *deviation* is behaviour that breaks velhanet's reading of an ambiguous
text but is known from the original programs (e.g. the original Gambit
server answering JOIN with White's name by ERROR *and* OK). By default it is
reported as a warning — never as a pass; with ``--strict`` it fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn

from twisted.trial.unittest import SkipTest, SynchronousTestCase

WARNING_PREFIX = "WARN: "


@dataclass
class Target:
    family: str
    host: str = "127.0.0.1"
    port: int = 0
    pid: int = 0
    fifoDir: str = "/tmp"
    command: str = ""
    strict: bool = False
    timeout: float = 3.0
    extra: dict[str, Any] = field(default_factory=dict)


_current: Target | None = None


def setTarget(target: Target | None) -> None:
    global _current
    _current = target


def target() -> Target:
    if _current is None:
        raise SkipTest("no target configured: run the suite with velhanet-check")
    return _current


class ConformanceCase(SynchronousTestCase):
    """A test against the configured target; failures name the rule they check."""

    family = ""

    def setUp(self) -> None:
        self.target = target()
        if self.target.family != self.family:
            raise SkipTest(f"the target is a {self.target.family} implementation")

    def require(self, condition: object, message: str) -> None:
        """Fail with ``message`` (which names the rule) unless ``condition``."""
        if not condition:
            self.fail(message)

    def deviation(self, message: str) -> NoReturn:
        """A known deviation where the text is ambiguous: a warning, or a failure with --strict."""
        if self.target.strict:
            self.fail(message)
        raise SkipTest(WARNING_PREFIX + message)
