"""What was seen counts wherever it was seen: set-ups as evidence, repeated runs counted, one verdict per rule.

A check needs the target in some state before it can test its own rule: a
game made (CREATE, then JOIN), a match started (MSG04 answered, MSG07 sent).
Each such step is itself a rule that has a check of its own, and what the
set-up saw of it is evidence for that rule as much as its own check is: a
JOIN left unanswered while ``gambit-end`` made its game is a JOIN left
unanswered. So:

- a check's ``precondition(…, dependsOn=RULE)`` records a sighting of
  RULE, kept or broken (``sightings.sighted``), with the exchange so far
  when it was broken; the runner takes them after each run of a check and
  names where they came from (``sightings.SetUpSighting``);
- L{mergeRuns} makes one outcome of a check's runs (``--repeat N``): the
  same verdict every time is that verdict, with its count; runs that
  disagree are a FAIL that names the count ("PASS 3 of 5, FAIL 2 of 5"), with
  the evidence of each run that went otherwise: a racy program is told it is
  racy;
- L{applySightings} then gives each rule what the other checks saw of it:
  a rule seen broken anywhere FAILs, saying how often it was kept of how
  often it was seen and where it was broken, with that exchange.

Pure: no I/O, no Twisted; the runner feeds it.
"""

from __future__ import annotations

from velhanet.checks.base import FAIL, NOT_RUN
from velhanet.checks.exchange import Exchange
from velhanet.checks.outcome import Evidence, Outcome
from velhanet.checks.sightings import SetUpSighting
from velhanet.i18n import _, ngettext

EVIDENCE_KEPT = 5
"""Runs or set-ups that went otherwise whose exchange a verdict keeps (the count says how many there were)."""


def runName(run: int, runs: int) -> str:
    return _("run {run} of {runs}").format(run=run, runs=runs)


def mergeRuns(runs: list[Outcome]) -> Outcome:
    """One outcome for a check that ran ``len(runs)`` times (in order); a single run is returned as it is.

    Runs that were NOT RUN (the target had stopped, a set-up failed twice) say nothing of the rule and are
    only counted; of the others, one verdict every time is that verdict, and disagreeing verdicts are a FAIL
    naming the count, with the evidence of each run that differed from the first one's verdict."""
    if len(runs) == 1:
        return runs[0]
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    judged = [run for run in runs if run.status != NOT_RUN]
    first = judged[0] if judged else runs[0]
    merged = Outcome(
        first.status,
        first.rule,
        first.reason,
        first.testId,
        first.anchor,
        first.doc,
        first.dependsOn,
        first.exchange,
        first.reproduce,
        first.family,
        runs=counts,
    )
    differing = [(number, run) for number, run in enumerate(runs, 1) if run.status != first.status]
    merged.evidence = [
        Evidence(runName(number, len(runs)), run.status, run.reason, run.exchange)
        for number, run in differing[:EVIDENCE_KEPT]
    ]
    if len({run.status for run in judged}) > 1:
        failing = next((run for run in judged if run.status == FAIL), None)
        said = _("its runs disagree ({tally}): the program does not behave the same way every time").format(
            tally=merged.tally()
        )
        if failing is not None:
            said += _("; a failing run: {reason}").format(reason=failing.reason)
        merged.status, merged.reason = FAIL, said
    return merged


def applySightings(outcomes: list[Outcome], sightings: list[SetUpSighting]) -> None:
    """Give each rule what other checks' set-ups saw of it: seen broken anywhere, it FAILs and says where."""
    byRule: dict[str, list[SetUpSighting]] = {}
    for each in sightings:
        byRule.setdefault(each.sighting.rule, []).append(each)
    for outcome in outcomes:
        seen = byRule.get(outcome.anchor, [])
        if not seen:
            continue
        broken = [each for each in seen if not each.sighting.kept]
        ownKept, ownJudged = outcome.ownCounts()
        outcome.sighted = (len(seen) - len(broken) + ownKept, len(seen) + ownJudged)
        if not broken:
            continue
        kept, total = outcome.sighted or (0, 0)
        what = broken[0].sighting.seen or outcome.anchor
        said = ngettext(
            "{what} went as the rule says {kept} of {total} time it was seen",
            "{what} went as the rule says {kept} of {total} times it was seen",
            total,
        ).format(what=what, kept=kept, total=total)
        where = setUpName(broken[0])
        if len(broken) == 1:
            said += _("; the one that did not is under {where}: {message}").format(
                where=where, message=broken[0].sighting.message
            )
        else:
            said += _("; {n} did not, the first under {where}: {message}").format(
                n=len(broken), where=where, message=broken[0].sighting.message
            )
        if outcome.status == FAIL:
            outcome.reason = f"{outcome.reason}; {said}"
        else:
            outcome.status, outcome.reason, outcome.dependsOn = FAIL, said, ""
        outcome.evidence += [
            Evidence(setUpName(each), FAIL, each.sighting.message, each.sighting.exchange or Exchange(), each.anchor)
            for each in broken[:EVIDENCE_KEPT]
        ]


def setUpName(seen: SetUpSighting) -> str:
    """``the set-up of “END is forwarded” (gambit-end)``, with the run when the check ran more than once."""
    name = _("the set-up of “{check}” ({anchor})").format(check=seen.check, anchor=seen.anchor)
    if seen.runs > 1:
        name += ", " + runName(seen.run, seen.runs)
    return name
