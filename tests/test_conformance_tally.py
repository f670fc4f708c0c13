"""What was seen counts wherever it was seen: set-ups as evidence, ``--repeat`` counted, one verdict per rule.

The pure part (``velhanet.checks.tally``) with made-up outcomes; then two
racy stand-ins of ``standins/faulty/gambit_server.py`` checked for real: one that
ignores every seventh JOIN that would seat a player, one that forwards every
second END to nobody.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import fromstring

from twisted.trial.unittest import SynchronousTestCase

from tests.processes import ENVIRONMENT, PYTHON, ROOT, Child, freePort
from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, WARN
from velhanet.checks.data import reportFromData, reportToData
from velhanet.checks.exchange import Exchange
from velhanet.checks.formats import jsonReport, junitXml
from velhanet.checks.outcome import Outcome, Report
from velhanet.checks.page import htmlReport
from velhanet.checks.sightings import SetUpSighting, Sighting
from velhanet.checks.tally import applySightings, mergeRuns
from velhanet.grading.classpage import classPage
from velhanet.grading.gradebook import ClassLine, writeCsv
from velhanet.grading.submissions import Submission


def outcome(status: str, anchor: str = "gambit-end", reason: str = "", marker: str = "") -> Outcome:
    """An outcome whose exchange holds one event, ``marker``: which run it was."""
    record = Exchange()
    if marker:
        record.event("tcp#1", marker)
    return Outcome(status, f"the rule {anchor}", reason, f"t.{anchor}", anchor, "docs/gambit.md", exchange=record)


def seen(rule: str, kept: bool, check: str = "gambit-end", run: int = 1, runs: int = 1) -> SetUpSighting:
    record = Exchange()
    record.event("tcp#2", f"JOIN unanswered in {check}")
    sighting = Sighting(rule, kept, "JOIN", "" if kept else "JOIN was answered by nothing", None if kept else record)
    return SetUpSighting(sighting, f"the rule {check}", check, run, runs)


class MergeRunsTests(SynchronousTestCase):
    def test_oneRunIsItself(self) -> None:
        single = outcome(FAIL, reason="got nothing")
        self.assertIs(mergeRuns([single]), single)
        self.assertEqual(single.tally(), "")
        self.assertIsNone(single.keptOf())

    def test_theSameVerdictEveryTimeIsThatVerdictWithItsCount(self) -> None:
        merged = mergeRuns([outcome(PASS, marker=f"run {n}") for n in range(1, 6)])
        self.assertEqual(merged.status, PASS)
        self.assertEqual(merged.runs, {PASS: 5})
        self.assertEqual(merged.tally(), "PASS 5 of 5")
        self.assertEqual(merged.evidence, [])

    def test_threeOfFiveIsAFailThatNamesTheCountAndShowsEachRunThatDiffered(self) -> None:
        statuses = [PASS, FAIL, PASS, FAIL, PASS]
        runs = [
            outcome(s, reason="got nothing" if s == FAIL else "", marker=f"run {n}") for n, s in enumerate(statuses, 1)
        ]
        merged = mergeRuns(runs)
        self.assertEqual(merged.status, FAIL)
        self.assertEqual(merged.runs, {PASS: 3, FAIL: 2})
        self.assertEqual(merged.tally(), "PASS 3 of 5, FAIL 2 of 5")
        self.assertIn("(PASS 3 of 5, FAIL 2 of 5)", merged.reason)
        self.assertIn("a failing run: got nothing", merged.reason)
        self.assertEqual([(e.where, e.status) for e in merged.evidence], [("run 2 of 5", FAIL), ("run 4 of 5", FAIL)])
        self.assertEqual([e.exchange.lines[0].meaning for e in merged.evidence], ["run 2", "run 4"])
        self.assertEqual(merged.keptOf(), (3, 5))
        self.assertEqual((merged.expected, merged.observed), (merged.rule, merged.reason))

    def test_runsAfterTheTargetStoppedSayNothingOfTheRule(self) -> None:
        merged = mergeRuns([outcome(FAIL, reason="died"), outcome(NOT_RUN), outcome(NOT_RUN)])
        self.assertEqual((merged.status, merged.reason), (FAIL, "died"))
        self.assertEqual(merged.runs, {FAIL: 1, NOT_RUN: 2})

    def test_aWarnNowAndThenIsAFailToo(self) -> None:
        self.assertEqual(mergeRuns([outcome(PASS), outcome(WARN, reason="odd")]).status, FAIL)


class SightingsTests(SynchronousTestCase):
    def test_aJoinBrokenInAnotherChecksSetUpFailsTheJoinRule(self) -> None:
        join, end = outcome(PASS, "gambit-join"), outcome(PASS, "gambit-end")
        sightings = [seen("gambit-join", True, "gambit-disconnect")] * 11 + [seen("gambit-join", False, "gambit-end")]
        applySightings([join, end], sightings)
        self.assertEqual(join.status, FAIL)
        self.assertEqual(join.sighted, (12, 13))
        self.assertTrue(
            join.reason.startswith(
                "JOIN went as the rule says 12 of 13 times it was seen; the one that did not"
                " is under the set-up of “the rule gambit-end” (gambit-end): JOIN was answered"
                " by nothing"
            ),
            join.reason,
        )
        self.assertEqual([(e.check, e.status) for e in join.evidence], [("gambit-end", FAIL)])
        self.assertEqual(join.evidence[0].exchange.lines[0].meaning, "JOIN unanswered in gambit-end")
        self.assertEqual(join.againRules(), "gambit-join,gambit-end")
        self.assertEqual(end.status, PASS, "the check whose set-up saw it is not blamed")

    def test_keptEverywhereChangesNothingButTheCount(self) -> None:
        join = outcome(PASS, "gambit-join")
        applySightings([join], [seen("gambit-join", True)] * 3)
        self.assertEqual((join.status, join.reason, join.sighted, join.evidence), (PASS, "", (4, 4), []))

    def test_aRuleThatFailedOnItsOwnKeepsItsReasonAndAddsTheCount(self) -> None:
        join = outcome(FAIL, "gambit-join", "White must get OK; got nothing")
        applySightings([join], [seen("gambit-join", False, run=2, runs=3)])
        self.assertTrue(join.reason.startswith("White must get OK; got nothing; JOIN went as the rule says 0 of 2"))
        self.assertIn("(gambit-end), run 2 of 3", join.reason)

    def test_aSkippedOrNotRunRuleSeenBrokenFails(self) -> None:
        for status in (SKIP, NOT_RUN):
            join = outcome(status, "gambit-join", "the target had stopped")
            join.dependsOn = "gambit-create"
            applySightings([join], [seen("gambit-join", False)])
            self.assertEqual((join.status, join.dependsOn), (FAIL, ""))


class EveryFormatCarriesTheCountsTests(SynchronousTestCase):
    """JSON, JUnit, HTML, the class matrix, the CSV and the report's plain data all carry the counts."""

    def report(self) -> Report:
        statuses = [PASS, FAIL, PASS, FAIL, PASS]
        end = mergeRuns(
            [outcome(s, reason="got nothing" if s == FAIL else "", marker=f"r{n}") for n, s in enumerate(statuses, 1)]
        )
        join = outcome(PASS, "gambit-join")
        applySightings([join], [seen("gambit-join", True)] * 11 + [seen("gambit-join", False)])
        return Report("gambit", "ana", [join, end])

    def test_everyFormat(self) -> None:
        report = self.report()
        data = json.loads(jsonReport(report))
        rules = {rule["id"]: rule for rule in data["rules"]}
        self.assertEqual(rules["gambit-end"]["runs"], {PASS: 3, FAIL: 2})
        self.assertEqual([e["where"] for e in rules["gambit-end"]["evidence"]], ["run 2 of 5", "run 4 of 5"])
        self.assertEqual(rules["gambit-join"]["sighted"], {"kept": 12, "seen": 13})
        self.assertEqual(rules["gambit-join"]["evidence"][0]["check"], "gambit-end")
        junit = fromstring(junitXml(report))
        out = {case.get("name"): case.findtext("system-out") or "" for case in junit.iter("testcase")}
        self.assertIn("runs: PASS 3 of 5, FAIL 2 of 5", out["gambit-end"])
        self.assertIn("run 4 of 5: FAIL: got nothing", out["gambit-end"])
        self.assertIn("seen: kept 12 of the 13 times", out["gambit-join"])
        page = htmlReport(report)
        self.assertIn("PASS 3 of 5, FAIL 2 of 5", page)
        self.assertIn("run 2 of 5</h3>", page)
        matrix = classPage("gambit", [("ana", report)])
        self.assertIn('<span class="kept">3/5</span>', matrix)
        self.assertIn('<span class="kept">12/13</span>', matrix)
        again = reportFromData(json.loads(json.dumps(reportToData(report))))
        self.assertEqual(reportToData(again), reportToData(report), "the history keeps it whole")
        sheet = Path(tempfile.mkdtemp()) / "class.csv"
        writeCsv(sheet, [ClassLine(Submission("ana", None, "v1"), report)])
        row = next(csv.DictReader(io.StringIO(sheet.read_text())))
        self.assertEqual(row["failed_rules"], "gambit-join gambit-end")
        self.assertEqual(row["counts"], "gambit-join: kept 12 of 13; gambit-end: PASS 3 of 5, FAIL 2 of 5")


class RacyServerTests(SynchronousTestCase):
    """Real checks of two racy stand-ins."""

    def check(self, fault: str, *more: str) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]:
        port = freePort()
        Child(self, [PYTHON, "-m", "standins.faulty.gambit_server", str(port), fault]).waitForPort(port)
        scratch = Path(tempfile.mkdtemp(prefix="velhanet-tally-"))
        command = [PYTHON, "-m", "velhanet.checks.command", "gambit", "--target", f"127.0.0.1:{port}"]
        result = subprocess.run(
            [*command, "--timeout", "1", "--json", "r.json", *more],
            cwd=scratch,
            env=dict(ENVIRONMENT, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        rules = {rule["id"]: rule for rule in json.loads((scratch / "r.json").read_text())["rules"]}
        return result, rules

    def test_aJoinIgnoredInAnotherChecksSetUpIsCountedUnderTheJoinRule(self) -> None:
        """Every seventh JOIN that would seat a player is ignored: with every rule run twice, the seventh is
        the first set-up of gambit-move-relay's game. gambit-join FAILs with the count and that exchange;
        the set-up is tried again on fresh connections, so no rule is NOT RUN and none blames gambit-join."""
        result, rules = self.check("every-seventh-join", "--repeat", "2")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        join = rules["gambit-join"]
        self.assertEqual(join["status"], FAIL, result.stdout)
        self.assertEqual(join["sighted"], {"kept": 8, "seen": 9})
        self.assertIn(
            "JOIN went as the rule says 8 of 9 times it was seen; the one that did not is under the set-up of",
            join["reason"],
        )
        self.assertIn(
            "(gambit-move-relay), run 1 of 2: needs a game with two players: JOIN was answered by"
            " nothing to the joiner and nothing to White",
            join["reason"],
        )
        [setUp] = join["evidence"]
        self.assertEqual(setUp["check"], "gambit-move-relay")
        sent = [line["meaning"] for line in setUp["exchange"] if line["kind"] == "sent"]
        self.assertTrue(sent[-1].startswith("JOIN user='black'"), sent)
        self.assertIn("waited 1 s: nothing more came", [line["meaning"] for line in setUp["exchange"]])
        others = {rule: found["status"] for rule, found in rules.items() if rule != "gambit-join"}
        self.assertEqual(set(others.values()), {PASS}, result.stdout)
        self.assertFalse([r for r, found in rules.items() if found["dependsOn"] == "gambit-join"])
        self.assertIn("what the set-ups of later checks saw changes these verdicts:", result.stdout)
        self.assertIn("--only gambit-join,gambit-move-relay", join["reproduce"])

    def test_aRuleThatPassesThreeOfFiveTimesReportsThreeOfFive(self) -> None:
        result, rules = self.check("every-second-end", "--repeat", "5", "--only", "gambit-end")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        end = rules["gambit-end"]
        self.assertEqual((end["status"], end["runs"]), (FAIL, {PASS: 3, FAIL: 2}))
        self.assertIn("its runs disagree (PASS 3 of 5, FAIL 2 of 5)", end["reason"])
        self.assertEqual([e["where"] for e in end["evidence"]], ["run 2 of 5", "run 4 of 5"])
        self.assertIn("runs: PASS 3 of 5, FAIL 2 of 5", result.stdout)
