"""A report as plain data and back: what a grading process on a worker sends to the command that tabulates.

``velhanet-grade`` checks each submission in a process of its own, maybe on
another machine of the cluster, and keeps each version's report in its history
database: both need the whole report (every rule with its evidence, the
program's verdict) as JSON, and the same L{Report} back, so that the pages,
the table and the class page are made from it exactly as from a report
checked here.
"""

from __future__ import annotations

from typing import Any

from velhanet.conformance.exchange import Exchange, ExchangeLine
from velhanet.conformance.runner import Outcome, Report
from velhanet.sandbox.verdict import Verdict


def reportToData(report: Report) -> dict[str, Any]:
    return {
        "family": report.family,
        "target": report.target,
        "cannotTest": report.cannotTest,
        "program": report.program.asDict() if report.program is not None else None,
        "outcomes": [
            {
                "status": outcome.status,
                "rule": outcome.rule,
                "reason": outcome.reason,
                "testId": outcome.testId,
                "anchor": outcome.anchor,
                "doc": outcome.doc,
                "dependsOn": outcome.dependsOn,
                "family": outcome.family,
                "exchange": [line.asDict() for line in outcome.exchange.lines],
                "exchangeLeftOut": outcome.exchange.leftOut,
            }
            for outcome in report.outcomes
        ],
    }


def reportFromData(data: dict[str, Any]) -> Report:
    program = data.get("program")
    return Report(
        family=str(data["family"]),
        target=str(data["target"]),
        cannotTest=str(data.get("cannotTest") or ""),
        program=Verdict.fromDict(program) if isinstance(program, dict) else None,
        outcomes=[
            Outcome(
                status=str(item["status"]),
                rule=str(item["rule"]),
                reason=str(item["reason"]),
                testId=str(item["testId"]),
                anchor=str(item.get("anchor", "")),
                doc=str(item.get("doc", "")),
                dependsOn=str(item.get("dependsOn", "")),
                family=str(item.get("family", "")),
                exchange=Exchange.restored(
                    [ExchangeLine(**line) for line in item.get("exchange", [])], int(item.get("exchangeLeftOut", 0))
                ),
            )
            for item in data.get("outcomes", [])
        ],
    )
