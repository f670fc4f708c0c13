"""The twistd plugin, its options, and two real peers playing over loopback."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import deferLater
from twisted.plugin import IPlugin, getPlugins
from twisted.python import usage
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.velha.service import VelhaService, broadcastAddresses
from velhanet.velha.tap import Options, makeService

ROOT = Path(__file__).resolve().parent.parent
SERIES_OVER = re.compile(r"series (won|lost|draw) \d-\d")


class OptionsTests(SynchronousTestCase):
    def parse(self, *args: str) -> Options:
        options = Options()
        options.parseOptions(list(args))
        return options

    def test_defaults(self) -> None:
        options = self.parse("--nick", "Bo")
        self.assertEqual(options["port"], 20181)
        self.assertEqual(options["accept"], "ask")
        self.assertEqual(options["announce"], [])
        self.assertEqual(options["log-file"], "velha-Bo.log")

    def test_botAcceptsByDefault(self) -> None:
        self.assertEqual(self.parse("--nick", "Bo", "--bot")["accept"], "always")
        self.assertEqual(self.parse("--nick", "Bo", "--bot", "--accept", "never")["accept"], "never")

    def test_announceList(self) -> None:
        options = self.parse("--nick", "Bo", "--announce", "127.0.0.1, 127.0.0.2")
        self.assertEqual(options["announce"], ["127.0.0.1", "127.0.0.2"])

    def test_badNicksRefused(self) -> None:
        for nick in ("a|b", "x" * 21, "Zé"):
            self.assertRaises(usage.UsageError, self.parse, "--nick", nick)
        self.assertRaises(usage.UsageError, self.parse)
        self.assertRaises(usage.UsageError, self.parse, "--nick", "Bo", "--accept", "maybe")

    def test_makeService(self) -> None:
        service = makeService(self.parse("--nick", "Bo"))
        self.assertIsInstance(service, VelhaService)

    def test_broadcastAddresses(self) -> None:
        self.assertEqual(broadcastAddresses()[0], "255.255.255.255")


class PluginTests(SynchronousTestCase):
    def test_velhaPluginRegistered(self) -> None:
        from twisted.application.service import IServiceMaker

        names = {p.tapname: p for p in getPlugins(IServiceMaker) if IPlugin.providedBy(p)}
        self.assertIn("velha", names)
        self.assertEqual(names["velha"].options, Options)


def twistd(*args: str, log: Path) -> subprocess.Popen[bytes]:
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [
        sys.executable,
        "-c",
        "from twisted.scripts.twistd import run; run()",
        "-n",
        "--pidfile=",
        "-l",
        str(log),
    ]
    return subprocess.Popen([*command, *args], cwd=ROOT, env=environment, stdin=subprocess.DEVNULL)


class TwoRealPeersTests(TestCase):
    """Two ``twistd -n velha --bot`` processes on 127.0.0.1 and 127.0.0.2 play a whole series."""

    timeout = 90

    @inlineCallbacks
    def test_completeSeriesOverLoopback(self):  # type: ignore[no-untyped-def]
        tmp = Path(self.mktemp()).resolve()
        tmp.mkdir()
        logs = tmp / "ana.log", tmp / "bo.log"
        common = ["--bot", "--move-delay", "0.05", "--trace"]
        ana = twistd(
            "velha", "--nick", "Ana", "--interface", "127.0.0.1", "--announce", "127.0.0.2", *common, log=logs[0]
        )
        self.addCleanup(ana.kill)
        yield deferLater(reactor, 1.0, lambda: None)
        bo = twistd(
            "velha",
            "--nick",
            "Bo",
            "--interface",
            "127.0.0.2",
            "--announce",
            "127.0.0.1",
            "--invite",
            "Ana",
            *common,
            log=logs[1],
        )
        self.addCleanup(bo.kill)
        deadline = time.monotonic() + 60
        texts = ["", ""]
        while time.monotonic() < deadline:
            texts = [log.read_text() if log.exists() else "" for log in logs]
            if all(SERIES_OVER.search(text) for text in texts):
                break
            yield deferLater(reactor, 0.2, lambda: None)
        for text in texts:
            self.assertIn("match against", text)
            self.assertRegex(text, SERIES_OVER)
        # Real UDP and TCP went both ways: MSG04/05/06 and the TCP MSG07.
        self.assertIn("b'04007Bo'", texts[1])
        self.assertRegex(texts[0], r"b'05\d{3}Ana\|\d+'")
        self.assertIn("b'06007Ok'", texts[1])
        self.assertRegex(texts[1], r"<- tcp Ana b'07006[12]'")
        # Both stop cleanly on SIGTERM (twistd then re-raises it as its exit
        # status), Bo saying goodbye with MSG03 first.
        bo.terminate()
        ana.terminate()
        for process in (ana, bo):
            for _ in range(50):
                if process.poll() is not None:
                    break
                yield deferLater(reactor, 0.1, lambda: None)
            self.assertEqual(process.returncode, -signal.SIGTERM)
        for log in logs:
            self.assertIn("Server Shut Down.", log.read_text())
        self.assertIn("b'03007Bo'", logs[1].read_text())


class KilledPeerTests(TestCase):
    """A peer killed with SIGKILL mid-match: the survivor says so, stays up, and plays the next one.

    (On 127.0.0.41 and .42, so that it can run beside L{TwoRealPeersTests}.)
    """

    timeout = 180

    @inlineCallbacks
    def test_survivorPlaysAgain(self):  # type: ignore[no-untyped-def]
        tmp = Path(self.mktemp()).resolve()
        tmp.mkdir()
        anaLog, boLog, bo2Log = tmp / "ana.log", tmp / "bo.log", tmp / "bo2.log"
        common = ["--bot", "--move-delay", "0.3", "--trace"]
        ana = twistd(
            "velha", "--nick", "Ana", "--interface", "127.0.0.41", "--announce", "127.0.0.42", *common, log=anaLog
        )
        self.addCleanup(ana.kill)
        yield deferLater(reactor, 1.0, lambda: None)
        peer = ["--interface", "127.0.0.42", "--announce", "127.0.0.41", "--invite", "Ana", *common]
        bo = twistd("velha", "--nick", "Bo", *peer, log=boLog)
        self.addCleanup(bo.kill)
        yield self.until(lambda: "<- tcp Bo b'08" in (anaLog.read_text() if anaLog.exists() else ""), 40)
        bo.kill()  # SIGKILL: no MSG10, no MSG03, the kernel resets the connection
        bo.wait()
        yield self.until(lambda: "match ended" in anaLog.read_text().split("<- tcp Bo b'08", 1)[1], 20)
        self.assertIsNone(ana.poll())
        bo2 = twistd("velha", "--nick", "Bo", *peer, log=bo2Log)
        self.addCleanup(bo2.kill)
        yield self.until(lambda: bool(SERIES_OVER.search(anaLog.read_text())), 120)

    @inlineCallbacks
    def until(self, condition, seconds: float):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            yield deferLater(reactor, 0.2, lambda: None)
        self.fail("timed out waiting")
