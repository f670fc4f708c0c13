"""The conformance suites against velhanet's own services (they must pass) and against
deliberately broken implementations (the check for each bug must fail, quoting its rule).

Everything runs as separate processes, as a teacher would run it: the target
and ``velhanet-check`` itself.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = dict(os.environ, PYTHONPATH=str(ROOT))


def freePort() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def twistd(*args: str) -> list[str]:
    return [sys.executable, "-c", "from twisted.scripts.twistd import run; run()", "-n", "--pidfile=", "-l", "-", *args]


class ConformanceRuns(SynchronousTestCase):
    def start(
        self, command: list[str], waitForPort: int | None = None, waitForLine: bool = False
    ) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=ENVIRONMENT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

        def stop() -> None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if process.stdout:
                process.stdout.close()

        self.addCleanup(stop)
        if waitForLine:
            assert process.stdout is not None
            self.firstLine = process.stdout.readline().strip()
        if waitForPort is not None:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", waitForPort), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
        return process

    def check(self, *args: str, timeout: float = 400) -> tuple[int, str]:
        result = subprocess.run(
            [sys.executable, "-m", "velhanet.conformance.report", *args],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return result.returncode, result.stdout + result.stderr

    def assertAllPass(self, code: int, report: str) -> None:
        self.assertEqual(code, 0, report)
        self.assertIn(" 0 failed", report)
        self.assertNotIn("\nFAIL", report)

    def assertRuleFails(self, code: int, report: str, rule: str, reason: str) -> None:
        self.assertEqual(code, 1, report)
        failing = [line for line in report.splitlines() if line.startswith("FAIL")]
        self.assertTrue(any(rule in line for line in failing), report)
        self.assertIn(reason, report)


class GambitChecks(ConformanceRuns):
    def test_velhanetServerPasses(self) -> None:
        port = freePort()
        self.start(twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1"), waitForPort=port)
        self.assertAllPass(*self.check("gambit", "--target", f"127.0.0.1:{port}"))

    def test_silentJoinFails(self) -> None:
        port = freePort()
        self.start([sys.executable, "-m", "tests.broken.gambit_server", str(port), "silent-join"], waitForPort=port)
        code, report = self.check("gambit", "--target", f"127.0.0.1:{port}", "--only", "joinUnknown")
        self.assertRuleFails(
            code,
            report,
            "JOIN of a game that does not exist is answered by ERROR",
            "JOIN of unknown game 'zzzz' must get ERROR (text §3); got nothing",
        )

    def test_echoedMoveFails(self) -> None:
        port = freePort()
        self.start([sys.executable, "-m", "tests.broken.gambit_server", str(port), "echo-move"], waitForPort=port)
        code, report = self.check("gambit", "--target", f"127.0.0.1:{port}", "--only", "RelayedUnchanged")
        self.assertRuleFails(
            code, report, "MOVE goes unchanged to the opponent", "the server does not answer a MOVE (text §4)"
        )


class SochaChecks(ConformanceRuns):
    def test_velhanetServerPasses(self) -> None:
        port = freePort()
        self.start(twistd("socha-server", "--listen", f"tcp:{port}:interface=127.0.0.1"), waitForPort=port)
        self.assertAllPass(*self.check("socha", "--target", f"127.0.0.1:{port}"))

    def test_missingLeftFails(self) -> None:
        port = freePort()
        self.start([sys.executable, "-m", "tests.broken.socha_server", str(port)], waitForPort=port)
        code, report = self.check("socha", "--target", f"127.0.0.1:{port}", "--only", "fullGame")
        self.assertRuleFails(
            code, report, "ends with <result> and then <left/>", "<left roomId/> must follow the result"
        )

    def test_realPlayerPasses(self) -> None:
        command = f"{sys.executable} tests/socha_player.py {{port}} 5"
        self.assertAllPass(*self.check("socha-player", "--command", command))

    def test_cheatingPlayerFails(self) -> None:
        command = f"{sys.executable} tests/broken/socha_bad_player.py {{port}}"
        code, report = self.check("socha-player", "--command", command, "--only", "Legally")
        self.assertRuleFails(
            code, report, "answers every moveRequest within 2 s with a legal move", "the player broke a rule"
        )


class GobangChecks(ConformanceRuns):
    def test_velhanetServerPasses(self) -> None:
        directory = tempfile.mkdtemp()
        server = self.start(twistd("gobang-server", "--fifo-dir", directory))
        path = None
        for _ in range(200):
            found = list(Path(directory).glob("gbs.*"))
            if found:
                path = found[0]
                break
            time.sleep(0.05)
        self.assertIsNotNone(path, "the server made no FIFO")
        assert path is not None
        pid = str(int(path.name[4:]))
        self.assertEqual(int(pid), server.pid)
        self.assertAllPass(*self.check("gobang", "--target", pid, "--fifo-dir", directory, "--destructive"))
        self.assertEqual(list(Path(directory).glob("gbs.*")), [])

    def test_whiteAskedFirstFails(self) -> None:
        directory = tempfile.mkdtemp()
        self.start([sys.executable, "-m", "tests.broken.gobang_server", directory], waitForLine=True)
        code, report = self.check(
            "gobang", "--target", self.firstLine, "--fifo-dir", directory, "--only", "blackMovesFirst"
        )
        self.assertRuleFails(code, report, "black gets the first move request", "black must get 7 then 8")


class VelhaChecks(ConformanceRuns):
    def test_velhanetPeerPasses(self) -> None:
        self.start(
            twistd(
                "velha",
                "--nick",
                "Bo",
                "--bot",
                "--interface",
                "127.0.0.12",
                "--announce",
                "127.0.0.11",
                "--invite",
                "vcheck",
                "--move-delay",
                "0.05",
            )
        )
        time.sleep(1.5)
        self.assertAllPass(
            *self.check("velha", "--target", "127.0.0.12", "--local", "127.0.0.11", "--local2", "127.0.0.13")
        )

    def test_deafPeerFails(self) -> None:
        self.start([sys.executable, "-m", "tests.broken.velha_peer", "127.0.0.22", "127.0.0.21"], waitForLine=True)
        code, report = self.check(
            "velha",
            "--target",
            "127.0.0.22",
            "--local",
            "127.0.0.21",
            "--local2",
            "127.0.0.23",
            "--only",
            "helloIsAnswered",
        )
        self.assertRuleFails(
            code,
            report,
            "MSG01 is answered by MSG02",
            "MSG02 must answer MSG01 within 15 s, sent to our IP at port 20181 (text: MSG02); got nothing",
        )
