"""``velhanet-check`` against velhanet's own services (every rule must pass, with ``--strict``) and
against deliberately broken ones: for every check of every suite a fault that breaks exactly that
rule, with the whole suite run, so the report must name that rule — FAIL, or WARN for a known
deviation — and nothing else but its consequences (NOT RUN, saying so). Also a target that dies
mid-run, and targets that cannot be tested at all.

Everything runs as separate processes, as a teacher would run it: the target and the checker.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import fromstring

from twisted.trial.unittest import SynchronousTestCase

from tests.chromium import CHROMIUM, Chromium
from tests.processes import ENVIRONMENT, PYTHON, ROOT, Child, freePort, twistd


class ConformanceRuns(SynchronousTestCase):
    family = ""
    child: Child
    """The target process the test started last."""

    def start(self, command: list[str], waitForPort: int | None = None, firstLine: bool = False) -> str:
        """Start a target process; wait until its port answers or it printed its first line (returned)."""
        child = self.child = Child(self, command)
        line = ""
        if firstLine:
            line = child.readLine().strip()
            self.assertTrue(line, f"the target died at once: {command}")
        if waitForPort is not None:
            child.waitForPort(waitForPort)
        return line

    def check(self, *args: str, timeout: float = 600) -> tuple[int, dict[str, Any], str]:
        """Run ``velhanet-check`` on ``args``; its exit status, its JSON report and its text."""
        with tempfile.TemporaryDirectory() as scratch:
            report = Path(scratch) / "report.json"
            junit = Path(scratch) / "report.xml"
            outputs = ("--json", str(report), "--junit-xml", str(junit))
            result = subprocess.run(
                [PYTHON, "-m", "velhanet.checks.command", self.family, *args, *outputs],
                cwd=ROOT,
                env=ENVIRONMENT,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            data = json.loads(report.read_text())
            suite = fromstring(junit.read_bytes())
        text = result.stdout + result.stderr
        self.assertEqual(suite.get("name"), f"velhanet-check.{self.family}")
        self.assertEqual(int(suite.get("failures", "-1")), data["counts"]["FAIL"], text)
        self.assertEqual(len(suite.findall("testcase")), len(data["rules"]) + (1 if data["cannotTest"] else 0))
        counts = data["counts"]
        self.assertEqual(sum(counts.values()), len(data["rules"]), text)  # the summary adds up
        return result.returncode, data, text

    def assertAllPass(self, code: int, data: dict[str, Any], text: str) -> None:
        self.assertEqual(code, 0, text)
        self.assertEqual([rule["status"] for rule in data["rules"] if rule["status"] != "PASS"], [], text)
        self.assertGreater(len(data["rules"]), 3, text)
        for rule in data["rules"]:
            self.assertTrue(rule["reference"].startswith(f"docs/{self.docName()}.md#"), rule)

    def docName(self) -> str:
        return "socha" if self.family == "socha-player" else self.family

    def assertOnly(self, code: int, data: dict[str, Any], text: str, anchor: str, status: str) -> None:
        """``anchor`` has ``status``; every other rule passes, or is NOT RUN as a consequence that says so."""
        verdicts = {rule["id"]: rule for rule in data["rules"]}
        self.assertEqual(verdicts[anchor]["status"], status, text)
        for name, rule in verdicts.items():
            if name == anchor or rule["status"] == "PASS":
                continue
            self.assertEqual(rule["status"], "NOT RUN", text)
            consequence = rule["dependsOn"] == anchor and "consequence of the FAIL" in rule["reason"]
            stopped = "the target stopped during the check" in rule["reason"]
            self.assertTrue(consequence or stopped, f"{name}: {rule['reason']}")
        self.assertEqual(code, 1 if status == "FAIL" else 0, text)

    def assertCannotTest(self, code: int, data: dict[str, Any], text: str, reason: str) -> None:
        self.assertEqual(code, 3, text)
        self.assertIn(reason, data["cannotTest"])
        self.assertEqual(data["rules"], [])
        self.assertIn("cannot test:", text)


def faultTests(faults: dict[str, str]) -> dict[str, Any]:
    """One test method per fault: ``test_fault_<anchor>`` running ``self.runFault(anchor, status)``."""
    methods = {}
    for anchor, status in faults.items():

        def test(self: Any, anchor: str = anchor, status: str = status) -> None:
            self.runFault(anchor, status)

        test.__name__ = f"test_fault_{anchor.replace('-', '_')}"
        test.__doc__ = f"A target that breaks {anchor}: the report names that rule ({status}) and nothing else."
        methods[test.__name__] = test
    return methods


GAMBIT_FAST = ("--time-scale", "0.5")
"""The checker's waits at half: 1.5 s for an answer, 0.25 s of silence where none may come."""


class GambitChecks(ConformanceRuns):
    family = "gambit"

    def test_velhanetServerPasses(self) -> None:
        port = freePort()
        self.start(twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1"), waitForPort=port)
        self.assertAllPass(*self.check("--target", f"127.0.0.1:{port}", "--strict", *GAMBIT_FAST))

    def runFault(self, anchor: str, status: str) -> None:
        port = freePort()
        self.start([PYTHON, "-m", "standins.faulty.gambit_server", str(port), anchor], waitForPort=port)
        self.assertOnly(*self.check("--target", f"127.0.0.1:{port}", *GAMBIT_FAST), anchor, status)

    locals().update(
        faultTests(
            {
                "gambit-create": "WARN",
                "gambit-join": "FAIL",
                "gambit-join-unknown": "FAIL",
                "gambit-join-same-name": "WARN",
                "gambit-keys": "FAIL",
                "gambit-move-relay": "FAIL",
                "gambit-end": "FAIL",
                "gambit-disconnect": "FAIL",
                "gambit-split": "FAIL",
                "gambit-back-to-back": "FAIL",
                "gambit-move-outside": "FAIL",
                "gambit-bad-json": "WARN",
                "gambit-empty-user": "WARN",
            }
        )
    )

    def test_serverThatDiesMidRun(self) -> None:
        """The server dies during one check: that check says so, every later one is NOT RUN, never FAIL."""
        port = freePort()
        self.start([PYTHON, "-m", "standins.faulty.gambit_server", str(port), "dies-on-unknown-join"], waitForPort=port)
        code, data, text = self.check("--target", f"127.0.0.1:{port}", *GAMBIT_FAST)
        self.assertEqual(code, 1, text)
        statuses = [(rule["id"], rule["status"]) for rule in data["rules"]]
        index = statuses.index(("gambit-join-unknown", "FAIL"))
        self.assertIn("the target stopped during this check", data["rules"][index]["reason"])
        self.assertTrue(all(status == "PASS" for _, status in statuses[:index]), text)
        after = data["rules"][index + 1 :]
        self.assertTrue(after)
        for rule in after:
            self.assertEqual(rule["status"], "NOT RUN", text)
            self.assertIn("the target stopped during the check “JOIN of a game that does not exist", rule["reason"])

    def test_deadTargetCannotBeTested(self) -> None:
        port = freePort()
        self.assertCannotTest(*self.check("--target", f"127.0.0.1:{port}"), "Connection refused")


SOCHA_SCALE = "0.5"
"""The server's move limits and the checker's waits at half: a hard timeout after 5 s, checked within
6.5 s; the checker's own moves still come well within the soft 1 s."""


class SochaChecks(ConformanceRuns):
    family = "socha"

    def test_velhanetServerPasses(self) -> None:
        port = freePort()
        listen = ("--listen", f"tcp:{port}:interface=127.0.0.1")
        self.start(twistd("socha-server", *listen, "--time-scale", SOCHA_SCALE), waitForPort=port)
        self.assertAllPass(*self.check("--target", f"127.0.0.1:{port}", "--strict", "--time-scale", SOCHA_SCALE))

    def runFault(self, anchor: str, status: str) -> None:
        port = freePort()
        self.start([PYTHON, "-m", "standins.faulty.socha_server", str(port), anchor, SOCHA_SCALE], waitForPort=port)
        self.assertOnly(*self.check("--target", f"127.0.0.1:{port}", "--time-scale", SOCHA_SCALE), anchor, status)

    locals().update(
        faultTests(
            {
                "socha-join": "FAIL",
                "socha-start": "FAIL",
                "socha-full-game": "FAIL",
                "socha-invalid-move": "FAIL",
                "socha-out-of-turn": "FAIL",
                "socha-hard-timeout": "FAIL",
                "socha-unknown-reservation": "FAIL",
                "socha-bad-xml": "FAIL",
            }
        )
    )

    def test_deadTargetCannotBeTested(self) -> None:
        self.assertCannotTest(*self.check("--target", f"127.0.0.1:{freePort()}"), "Connection refused")


class SochaPlayerChecks(ConformanceRuns):
    family = "socha-player"

    def test_realPlayerPasses(self) -> None:
        command = f"{PYTHON} tests/socha_player.py {{port}} 5"
        code, data, text = self.check("--command", command, "--strict")
        self.assertAllPass(code, data, text)
        # every rule of the one game shows the game's XML, to and from the player, in order
        joined = {rule["id"]: rule["exchange"] for rule in data["rules"]}["socha-player-join"]
        received = [line for line in joined if line["kind"] == "received"]
        self.assertEqual(received[0]["meaning"], "join", joined[:4])
        self.assertTrue(any("moveRequest" in line["raw"] for line in joined if line["kind"] == "sent"))
        self.assertTrue(any("class=move" in line["meaning"] for line in received))
        self.assertIn("the program ended: ", joined[-1]["meaning"])

    def runFault(self, anchor: str, status: str) -> None:
        command = f"{PYTHON} standins/faulty/socha_player.py {{port}} {anchor}"
        self.assertOnly(*self.check("--command", command), anchor, status)

    locals().update(
        faultTests(
            {
                "socha-player-join": "FAIL",
                "socha-player-moves": "FAIL",
                "socha-player-close": "FAIL",
                "socha-player-exit": "FAIL",
            }
        )
    )

    def test_missingProgramCannotBeTested(self) -> None:
        self.assertCannotTest(*self.check("--command", "no-such-player --port {port}"), "was not found")


GOBANG_FAST = ("--time-scale", "0.25")
"""The agents' limits at a quarter (5 s for the server's next word): velhanet's server answers at once."""


class GobangChecks(ConformanceRuns):
    family = "gobang"

    def test_velhanetServerPasses(self) -> None:
        directory = tempfile.mkdtemp()
        self.start(twistd("gobang-server", "--fifo-dir", directory))
        pid = ""
        for _ in range(200):
            self.child.checkAlive()
            found = list(Path(directory).glob("gbs.*"))
            if found:
                pid = str(int(found[0].name[4:]))
                break
            time.sleep(0.05)
        self.assertTrue(pid, "the server made no FIFO")
        checked = self.check("--target", pid, "--fifo-dir", directory, "--destructive", "--strict", *GOBANG_FAST)
        self.assertAllPass(*checked)
        self.assertEqual(list(Path(directory).glob("gbs.*")), [])

    def runFault(self, anchor: str, status: str) -> None:
        directory = tempfile.mkdtemp()
        pid = self.start([PYTHON, "-m", "standins.faulty.gobang_server", directory, anchor], firstLine=True)
        for _ in range(100):
            if any(directory in str(p) for p in Path(directory).iterdir()):
                break
            time.sleep(0.05)
        checked = self.check("--target", pid, "--fifo-dir", directory, "--destructive", *GOBANG_FAST)
        self.assertOnly(*checked, anchor, status)

    locals().update(
        faultTests(
            {
                "gobang-fifo-name": "FAIL",
                "gobang-signon": "FAIL",
                "gobang-black-first": "FAIL",
                "gobang-five": "FAIL",
                "gobang-illegal": "FAIL",
                "gobang-passes": "FAIL",
                "gobang-resign": "FAIL",
                "gobang-signoff": "FAIL",
                "gobang-kibitz": "WARN",
                "gobang-kill": "FAIL",
            }
        )
    )

    def test_wrongPidCannotBeTested(self) -> None:
        self.assertCannotTest(
            *self.check("--target", "999999", "--fifo-dir", tempfile.mkdtemp()), "no process with pid 999999"
        )


VELHA_FAULTS = {
    "velha-hello": "FAIL",
    "velha-malformed-datagrams": "FAIL",
    "velha-invite": "FAIL",
    "velha-answer-nick": "FAIL",
    "velha-no-msg06": "WARN",
    "velha-series-invitee": "FAIL",
    "velha-series-inviter": "FAIL",
    "velha-busy": "FAIL",
    "velha-malformed-frame": "FAIL",
}


TIME_SCALE = 0.25
"""The peer's protocol timers and the checker's limits at a quarter, both: the same rules on a clock four
times as fast, every rule the faults break decided by the same answer or the same silence."""


def waitForPeer(child: Child, target: str, local: str, port: int) -> None:
    """Until the peer answers MSG01 (it answers at the protocol port of the sender's address).

    Fails at once if the peer's process died.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        udp.bind((local, port))
        udp.settimeout(0.2)
        for _ in range(100):
            child.checkAlive()
            udp.sendto(b"01011vcheck", (target, port))
            try:
                if udp.recv(256).startswith(b"02"):
                    return
            except OSError:
                continue
    raise AssertionError(f"the peer at {target}:{port} never answered MSG01")


class VelhaChecks(ConformanceRuns):
    """Each test has its own loopback addresses and a free UDP port, so tests run side by side."""

    family = "velha"

    def addresses(self, index: int) -> tuple[str, str, str, str]:
        net = f"127.0.{40 + index}"
        return f"{net}.2", f"{net}.1", f"{net}.3", str(freePort(socket.SOCK_DGRAM))

    def checkPeer(self, target: str, local: str, local2: str, port: str, *more: str) -> tuple[int, Any, str]:
        # the same options as the peer's: its pace, and half a second of grace on the clock both scale
        fast = ("--move-delay", "0.02", "--start-grace", str(0.5 / TIME_SCALE), "--time-scale", str(TIME_SCALE))
        local3 = target.rsplit(".", 1)[0] + ".4"
        addresses = ("--local", local, "--local2", local2, "--local3", local3)
        return self.check("--target", target, *addresses, "--port", port, *fast, *more)

    def test_velhanetPeerPasses(self) -> None:
        target, local, local2, port = self.addresses(0)
        self.start(
            twistd(
                "velha",
                *("--nick", "Bo", "--bot", "--interface", target, "--announce", local, "--port", port),
                *("--invite", "vinvite", "--move-delay", "0.02", "--start-grace", str(0.5 / TIME_SCALE)),
                *("--time-scale", str(TIME_SCALE)),
            )
        )
        waitForPeer(self.child, target, local, int(port))
        self.assertAllPass(*self.checkPeer(target, local, local2, port, "--strict"))

    def runFault(self, anchor: str, status: str) -> None:
        target, local, local2, port = self.addresses(1 + list(VELHA_FAULTS).index(anchor))
        peer = [PYTHON, "-m", "standins.faulty.velha_peer", target, local, anchor, port, str(TIME_SCALE)]
        self.start(peer, firstLine=True)
        self.assertOnly(*self.checkPeer(target, local, local2, port), anchor, status)

    locals().update(faultTests(VELHA_FAULTS))

    def studentsPeer(self, fault: str, index: int, *more: str) -> tuple[dict[str, dict[str, Any]], str, str]:
        """A stand-in of a real student's peer (``standins/faulty/velha_peer.py``): its verdicts by rule id."""
        target, local, local2, port = self.addresses(index)
        peer = [PYTHON, "-m", "standins.faulty.velha_peer", target, local, fault, port, str(TIME_SCALE)]
        self.start(peer, firstLine=True)
        code, data, text = self.checkPeer(target, local, local2, port, *more)
        return {rule["id"]: rule for rule in data["rules"]}, text, target.rsplit(".", 1)[0] + ".4"

    def test_wrongLengthFieldIsShownNotNothing(self) -> None:
        """A peer whose MSG02 and MSG05 count only the body in the length field: the report says what came
        and why it is malformed, never "nothing"."""
        rules, text, _ = self.studentsPeer("wrong-length-field", 21)
        self.assertEqual(rules["velha-hello"]["status"], "FAIL", text)
        self.assertIn(
            "got only malformed datagrams: received '02006Faulty': header says 6 characters but the message has 11",
            rules["velha-hello"]["reason"],
        )
        self.assertEqual(rules["velha-invite"]["status"], "FAIL", text)
        self.assertRegex(rules["velha-invite"]["observed"], r"received '05012Faulty\|\d+': header says 12 characters")
        received = [line for line in rules["velha-invite"]["exchange"] if line["kind"] == "received"]
        self.assertTrue(any(line["raw"].startswith("05012Faulty|") for line in received), received)
        self.assertNotIn("got nothing", text)
        # the console: the bytes as they came, and what they are, under the FAIL
        self.assertIn("         observed: only malformed datagrams: received '02006Faulty': header says 6", text)
        self.assertRegex(text, r"<- udp \S+ +02006Faulty  = from \S+: malformed: header says 6 characters")

    def test_peerThatMissesAShortDatagramIsNotStopped(self) -> None:
        """A peer that reads a datagram shorter than the one before with stale bytes: it misses one MSG01
        and answers the next. It is not "stopped": no rule is NOT RUN for it; the rule it breaks FAILs and
        says that a MSG01 right after was answered."""
        rules, text, _ = self.studentsPeer("stale-buffer", 22)
        self.assertNotIn("the target stopped", text)
        self.assertEqual([rule for rule, found in rules.items() if found["status"] == "NOT RUN"], [], text)
        failed = [rule for rule, found in rules.items() if found["status"] == "FAIL"]
        self.assertTrue(failed, text)
        for rule in failed:
            self.assertIn("was answered", rules[rule]["reason"], text)

    def test_notInvitingWhenRequiredFails(self) -> None:
        """``--expect-invite`` (velhanet-grade requires it of every program): a peer that never invites
        ``vinvite`` FAILs that rule; vinvite is announced from an address of its own."""
        rules, text, vinvite = self.studentsPeer("never-invites", 23, "--expect-invite")
        inviter = rules["velha-series-inviter"]
        self.assertEqual(inviter["status"], "FAIL", text)
        self.assertIn("the program must invite vinvite", inviter["reason"])
        sent = [line for line in inviter["exchange"] if line["kind"] == "sent" and "vinvite" in line["raw"]]
        self.assertEqual(
            [(line["channel"], line["raw"]) for line in sent],
            [(f"udp {vinvite}", "01012vinvite"), (f"udp {vinvite}", "02012vinvite")],
        )
        others = {rule: found["status"] for rule, found in rules.items() if rule != "velha-series-inviter"}
        self.assertEqual(set(others.values()), {"PASS"}, text)

    def test_peerStuckAfterAMatchFailsOnce(self) -> None:
        """A peer whose TCP side dies in its first match and refuses every invitation after it: the rule that
        breaks (an idle peer accepts) FAILs once, with the refusals; the checks that needed a match name it."""
        rules, text, _ = self.studentsPeer("stuck-after-a-match", 24)
        self.assertEqual(rules["velha-invite"]["status"], "FAIL", text)
        self.assertIn("got b'05013Faulty|0' three times, 5 s apart", rules["velha-invite"]["reason"])
        self.assertIn("it has refused every invitation since the check velha-", rules["velha-invite"]["reason"])
        needed = [rule for rule, found in rules.items() if found["status"] == "NOT RUN"]
        self.assertTrue(needed, text)
        for rule in needed:
            self.assertEqual(rules[rule]["dependsOn"], "velha-invite", rule)
            self.assertIn("consequence of the FAIL of", rules[rule]["reason"])
        self.assertEqual([rule for rule, found in rules.items() if found["status"] == "FAIL"], ["velha-invite"])

    def test_aRefusalReceivedElsewhereIsGradedByItsOwnRule(self) -> None:
        """The same stuck peer, refusing with the inviter's nick: velha-busy cannot play its own match, and
        grades the refusals the checker did receive (WARN), instead of NOT RUN."""
        rules, text, _ = self.studentsPeer("stuck-refusing-with-the-inviters-nick", 25)
        self.assertEqual(rules["velha-invite"]["status"], "FAIL", text)
        busy = rules["velha-busy"]
        self.assertEqual(busy["status"], "WARN", text)
        self.assertRegex(busy["reason"], r"a refusal received during velha-[a-z0-9-]+, b'05013vcheck\|0', carries the")

    def test_aFloodIsCutInTheRecord(self) -> None:
        """A peer that sends 150 malformed datagrams before each MSG02: the rule's record keeps its first and
        last lines and says how many it left out, in the JSON and on the console."""
        rules, text, _ = self.studentsPeer("floods", 26, "--only", "velha-hello", "--verbose")
        hello = rules["velha-hello"]
        self.assertEqual(hello["status"], "PASS", text)
        self.assertEqual(len(hello["exchange"]), 120)
        self.assertGreater(hello["exchangeLeftOut"], 20)
        self.assertEqual(hello["exchange"][0]["raw"], "01011vcheck")
        self.assertIn(f"… {hello['exchangeLeftOut']} lines left out …", text)

    def test_nobodyListeningCannotBeTested(self) -> None:
        target, local, local2, port = self.addresses(20)
        self.assertCannotTest(*self.checkPeer(target, local, local2, port), "nothing listens on UDP")


class GradeFolderTests(ConformanceRuns):
    """``velhanet-grade``: a folder of submissions, one line per student, a report file each."""

    def test_classFolder(self) -> None:
        folder = Path(self.mktemp()).resolve()
        for student, command in {
            "ana": f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l /dev/null"
            " gambit-server --listen tcp:{port}:interface=127.0.0.1",
            "bo": f"{PYTHON} gambit_server.py {{port}} gambit-join-unknown",
            "cy": "./no-such-server --port {port}",
        }.items():
            (folder / student).mkdir(parents=True)
            (folder / student / "velhanet-run").write_text(command)
        # bo's program is its own (a sandboxed program sees its own folder only)
        shutil.copy(ROOT / "standins" / "faulty" / "gambit_server.py", folder / "bo")
        (folder / "dan").mkdir()
        out = Path(self.mktemp()).resolve()
        result = subprocess.run(
            [PYTHON, "-m", "velhanet.grading.command", "gambit", str(folder), "--out", str(out)],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        rows = {
            line.split()[0]: line.split()
            for line in result.stdout.splitlines()
            if line[:3] in ("ana", "bo ", "cy ", "dan")
        }
        self.assertEqual(rows["ana"][3:9], ["13", "0", "0", "0", "0", "pass"])
        self.assertEqual(rows["bo"][3:9], ["12", "1", "0", "0", "0", "fail"])
        self.assertEqual(rows["cy"][8:10], ["cannot", "test:"])
        verdict = " ".join(rows["cy"][8:])
        self.assertIn("the program exited with status 127 before it could be tested: ", verdict)
        self.assertIn("no-such-server: not found", verdict)
        self.assertIn("no velhanet-run file", " ".join(rows["dan"]))
        bo = json.loads((out / "bo.json").read_text())
        self.assertEqual([rule["id"] for rule in bo["rules"] if rule["status"] == "FAIL"], ["gambit-join-unknown"])
        self.assertEqual(
            sorted(p.name for p in out.iterdir()),
            sorted(
                [f"{s}.{e}" for s in ("ana", "bo", "cy", "dan") for e in ("json", "xml", "html")]
                + [f"{s}.log" for s in ("ana", "bo", "cy")]
                + ["grades.db", "index.html"]
            ),
        )
        self.assertIn("no-such-server: not found", (out / "cy.log").read_text())
        again = next(rule["reproduce"] for rule in bo["rules"] if rule["id"] == "gambit-join-unknown")
        self.assertEqual(
            again,
            f"velhanet-grade gambit {folder} --student bo --again --out {out}-again --only gambit-join-unknown",
        )
        self.assertIn("no-such-server: not found", (out / "cy.html").read_text(), "the program's output, on its page")
        self.classMatrixInABrowser(out)

    def classMatrixInABrowser(self, out: Path) -> None:
        """The matrix: a row per student, bo's one FAIL in red, its link opens bo's page at that rule."""
        if CHROMIUM is None:
            return  # the files were checked above; the page in a browser needs Chromium (CI installs it)
        page = Chromium(self).open((out / "index.html").as_uri())
        students = page.waitFor(
            "document.querySelectorAll('tbody tr').length === 4",
            "[...document.querySelectorAll('tbody th.student')].map((th) => th.textContent)",
        )
        self.assertEqual(students, ["ana", "bo", "cy", "dan"])
        failed = page.evaluate("[...document.querySelectorAll('tbody td.fail a')].map((a) => a.getAttribute('href'))")
        self.assertEqual(failed, ["bo.html#gambit-join-unknown"])
        counts = page.evaluate("[...document.querySelectorAll('tfoot td.count')].map((td) => td.textContent)")
        self.assertIn("1/4", counts, "join-unknown: only ana passes it")
        self.assertIn("2/4", counts)
        page.evaluate("document.querySelector('tbody td.fail a').click()")
        shown: Any = None
        for _ in range(200):  # the click navigates: ask the new document until it is there
            with contextlib.suppress(AssertionError):  # the old document's context went away mid-question
                shown = page.evaluate(
                    "location.pathname.endsWith('/bo.html') && document.readyState === 'complete'"
                    " ? [location.hash, document.querySelector(':target .verdict').textContent] : null",
                    seconds=5,
                )
            if shown:
                break
        self.assertEqual(shown, ["#gambit-join-unknown", "FAIL"])


class OnlyTests(SynchronousTestCase):
    """``--only`` takes rule ids exactly: the command printed under a FAIL runs that one check."""

    def test_exactIds(self) -> None:
        from velhanet.checks.runner import checksOf, ruleOf, selected

        checks = [(test.id(), ruleOf(test)[1]) for test in checksOf("gambit")]
        self.assertEqual([a for t, a in checks if selected("gambit-join", t, a)], ["gambit-join"])
        self.assertEqual(
            sorted(a for t, a in checks if selected("gambit-split, gambit-end", t, a)), ["gambit-end", "gambit-split"]
        )
        self.assertEqual([a for t, a in checks if selected("split", t, a)], [])

    def test_unknownIdIsAUsageError(self) -> None:
        result = subprocess.run(
            [PYTHON, "-m", "velhanet.checks.command", "gambit", "--only", "gambit-joi"],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(
            "--only gambit-joi: no such rule of gambit; its rules: gambit-back-to-back, gambit-create", result.stderr
        )
