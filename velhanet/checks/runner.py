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
from typing import Any

from twisted.python.reflect import namedAny
from twisted.trial import reporter, runner

from velhanet.checks import exchange, sightings, tally
from velhanet.checks.base import (
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
from velhanet.checks.outcome import Outcome, Report
from velhanet.i18n import _, ngettext

FAMILIES = {
    "velha": "velhanet.checks.velha.rules",
    "gobang": "velhanet.checks.gobang.rules",
    "gambit": "velhanet.checks.gambit.rules",
    "socha": "velhanet.checks.socha.rules",
    "socha-player": "velhanet.checks.sochaplayer.rules",
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


def unknownRules(family: str, only: str) -> tuple[list[str], list[str]]:
    """An ``--only`` list (comma-separated rule ids) against the family's rules: (the ids it has none of, every
    rule id of the family in run order)."""
    anchors = [ruleOf(test)[1] for test in checksOf(family)]
    return [wanted.strip() for wanted in only.split(",") if wanted.strip() not in anchors], anchors


def stoppedByDesign(report: Report) -> bool:
    """A check that stops the target by design (Gobang's Kill) passed: the program is ending by itself."""

    def stops(testId: str) -> bool:
        try:
            return bool(getattr(namedAny(testId), "stopsTarget", False))
        except (AttributeError, ValueError, ImportError):
            return False

    return any(outcome.status == PASS and stops(outcome.testId) for outcome in report.outcomes)


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
    repeat: int = 1,
    revised: Callable[[Outcome], None] | None = None,
) -> Report:
    """Run the family's checks against ``target`` and give every rule its verdict.

    ``repeat``: each check runs so many times in a row (``--repeat``), and its verdict counts them
    (``tally.mergeRuns``); ``progress`` is called with each rule's verdict as soon as its runs are over, and
    ``revised`` at the end with each verdict that what later checks' set-ups saw of its rule changed."""
    module = namedAny(FAMILIES[family])
    report = Report(family, target.describe())
    problem = module.canTest(target)
    if problem:
        report.cannotTest = problem
        return report
    setTarget(target)
    sightings.takeSightings()  # nothing from before this run
    try:
        with tempfile.TemporaryDirectory() as scratch:
            checking = _Checking(module, target, report, os.path.join(scratch, "_trial_temp"), max(1, repeat))
            for test in checksOf(family):
                text, anchor = ruleOf(test)
                if only and not selected(only, test.id(), anchor):
                    continue
                runs = [checking.run(test, text, anchor, number) for number in range(1, checking.repeat + 1)]
                outcome = tally.mergeRuns(runs)
                report.outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
    finally:
        setTarget(None)
        sightings.takeSightings()
    before = [(outcome.status, outcome.reason) for outcome in report.outcomes]
    tally.applySightings(report.outcomes, checking.sightings)
    for outcome in report.outcomes:
        _explain(outcome, report.outcomes)
    if revised is not None:
        for (status, reason), outcome in zip(before, report.outcomes, strict=True):
            if (status, reason) != (outcome.status, outcome.reason):
                revised(outcome)
    return report


class _Checking:
    """One run of a family's checks: trial's runner, whether the target died, and what the set-ups saw."""

    def __init__(self, module: Any, target: Target, report: Report, workingDirectory: str, repeat: int) -> None:
        self.module, self.target, self.report, self.repeat = module, target, report, repeat
        self.results: list[_OneResult] = []
        self.trialRunner = runner.TrialRunner(self._result, stream=io.StringIO(), workingDirectory=workingDirectory)
        self.deadSince = ""
        self.sightings: list[sightings.SetUpSighting] = []

    def _result(self, *args: Any) -> _OneResult:
        result = _OneResult(*args)
        self.results.append(result)
        return result

    def run(self, test: Any, text: str, anchor: str, number: int) -> Outcome:
        """Run ``test`` once (its ``number``-th time); a set-up that failed is tried once more, fresh."""
        family = self.report.family
        outcome = Outcome(NOT_RUN, text, "", test.id(), anchor, DOCS[family], family=family)
        if self.deadSince:
            outcome.reason = self.deadSince
            return outcome
        exchange.begin()
        self._once(test, text, anchor, number, outcome)
        if outcome.status == NOT_RUN and outcome.dependsOn and self._worthAnotherTry(outcome.dependsOn):
            time.sleep(SETTLE)
            if self.module.probe(self.target) is None:  # alive: the set-up's failure may be the target's whim
                exchange.end()
                exchange.begin()
                again = _("the set-up failed once ({reason}): tried again on fresh connections").format(
                    reason=outcome.reason
                )
                exchange.current().event("check", again)
                self._once(test, text, anchor, number, outcome)
        if outcome.status != SKIP and not getattr(_method(test), "stopsTarget", False):
            if outcome.status != PASS:
                time.sleep(SETTLE)  # a target that is dying is dead, not half alive, when probed
            stopped = self.module.probe(self.target)
            if stopped:
                self.deadSince = _("the target stopped during the check “{rule}”: {stopped}").format(
                    rule=text, stopped=stopped
                )
                _diedDuring(outcome, stopped)
        outcome.exchange = exchange.end()
        return outcome

    def _once(self, test: Any, text: str, anchor: str, number: int, outcome: Outcome) -> None:
        self.trialRunner.run(test)
        result = self.results[-1]
        outcome.status, outcome.reason, outcome.dependsOn = result.status, result.reason, result.dependsOn
        self.sightings += [
            sightings.SetUpSighting(seen, text, anchor, number, self.repeat) for seen in sightings.takeSightings()
        ]

    def _worthAnotherTry(self, rule: str) -> bool:
        """A set-up whose rule has not failed on its own: what stopped it may not happen twice."""
        return not any(outcome.anchor == rule and outcome.status == FAIL for outcome in self.report.outcomes)


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
