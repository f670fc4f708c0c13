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

from velhanet.checks.exchange import Exchange, ExchangeLine
from velhanet.checks.outcome import Evidence, Outcome, Report
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
                **exchangeToData(outcome.exchange),
                "runs": outcome.runs,
                "sighted": list(outcome.sighted) if outcome.sighted is not None else None,
                "evidence": [
                    {
                        "where": more.where,
                        "status": more.status,
                        "reason": more.reason,
                        "check": more.check,
                        **exchangeToData(more.exchange),
                    }
                    for more in outcome.evidence
                ],
            }
            for outcome in report.outcomes
        ],
    }


def exchangeToData(exchange: Exchange) -> dict[str, Any]:
    return {"exchange": [line.asDict() for line in exchange.lines], "exchangeLeftOut": exchange.leftOut}


def exchangeFromData(item: dict[str, Any]) -> Exchange:
    lines = [ExchangeLine(**line) for line in item.get("exchange", [])]
    return Exchange.restored(lines, int(item.get("exchangeLeftOut", 0)))


def evidenceFromData(item: dict[str, Any]) -> list[Evidence]:
    """A rule's other runs and set-ups, as both the plain data and the JSON report keep them."""
    return [
        Evidence(
            str(more["where"]),
            str(more["status"]),
            str(more["reason"]),
            exchangeFromData(more),
            str(more.get("check") or ""),
        )
        for more in item.get("evidence", [])
    ]


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
                exchange=exchangeFromData(item),
                runs={str(status): int(n) for status, n in (item.get("runs") or {}).items()},
                sighted=(int(item["sighted"][0]), int(item["sighted"][1])) if item.get("sighted") else None,
                evidence=evidenceFromData(item),
            )
            for item in data.get("outcomes", [])
        ],
    )


def reportFromJson(data: dict[str, Any]) -> Report:
    """A report as ``velhanet-check --json`` wrote it (a class server's API gives it so), back as a L{Report}
    to print as ``velhanet-check`` prints one; what that JSON leaves out (the test's id) stays empty."""
    program = data.get("program")
    family = str(data["family"])
    return Report(
        family=family,
        target=str(data["target"]),
        cannotTest=str(data.get("cannotTest") or ""),
        program=Verdict.fromDict(program) if isinstance(program, dict) else None,
        outcomes=[
            Outcome(
                status=str(item["status"]),
                rule=str(item["rule"]),
                reason=str(item["reason"]),
                testId="",
                anchor=str(item["id"]),
                doc=str(item.get("reference") or "").partition("#")[0],
                dependsOn=str(item.get("dependsOn") or ""),
                family=family,
                exchange=exchangeFromData(item),
                reproduce=str(item.get("reproduce") or ""),
                runs={str(status): int(n) for status, n in (item.get("runs") or {}).items()},
                sighted=(int(item["sighted"]["kept"]), int(item["sighted"]["seen"])) if item.get("sighted") else None,
                evidence=evidenceFromData(item),
            )
            for item in data.get("rules", [])
        ],
    )
