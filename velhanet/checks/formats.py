"""A report as people and programs read it: console lines, JUnit XML and JSON (the HTML page is ``page``).

Under a FAIL or WARN, every format carries the same evidence: expected and
observed, the original sentence, the check's exchange, the counts of a rule
seen more than once (``--repeat``, other checks' set-ups) with the evidence
of each run or set-up that went otherwise, and the command that runs it again.
"""

from __future__ import annotations

import json
import shlex
from xml.etree.ElementTree import Element, SubElement, tostring

from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, VERDICTS, WARN
from velhanet.checks.outcome import Outcome, Report
from velhanet.checks.page import (
    SANDBOX_RULE,
    expectedText,
    languageName,
    notTested,
    ruleText,
    sightedText,
)
from velhanet.checks.runner import summary
from velhanet.i18n import _

EXCHANGE_SHOWN = 12
"""Lines of the exchange the console shows under a FAIL or WARN (``--verbose``: all, under every rule)."""

EVIDENCE_SHOWN = 6
"""Lines of the exchange of another run or set-up that the console shows under a verdict (``--verbose``: all)."""

INDENT = " " * 9


def outcomeLine(outcome: Outcome, verbose: bool = False) -> str:
    """The rule's line; under a FAIL or WARN (every rule with ``verbose``) the evidence a student acts on."""
    line = f"{outcome.status:7}  {ruleText(outcome)}  [{outcome.reference}]"
    if outcome.reason and outcome.status != PASS:
        line += f"\n{INDENT}-> {outcome.reason}"
    if outcome.status in (FAIL, WARN) or (verbose and outcome.status != SKIP):
        line += "".join(f"\n{INDENT}{evidence}" for evidence in evidenceLines(outcome, verbose))
    return line


def evidenceLines(outcome: Outcome, verbose: bool = False) -> list[str]:
    """expected/observed, the original sentence, the end of the exchange, and the command that runs it again."""
    lines = []
    if outcome.status in (FAIL, WARN):
        lines.append(_("expected: {expected}").format(expected=expectedText(outcome)))
        lines.append(_("observed: {observed}").format(observed=outcome.observed))
    original = outcome.original
    if original is not None:
        said = _("original ({language}, {spec}): «{sentence}»")
        lines.append(
            said.format(language=languageName(original.language), spec=original.spec, sentence=original.sentence)
        )
        if original.decision:
            lines.append(_("velhanet's reading of the text: {reference}").format(reference=original.decisionReference))
    if outcome.runs:
        lines.append(_("runs: {tally}").format(tally=outcome.tally()))
    if outcome.sighted is not None:
        lines.append(_("seen: {sighted}").format(sighted=sightedText(outcome)))
    shown = outcome.exchange.textLines(None if verbose else EXCHANGE_SHOWN)
    if shown:
        lines.append(_("exchange (ms since the check began; -> sent, <- received, ** event):"))
        lines += [f"  {text}" for text in shown]
    for more in outcome.evidence:
        lines.append(f"{more.where}: {more.status}: {more.reason}")
        lines += [f"  {text}" for text in more.exchange.textLines(None if verbose else EVIDENCE_SHOWN)]
    if outcome.reproduce and outcome.status in (FAIL, WARN):
        lines.append(_("again: {command}").format(command=outcome.reproduce))
    return lines


def reproduceCommand(argv: list[str], anchor: str, program: str = "velhanet-check", more: tuple[str, ...] = ()) -> str:
    """The command line that runs the one check ``anchor`` again, as given but for the report files
    (``more``: options to add, as ``velhanet-grade``'s ``--student NAME``); a ``--language`` given is kept."""
    dropWithValue = {"--only", "--json", "--junit-xml", "--html", "--student", "--out", "--csv", "--workers"}
    dropAlone = {"--quiet", "--verbose", "--again"}
    kept, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in dropWithValue:
            skip = "=" not in word
            continue
        if word in dropAlone:
            continue
        kept.append(word)
    return shlex.join([program, *kept, *more, "--only", anchor])


def programLines(report: Report) -> list[str]:
    """What the program's sandbox says: the limit it broke (it then fails), what else it saw, what was on."""
    verdict = report.program
    if verdict is None:
        return []
    lines = []
    if verdict.cause:
        lines.append(f"{FAIL:7}  {_(SANDBOX_RULE)}  [docs/security.md#sandbox-limits]")
        lines.append(f"{INDENT}-> {verdict.cause}")
    lines += [_("note: {note}").format(note=note) for note in verdict.notes()]
    lines.append(_("sandbox: {enforcement}").format(enforcement=verdict.enforcement))
    return lines


def formatReport(report: Report) -> str:
    lines = [f"velhanet-check {report.family}: {report.target}"]
    if report.cannotTest:
        lines.append(notTested(report.cannotTest))
        lines += programLines(report)
        lines.append(_("nothing was graded"))
        return "\n".join(lines)
    lines += [outcomeLine(outcome) for outcome in report.outcomes]
    lines += programLines(report)
    lines.append(summary(report))
    return "\n".join(lines)


def junitXml(report: Report) -> bytes:
    """The report as JUnit XML: a testsuite of one testcase per rule (WARN goes to system-out)."""
    suite = Element(
        "testsuite",
        {
            "name": f"velhanet-check.{report.family}",
            "tests": str(len(report.outcomes) + report.brokeALimit),
            "failures": str(report.count(FAIL) + report.brokeALimit),
            "errors": "1" if report.cannotTest else "0",
            "skipped": str(report.count(SKIP) + report.count(NOT_RUN)),
        },
    )
    SubElement(SubElement(suite, "properties"), "property", {"name": "target", "value": report.target})
    if report.cannotTest:
        case = SubElement(suite, "testcase", {"classname": report.family, "name": "canTest"})
        SubElement(case, "error", {"message": notTested(report.cannotTest)})
    for outcome in report.outcomes:
        case = SubElement(
            suite, "testcase", {"classname": report.family, "name": outcome.anchor or outcome.testId.rsplit(".", 1)[-1]}
        )
        evidence = evidenceLines(outcome, verbose=True)
        SubElement(case, "system-out").text = "\n".join([f"{ruleText(outcome)} [{outcome.reference}]", *evidence])
        if outcome.status == FAIL:
            SubElement(case, "failure", {"message": outcome.reason})
        elif outcome.status in (SKIP, NOT_RUN):
            SubElement(case, "skipped", {"message": f"{outcome.status}: {outcome.reason}"})
        elif outcome.status == WARN:
            SubElement(case, "system-err").text = f"WARN: {outcome.reason}"
    verdict = report.program
    if verdict is not None and verdict.brokeALimit:
        case = SubElement(suite, "testcase", {"classname": report.family, "name": "sandbox-limits"})
        SubElement(case, "system-out").text = f"{_(SANDBOX_RULE)} ({verdict.enforcement})"
        SubElement(case, "failure", {"message": verdict.cause})
    if verdict is not None and verdict.notes():
        SubElement(suite, "system-out").text = "\n".join(verdict.notes())
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(suite, encoding="utf-8")


def jsonReport(report: Report) -> str:
    return json.dumps(
        {
            "family": report.family,
            "target": report.target,
            "cannotTest": report.cannotTest or None,
            "exitStatus": report.exitStatus,
            "program": report.program.asDict() if report.program is not None else None,
            "counts": {status: report.count(status) for status in VERDICTS},
            "rules": [
                {
                    "id": outcome.anchor,
                    "rule": ruleText(outcome),
                    "reference": outcome.reference,
                    "status": outcome.status,
                    "reason": outcome.reason,
                    "dependsOn": outcome.dependsOn or None,
                    "runs": outcome.runs or None,
                    "sighted": {"kept": outcome.sighted[0], "seen": outcome.sighted[1]} if outcome.sighted else None,
                    **evidenceOf(outcome),
                }
                for outcome in report.outcomes
            ],
        },
        indent=2,
        ensure_ascii=False,
    )


def evidenceOf(outcome: Outcome) -> dict[str, object]:
    """The JSON report's evidence of one rule: expected/observed, the original, the exchange, the command."""
    original = outcome.original
    return {
        "expected": expectedText(outcome) if outcome.status in (FAIL, WARN) else None,
        "observed": outcome.observed if outcome.status in (FAIL, WARN) else None,
        "original": None
        if original is None
        else {
            "spec": original.spec,
            "language": original.language,
            "sentence": original.sentence,
            "decision": original.decisionReference or None,
        },
        "reproduce": outcome.reproduce or None,
        "exchange": [line.asDict() for line in outcome.exchange.lines],
        "exchangeLeftOut": outcome.exchange.leftOut,
        "evidence": [
            {
                "where": more.where,
                "status": more.status,
                "reason": more.reason,
                "check": more.check or None,
                "exchange": [line.asDict() for line in more.exchange.lines],
                "exchangeLeftOut": more.exchange.leftOut,
            }
            for more in outcome.evidence
        ],
    }
