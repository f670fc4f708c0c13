"""The evidence under every verdict of ``velhanet-check``: the exchange on the wire, expected and observed,
the original sentence, the command that runs the check again, in every report (text, JSON, JUnit, HTML).
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import fromstring

from twisted.trial.unittest import SynchronousTestCase

from tests.chromium import CHROMIUM, NO_CHROMIUM, Chromium
from tests.processes import ENVIRONMENT, PYTHON, ROOT, Child, freePort
from velhanet.checks.exchange import Exchange, escape
from velhanet.checks.originals import originalsOf
from velhanet.checks.runner import FAMILIES, Outcome, checksOf, ruleOf

SENT_TWICE = b'{"Cmd": 2, "User": "twice", "Args": ""}{"Cmd": 2, "User": "twice", "Args": ""}'
"""What the check gambit-back-to-back writes, in one write."""


class ExchangeTests(SynchronousTestCase):
    def test_bytesAreEscapedReadably(self) -> None:
        self.assertEqual(escape(b'02005ana\n\x00\xff\\"'), '02005ana\\n\\x00\\xff\\\\"')
        self.assertTrue(escape(b"x" * 700).endswith("… (700 bytes)"))

    def test_aFloodKeepsTheFirstAndLastLinesAndCountsTheRest(self) -> None:
        now = [0.0]
        record = Exchange(lambda: now[0], head=3, tail=2)
        for index in range(10):
            now[0] = index / 1000
            record.received("tcp#1", f"{index}".encode(), f"message {index}")
        self.assertEqual([line.raw for line in record.lines], ["0", "1", "2", "8", "9"])
        self.assertEqual([line.at for line in record.lines], [0, 1, 2, 8, 9])
        self.assertEqual(record.leftOut, 5)
        shown = record.textLines()
        self.assertIn("… 5 lines left out …", shown[3])
        self.assertEqual(len(record.textLines(last=2)), 3, "the last two, after a line saying more came before")

    def test_aClientProcessesLinesTakeTheirOwnTimes(self) -> None:
        now = [10.0]
        record = Exchange(lambda: now[0])
        now[0] = 10.5
        record.event("tcp#1", "later")
        record.sent("fifo#2", b"\x01", "earlier, reported late", at=10.2)
        self.assertEqual(
            [(line.at, line.meaning) for line in record.lines], [(200, "earlier, reported late"), (500, "later")]
        )


class ExpectedObservedTests(SynchronousTestCase):
    """A check's message as expected and observed: ``X must Y; got Z``, ``X must Y; Z``, ``X must Y: Z``."""

    def split(self, reason: str) -> tuple[str, str]:
        outcome = Outcome("FAIL", "The rule.", reason, "velhanet.checks.gambit.rules.G.test_x")
        return outcome.expected, outcome.observed

    def test_forms(self) -> None:
        self.assertEqual(self.split("CREATE must get OK; got nothing"), ("CREATE must get OK", "nothing"))
        self.assertEqual(
            self.split("the server must keep serving; no TCP connection to 127.0.0.1:22022: Connection refused"),
            ("the server must keep serving", "no TCP connection to 127.0.0.1:22022: Connection refused"),
        )
        self.assertEqual(
            self.split("the second object must not be lost: after OK came nothing"),
            ("the second object must not be lost", "after OK came nothing"),
        )
        self.assertEqual(self.split("a message without the word"), ("The rule.", "a message without the word"))


class OriginalsTests(SynchronousTestCase):
    """Every rule of every family names the sentence of its original text, in that text's language."""

    LANGUAGES = {"velha": "pt", "gambit": "es", "gobang": "de", "socha": "de", "socha-player": "de"}

    def test_everyRuleHasItsOriginal(self) -> None:
        for family in FAMILIES:
            anchors = {ruleOf(test)[1] for test in checksOf(family)}
            originals = originalsOf(family)
            self.assertEqual(set(originals), anchors, family)
            for anchor, original in originals.items():
                self.assertEqual(original.language, self.LANGUAGES[family], anchor)
                self.assertTrue(original.spec.endswith(f".{original.language}.txt"), anchor)
                self.assertGreater(len(original.sentence), 20, anchor)

    def test_decisionsPointIntoTheDocs(self) -> None:
        for family in FAMILIES:
            for anchor, original in originalsOf(family).items():
                if not original.decision:
                    continue
                doc = (ROOT / "docs" / f"{original.doc}.md").read_text(encoding="utf-8")
                ids = set(re.findall(r'<a id="([^"]+)"', doc)) | {slug(h) for h in re.findall(r"^#+ (.+)$", doc, re.M)}
                self.assertIn(original.decision, ids, f"{anchor}: docs/{original.doc}.md has no such anchor")

    def test_everySentenceIsInItsText(self) -> None:
        """The sentences are verbatim (whitespace aside) in the original texts, where those are at hand.

        The texts are not velhanet's to ship: ``VELHANET_SPECS`` names their folder, by default the
        ``specs`` folder beside the project's ``shared`` interop notes.
        """
        folder = Path(os.environ.get("VELHANET_SPECS", ROOT.parent / "shared" / "specs"))
        if not folder.is_dir():
            self.skipTest(f"the original texts are not at {folder} (set VELHANET_SPECS)")
        for family in FAMILIES:
            for anchor, original in originalsOf(family).items():
                text = " ".join((folder / original.spec).read_text(encoding="utf-8").split())
                self.assertIn(" ".join(original.sentence.split()), text, f"{family} {anchor}")


def slug(heading: str) -> str:
    """The id a Markdown renderer gives a heading (``## Our decisions…`` → ``our-decisions…``)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


class GambitEvidenceTests(SynchronousTestCase):
    """A Gambit server that loses the second of two objects in one write: every report carries the evidence."""

    def setUp(self) -> None:
        self.port = freePort()
        child = Child(self, [PYTHON, "-m", "standins.faulty.gambit_server", str(self.port), "gambit-back-to-back"])
        child.waitForPort(self.port)
        self.scratch = Path(tempfile.mkdtemp(prefix="velhanet-evidence-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.scratch)], check=False))

    def check(self, *more: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Any, str]:
        files = ("--json", "r.json", "--junit-xml", "r.xml", "--html", "r.html")
        command = [PYTHON, "-m", "velhanet.checks.command", "gambit", "--target", f"127.0.0.1:{self.port}"]
        result = subprocess.run(
            [*command, "--time-scale", "0.5", *more, *files],
            cwd=self.scratch,
            env=dict(ENVIRONMENT, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        report = json.loads((self.scratch / "r.json").read_text())
        junit = fromstring((self.scratch / "r.xml").read_bytes())
        return result, report, junit, (self.scratch / "r.html").read_text()

    def test_theExchangeExpectedObservedOriginalAndCommand(self) -> None:
        result, report, junit, page = self.check()
        self.assertEqual(result.returncode, 1, result.stdout)
        rule = next(rule for rule in report["rules"] if rule["id"] == "gambit-back-to-back")
        self.assertEqual(rule["status"], "FAIL")
        self.assertEqual(rule["expected"], "the second of two back-to-back objects must not be lost")
        self.assertRegex(rule["observed"], r"after OK user='' args='[0-9a-f]{4}' came nothing")
        sent = [line for line in rule["exchange"] if line["kind"] == "sent"]
        self.assertEqual([line["raw"] for line in sent], [SENT_TWICE.decode()], "the one write, as it was")
        self.assertIn("(2 objects in one write)", sent[0]["meaning"])
        received = [line for line in rule["exchange"] if line["kind"] == "received"]
        self.assertEqual(len(received), 1)
        self.assertRegex(received[0]["raw"], r'^\{"Cmd":1,"User":"","Args":"[0-9a-f]{4}"\}\\n$')
        events = [line["meaning"] for line in rule["exchange"] if line["kind"] == "event"]
        self.assertIn("waited 1.5 s: nothing more came", events)
        times = [line["at"] for line in rule["exchange"]]
        self.assertEqual(times, sorted(times))
        self.assertEqual(rule["original"]["language"], "es")
        self.assertEqual(rule["original"]["sentence"], "Los mensajes se envían aplanados en formato JSON.")
        again = f"velhanet-check gambit --target 127.0.0.1:{self.port} --time-scale 0.5 --only gambit-back-to-back"
        self.assertEqual(rule["reproduce"], again)
        # the console: one line per rule, the evidence under the FAIL only
        self.assertIn(f"         again: {again}", result.stdout)
        self.assertIn("         expected: the second of two back-to-back objects must not be lost", result.stdout)
        self.assertIn(escape(SENT_TWICE), result.stdout)
        self.assertEqual(result.stdout.count("again: "), 1)
        # JUnit: the exchange is the test case's system-out
        case = next(case for case in junit.iter("testcase") if case.get("name") == "gambit-back-to-back")
        out = case.findtext("system-out") or ""
        self.assertIn(SENT_TWICE.decode(), out)
        self.assertIn("observed: after OK", out)
        # HTML: the rule's section, the bytes and their meaning
        self.assertIn('id="gambit-back-to-back"', page)
        self.assertIn("{&quot;Cmd&quot;: 2, &quot;User&quot;: &quot;twice&quot;", page)
        self.assertIn('<blockquote lang="es">Los mensajes se envían aplanados en formato JSON.</blockquote>', page)
        self.assertNotRegex(page, r"(src|href)=", "a self-contained page: nothing to fetch")
        # the printed command runs that one check, and only it
        words = again.split()[1:]
        rerun = subprocess.run(
            [PYTHON, "-m", "velhanet.checks.command", *words],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.assertEqual(rerun.returncode, 1)
        self.assertIn("1 rules: 0 pass, 1 fail", rerun.stdout)

    def test_thePageInABrowser(self) -> None:
        """The page as a student sees it: the FAIL first in red, its exchange as a table of two columns."""
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)
        self.check()
        page = Chromium(self).open((self.scratch / "r.html").as_uri())
        failed = page.waitFor(
            "document.querySelector('section.rule.fail') !== null",
            "[...document.querySelectorAll('section.rule.fail')].map((s) => s.id)",
        )
        self.assertEqual(failed, ["gambit-back-to-back"])
        cells = page.evaluate(
            "[...document.querySelectorAll('#gambit-back-to-back tr.sent td.raw, #gambit-back-to-back tr.received"
            " td.raw')].map((td) => [td.parentElement.className, td.cellIndex])"
        )
        self.assertEqual(cells[0], ["sent", 2])
        self.assertEqual(cells[1], ["received", 3])
        colour = page.evaluate(
            "getComputedStyle(document.querySelector('#gambit-back-to-back .verdict')).backgroundColor"
        )
        self.assertEqual(colour, "rgb(207, 34, 46)")


def checked(family: str, *arguments: str) -> dict[str, dict[str, Any]]:
    """``velhanet-check FAMILY ARGUMENTS --json``: its rules by id."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "r.json"
        subprocess.run(
            [PYTHON, "-m", "velhanet.checks.command", family, *arguments, "--json", str(report)],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return {rule["id"]: rule for rule in json.loads(report.read_text())["rules"]}


class FamiliesEvidenceTests(SynchronousTestCase):
    """One rule of each other family broken by a stand-in: its exchange holds what the stand-in sent."""

    def test_sochaJoinedWithoutRoomId(self) -> None:
        port = freePort()
        Child(self, [PYTHON, "-m", "standins.faulty.socha_server", str(port), "socha-join", "0.5"]).waitForPort(port)
        rule = checked("socha", "--target", f"127.0.0.1:{port}", "--time-scale", "0.5", "--only", "socha-join")[
            "socha-join"
        ]
        self.assertEqual(rule["status"], "FAIL")
        sent = [line for line in rule["exchange"] if line["kind"] == "sent"]
        self.assertEqual(sent[0]["raw"], "<protocol><join/>")
        received = [line for line in rule["exchange"] if line["kind"] == "received"]
        self.assertRegex(received[0]["raw"], r'<joined roomid="[^"]+"/>')
        self.assertRegex(received[0]["meaning"], r"^joined roomid=")
        self.assertEqual(rule["original"]["language"], "de")

    def test_gobangSizeInTheWrongField(self) -> None:
        directory = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", directory], check=False))
        server = Child(self, [PYTHON, "-m", "standins.faulty.gobang_server", directory, "gobang-signon"])
        pid = server.readLine().strip()
        rules = checked(
            "gobang", "--target", pid, "--fifo-dir", directory, "--time-scale", "0.25", "--only", "gobang-signon"
        )
        rule = rules["gobang-signon"]
        self.assertEqual(rule["status"], "FAIL")
        sent = [line for line in rule["exchange"] if line["kind"] == "sent"]
        self.assertTrue(sent and sent[0]["meaning"].startswith("op 1 SIGNON_BLACK"), rule["exchange"])
        received = [line for line in rule["exchange"] if line["kind"] == "received"]
        self.assertTrue(received, rule["exchange"])
        self.assertRegex(received[0]["meaning"], r"^op 7 BOARD_SIZE x=\d+ y=0$")
        self.assertRegex(received[0]["raw"], r"^(\\x[0-9a-f]{2}|.){2}$")  # a server word: 2 bytes
        times = [line["at"] for line in rule["exchange"]]
        self.assertEqual(times, sorted(times), "the agent's own lines in time order with the checker's")


class EveryFormatTests(SynchronousTestCase):
    """For one rule of each family, a stand-in that breaks it: the console (``--verbose``), JSON, JUnit and
    HTML reports all carry what the stand-in sent, as it came, and expected/observed."""

    def everyFormat(self, family: str, anchor: str, came: str, *arguments: str) -> dict[str, Any]:
        scratch = Path(tempfile.mkdtemp(prefix="velhanet-formats-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(scratch)], check=False))
        files = (
            "--json",
            str(scratch / "r.json"),
            "--junit-xml",
            str(scratch / "r.xml"),
            "--html",
            str(scratch / "r.html"),
        )
        result = subprocess.run(
            [PYTHON, "-m", "velhanet.checks.command", family, *arguments, "--only", anchor, "--verbose", *files],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        rule = {r["id"]: r for r in json.loads((scratch / "r.json").read_text())["rules"]}[anchor]
        self.assertEqual(rule["status"], "FAIL", result.stdout)
        raws = [f"{line['raw']}  = {line['meaning']}" for line in rule["exchange"] if line["kind"] == "received"]
        self.assertTrue(any(came in raw for raw in raws), raws)
        self.assertIn(came, result.stdout)
        self.assertIn(f"         expected: {rule['expected']}", result.stdout)
        self.assertIn(f"         observed: {rule['observed']}", result.stdout)
        case = next(c for c in fromstring((scratch / "r.xml").read_bytes()).iter("testcase") if c.get("name") == anchor)
        self.assertIn(came, case.findtext("system-out") or "")
        page = (scratch / "r.html").read_text()
        self.assertIn(html.escape(came), page)
        self.assertIn(f"<dd>{html.escape(rule['observed'])}</dd>", page)
        return rule

    def test_velha(self) -> None:
        target, local, port = "127.0.47.2", "127.0.47.1", str(freePort(socket.SOCK_DGRAM))
        peer = [PYTHON, "-m", "standins.faulty.velha_peer", target, local, "wrong-length-field", port, "0.25"]
        Child(self, peer).readLine()
        self.everyFormat(
            "velha",
            "velha-hello",
            "02006Faulty",
            "--target",
            target,
            "--local",
            local,
            "--port",
            port,
            "--time-scale",
            "0.25",
        )

    def test_socha(self) -> None:
        port = freePort()
        Child(self, [PYTHON, "-m", "standins.faulty.socha_server", str(port), "socha-join", "0.5"]).waitForPort(port)
        self.everyFormat(
            "socha", "socha-join", "<joined roomid=", "--target", f"127.0.0.1:{port}", "--time-scale", "0.5"
        )

    def test_gobang(self) -> None:
        directory = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", directory], check=False))
        server = Child(self, [PYTHON, "-m", "standins.faulty.gobang_server", directory, "gobang-signon"])
        pid = server.readLine().strip()
        rule = self.everyFormat(
            "gobang",
            "gobang-signon",
            "op 7 BOARD_SIZE",
            "--target",
            pid,
            "--fifo-dir",
            directory,
            "--time-scale",
            "0.25",
        )
        self.assertTrue(rule["exchange"])

    def test_sochaPlayer(self) -> None:
        command = f"{PYTHON} standins/faulty/socha_player.py {{port}} socha-player-moves"
        self.everyFormat("socha-player", "socha-player-moves", 'class="move"', "--command", command)
