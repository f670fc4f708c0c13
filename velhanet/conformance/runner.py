"""Run one family's checks against a target, one at a time, and keep a verdict per rule.

What this adds to trial's runner, so that a grade names the program's real
deviations once and nothing the checker caused:

- **Can it be tested at all?** Before any check, the family's ``canTest``
  (the address answers, the process and its FIFO exist, the command starts).
  If not, nothing is graded: the report says "cannot test" and why.
- **Did it die?** After every check the family's ``probe`` asks whether the
  target still serves. If it stopped, the check that was running gets the
  cause ("… and the server stopped answering during this check: …") and
  every later check is NOT RUN with that reason, never FAIL.
- **One root cause, one verdict.** A check whose precondition failed is NOT
  RUN; when the precondition is a rule that already FAILed, the report says
  it is a consequence of that one.
- **Order.** Checks run in a fixed order, each from a state it verifies;
  the ones marked ``last`` (they may stop the target by design) run at the end.
"""

from __future__ import annotations

import io
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from twisted.python.reflect import namedAny
from twisted.trial import reporter, runner

from velhanet.conformance import exchange
from velhanet.conformance.base import (
    FAIL,
    NOT_RUN,
    PASS,
    SKIP,
    VERDICTS,
    WARN,
    WARNING_PREFIX,
    Target,
    parseNotRun,
    setTarget,
)
from velhanet.conformance.exchange import Exchange
from velhanet.conformance.originals import Original, originalOf
from velhanet.i18n import _, ngettext
from velhanet.sandbox.verdict import Verdict

FAMILIES = {
    "velha": "velhanet.conformance.velha",
    "gobang": "velhanet.conformance.gobang",
    "gambit": "velhanet.conformance.gambit",
    "socha": "velhanet.conformance.socha",
    "socha-player": "velhanet.conformance.sochaplayer",
}

SETTLE = 0.3
"""Seconds between a check that did not pass and the probe of the target after it."""

DOCS = {
    "velha": "docs/velha.md",
    "gobang": "docs/gobang.md",
    "gambit": "docs/gambit.md",
    "socha": "docs/socha.md",
    "socha-player": "docs/socha.md",
}


@dataclass
class Outcome:
    """The verdict on one rule."""

    status: str
    rule: str
    reason: str
    testId: str
    anchor: str = ""
    doc: str = ""
    dependsOn: str = ""
    exchange: Exchange = field(default_factory=Exchange)
    """What the check sent and received, and what happened around it."""
    reproduce: str = ""
    """The command that runs this one check again against the same target (set by the command line)."""
    family: str = ""

    @property
    def reference(self) -> str:
        return f"{self.doc}#{self.anchor}" if self.anchor else self.doc

    def _expectation(self) -> tuple[str, str]:
        """(expected, observed) from the check's message: ``X must Y; got Z`` or ``X must Y: Z``; else the rule
        and the message."""
        # the words the checks' messages are written with, in English and in the language they were written in
        for got in dict.fromkeys(("; got ", _("; got "))):  # TRANSLATORS: as in "X must Y; got Z"
            wanted, separator, came = self.reason.partition(got)
            if separator:
                return wanted, came
        musts = {" must ", _(" must ")}  # TRANSLATORS: as in "X must Y; got Z", with its spaces
        for separator in ("; ", ": "):  # ``X must Y; Z`` before ``X must Y: Z`` (an address has a colon)
            wanted, found, came = self.reason.partition(separator)
            if found and any(must in f" {wanted} " for must in musts):
                return wanted, came
        return self.rule, self.reason

    @property
    def expected(self) -> str:
        return self._expectation()[0]

    @property
    def observed(self) -> str:
        return self._expectation()[1]

    @property
    def original(self) -> Original | None:
        """The sentence of the original protocol text the rule comes from."""
        return originalOf(self.family, self.anchor)


@dataclass
class Report:
    family: str
    target: str
    outcomes: list[Outcome] = field(default_factory=list)
    cannotTest: str = ""
    """Why nothing could be checked; empty when the checks ran."""
    program: Verdict | None = None
    """How the program velhanet started for the checks ended (in its sandbox), if it started one."""

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def brokeALimit(self) -> bool:
        return self.program is not None and self.program.brokeALimit

    @property
    def exitStatus(self) -> int:
        """0: nothing failed; 1: a rule failed or the program broke a limit; 3: the target could not be tested."""
        if self.cannotTest:
            return 3
        return 1 if self.count(FAIL) or self.brokeALimit else 0


class _OneResult(reporter.TestResult):
    """The outcome of the one test trial ran."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.status = PASS
        self.reason = ""
        self.dependsOn = ""

    def addFailure(self, test: Any, fail: Any) -> None:
        super().addFailure(test, fail)
        self.status, self.reason = FAIL, _message(fail)

    def addError(self, test: Any, error: Any) -> None:
        super().addError(test, error)
        self.status, self.reason = FAIL, _("error: {message}").format(message=_message(error))

    def addSkip(self, test: Any, reason: Any) -> None:
        super().addSkip(test, reason)
        text = str(reason)
        notRun = parseNotRun(text)
        if notRun is not None:
            self.status = NOT_RUN
            self.dependsOn, self.reason = notRun
        elif text.startswith(WARNING_PREFIX):
            self.status, self.reason = WARN, text[len(WARNING_PREFIX) :]
        else:
            self.status, self.reason = SKIP, text

    def done(self) -> None:
        pass


def _message(failure: Any) -> str:
    if isinstance(failure, tuple):
        return str(failure[1])
    try:
        return str(failure.getErrorMessage())
    except AttributeError:
        return str(failure)


def _flatten(suite: Any) -> list[Any]:
    if hasattr(suite, "_tests"):
        return [test for child in suite._tests for test in _flatten(child)]
    return [suite]


def _method(test: Any) -> Any:
    try:
        return namedAny(test.id())
    except (AttributeError, ValueError, ImportError):
        return None


def checksOf(family: str) -> list[Any]:
    """The family's checks in run order: as loaded, the ones marked ``last`` at the end."""
    suite = runner.TestLoader().loadByName(FAMILIES[family], recurse=True)
    tests = _flatten(suite)
    return sorted(tests, key=lambda test: bool(getattr(_method(test), "runsLast", False)))


def ruleOf(test: Any) -> tuple[str, str]:
    """(the rule, from the docstring's first line, in the language this process speaks; the anchor of its
    paragraph in the docs)."""
    method = _method(test)
    doc = ((method.__doc__ if method is not None else "") or "").strip().splitlines()
    return (_(doc[0]) if doc else test.id().rsplit(".", 1)[-1]), getattr(method, "ruleAnchor", "")


def selected(only: str, testId: str, anchor: str) -> bool:
    """``--only``: the rule's id exactly as the report prints it (``gambit-split``), or several, comma-separated.

    Exactly: ``gambit-join`` runs that rule, not ``gambit-join-unknown`` too, so the command printed
    under a FAIL runs that one check and nothing else.
    """
    return anchor in {wanted.strip() for wanted in only.split(",")}


def runChecks(
    family: str,
    target: Target,
    only: str = "",
    progress: Callable[[Outcome], None] | None = None,
) -> Report:
    """Run the family's checks against ``target`` and give every rule its verdict."""
    module = namedAny(FAMILIES[family])
    report = Report(family, target.describe())
    problem = module.canTest(target)
    if problem:
        report.cannotTest = problem
        return report
    setTarget(target)
    deadSince = ""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            results: list[_OneResult] = []

            def factory(*args: Any) -> _OneResult:
                result = _OneResult(*args)
                results.append(result)
                return result

            trialRunner = runner.TrialRunner(
                factory,
                stream=io.StringIO(),
                workingDirectory=os.path.join(scratch, "_trial_temp"),
            )
            for test in checksOf(family):
                text, anchor = ruleOf(test)
                if only and not selected(only, test.id(), anchor):
                    continue
                outcome = Outcome(NOT_RUN, text, "", test.id(), anchor, DOCS[family], family=family)
                if deadSince:
                    outcome.reason = deadSince
                else:
                    exchange.begin()
                    trialRunner.run(test)
                    result = results[-1]
                    outcome.status, outcome.reason, outcome.dependsOn = result.status, result.reason, result.dependsOn
                    if outcome.status != SKIP and not getattr(_method(test), "stopsTarget", False):
                        if outcome.status != PASS:
                            time.sleep(SETTLE)  # a target that is dying is dead, not half alive, when probed
                        stopped = module.probe(target)
                        if stopped:
                            deadSince = _("the target stopped during the check “{rule}”: {stopped}").format(
                                rule=text, stopped=stopped
                            )
                            _diedDuring(outcome, stopped)
                    outcome.exchange = exchange.end()
                report.outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
    finally:
        setTarget(None)
    for outcome in report.outcomes:
        _explain(outcome, report.outcomes)
    return report


def _diedDuring(outcome: Outcome, stopped: str) -> None:
    """The target stopped while this check ran: the check names what stopped it."""
    if outcome.status == FAIL:
        if stopped not in outcome.reason:  # the check may have said so itself
            outcome.reason += _("; and the target stopped during this check: {stopped}").format(stopped=stopped)
        else:
            outcome.reason += _("; the target stopped during this check")
    else:
        before = {PASS: _("it had passed"), WARN: _("before that it found"), SKIP: _("it was skipped")}.get(
            outcome.status, _("before that")
        )
        outcome.status = FAIL
        if outcome.reason:
            outcome.reason = _("the target stopped during this check: {stopped} ({before}: {reason})").format(
                stopped=stopped, before=before, reason=outcome.reason
            )
        else:
            outcome.reason = _("the target stopped during this check: {stopped} ({before})").format(
                stopped=stopped, before=before
            )


def _explain(outcome: Outcome, outcomes: list[Outcome]) -> None:
    """A NOT RUN whose precondition is a rule that FAILed is a consequence of that FAIL: say so."""
    if outcome.status != NOT_RUN or not outcome.dependsOn:
        return
    for other in outcomes:
        if other.anchor == outcome.dependsOn and other.status == FAIL:
            outcome.reason = _("consequence of the FAIL of “{rule}”: {reason}").format(
                rule=other.rule, reason=outcome.reason
            )
            return


def verdictCount(status: str, count: int) -> str:
    """``12 pass``: how many rules got a verdict, in words (the verdict tokens PASS, FAIL… stay as they are)."""
    if status == PASS:
        said = ngettext("{n} pass", "{n} pass", count)
    elif status == FAIL:
        said = ngettext("{n} fail", "{n} fail", count)
    elif status == WARN:
        said = ngettext("{n} warn", "{n} warn", count)
    elif status == SKIP:
        said = ngettext("{n} skip", "{n} skip", count)
    else:
        said = ngettext("{n} not run", "{n} not run", count)
    return said.format(n=count)


def summary(report: Report) -> str:
    """``13 rules: 12 pass, 1 fail, 0 warn, 0 skip, 0 not run``, in the language this process speaks."""
    parts = ", ".join(verdictCount(status, report.count(status)) for status in VERDICTS)
    rules = len(report.outcomes)
    return ngettext("{n} rules: {verdicts}", "{n} rules: {verdicts}", rules).format(n=rules, verdicts=parts)
