"""Start-up errors on the terminal: real ``twistd`` and client processes that cannot start.

Each test starts the real program the way a person would, makes its start
fail (a port someone else holds, a bad option, a missing FIFO directory) and
checks the exact line it prints and its exit status. The daemon tests run
``twistd`` without ``-n``: the command must still say why, and a daemon that
starts is stopped through its pid file.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from velhanet.startup import ShortUsage
from velhanet.velha.tap import Options as VelhaOptions

from .processes import Child, freePort, python, twistd

IN_USE = "Address already in use"
SECONDS = 30


def daemon(*args: str, pidFile: Path, logFile: Path) -> list[str]:
    """``twistd`` as a person runs it without ``-n``: it forks, detaches, and the command returns."""
    return python(
        "-c", "from twisted.scripts.twistd import run; run()", f"--pidfile={pidFile}", f"--logfile={logFile}", *args
    )


@contextmanager
def held(kind: int) -> Iterator[int]:
    """A port on 127.0.0.1 that this test holds (TCP: listening) while the program tries to take it."""
    with socket.socket(socket.AF_INET, kind) as holder:
        holder.bind(("127.0.0.1", 0))
        if kind == socket.SOCK_STREAM:
            holder.listen()
        yield int(holder.getsockname()[1])


class StartupTestCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(self.mktemp()).resolve()
        self.tmp.mkdir()

    def finished(self, command: list[str]) -> tuple[int, list[str]]:
        """Run ``command`` to its end: its exit status and the lines it printed (standard output and error)."""
        child = Child(self, command)
        status = child.wait(SECONDS)
        assert child.process.stdout is not None
        return status, child.process.stdout.read().splitlines()


class PortInUseTests(StartupTestCase):
    """``twistd -n``: a port someone else holds is one line on the terminal, in the log, and exit status 1."""

    def test_velhaUdpPort(self) -> None:
        log = self.tmp / "velha-Zed.log"
        with held(socket.SOCK_DGRAM) as port:
            status, lines = self.finished(
                twistd(
                    "velha", "--nick", "Zed", "--interface", "127.0.0.1", "--port", str(port), "--log-file", str(log)
                )
            )
        expected = f"twistd velha: not started: cannot listen on UDP 127.0.0.1:{port} ({IN_USE}); the log is {log}"
        self.assertEqual((status, lines), (1, [expected]))
        self.assertIn(expected, log.read_text())

    def test_gambitTcpPort(self) -> None:
        log = self.tmp / "gambit.log"
        with held(socket.SOCK_STREAM) as port:
            listen = f"tcp:{port}:interface=127.0.0.1"
            status, lines = self.finished(twistd("gambit-server", "--listen", listen, log=log))
        expected = f"twistd gambit-server: not started: cannot listen on {listen} ({IN_USE}); the log is {log}"
        self.assertEqual((status, lines), (1, [expected]))
        self.assertIn(expected, log.read_text())

    def test_sochaTcpPort(self) -> None:
        log = self.tmp / "socha.log"
        with held(socket.SOCK_STREAM) as port:
            listen = f"tcp:{port}:interface=127.0.0.1"
            status, lines = self.finished(twistd("socha-server", "--listen", listen, log=log))
        expected = f"twistd socha-server: not started: cannot listen on {listen} ({IN_USE}); the log is {log}"
        self.assertEqual((status, lines), (1, [expected]))
        self.assertIn(expected, log.read_text())

    def test_sochaReplaySitePort(self) -> None:
        log = self.tmp / "replay.log"
        with held(socket.SOCK_STREAM) as port:
            status, lines = self.finished(twistd("socha-replay", "--web", str(port), str(self.tmp), log=log))
        where = f"tcp:{port}:interface=127.0.0.1"
        expected = f"twistd socha-replay: not started: cannot listen on {where} ({IN_USE}); the log is {log}"
        self.assertEqual((status, lines), (1, [expected]))

    def test_logOnStandardOutput(self) -> None:
        """With the log on standard output (``-l -``), the line says so, and the log around it follows."""
        with held(socket.SOCK_STREAM) as port:
            listen = f"tcp:{port}:interface=127.0.0.1"
            status, lines = self.finished(twistd("gambit-server", "--listen", listen))
        expected = (
            f"twistd gambit-server: not started: cannot listen on {listen} ({IN_USE}); the log is standard output"
        )
        self.assertEqual(status, 1)
        self.assertIn(expected, lines)


class FifoDirectoryTests(StartupTestCase):
    def test_serverWithoutItsDirectory(self) -> None:
        log = self.tmp / "gobang.log"
        missing = self.tmp / "missing"
        status, lines = self.finished(twistd("gobang-server", "--fifo-dir", str(missing), log=log))
        expected = f"twistd gobang-server: not started: the FIFO directory {missing} does not exist; the log is {log}"
        self.assertEqual((status, lines), (1, [expected]))
        self.assertIn(expected, log.read_text())

    def test_clientWithoutItsDirectory(self) -> None:
        missing = self.tmp / "missing"
        command = python("-c", "from velhanet.gobang.client import main; main()", "-b", "123", "--bot")
        status, lines = self.finished([*command, "--fifo-dir", str(missing)])
        self.assertEqual(status, 1)
        self.assertEqual(lines[-1], f"Cannot contact server #123: the FIFO directory {missing} does not exist")

    def test_checkerWithoutItsDirectory(self) -> None:
        """A mistyped --fifo-dir is named as such, even when the pid is not a server either."""
        missing = self.tmp / "missing"
        command = python(
            "-m", "velhanet.checks.command", "gobang", "--target", "999999", "--fifo-dir", str(missing)
        )
        status, lines = self.finished(command)
        self.assertEqual(status, 3)
        self.assertIn(f"cannot test: the FIFO directory {missing} does not exist", lines)


class UsageErrorTests(StartupTestCase):
    """A bad option: the error and a hint, not the whole help first."""

    def test_velhaBadOption(self) -> None:
        status, lines = self.finished(twistd("velha", "--nick", "Bo", "--accept", "maybe"))
        self.assertEqual(
            (status, lines),
            (1, ["twistd velha: --accept must be ask, always or never", "Try 'twistd velha --help' for the options."]),
        )

    def test_unknownOption(self) -> None:
        status, lines = self.finished(twistd("gambit-server", "--bogus"))
        self.assertEqual(
            (status, lines),
            (
                1,
                [
                    "twistd gambit-server: option --bogus not recognized",
                    "Try 'twistd gambit-server --help' for the options.",
                ],
            ),
        )

    def test_badEndpoint(self) -> None:
        status, lines = self.finished(twistd("socha-server", "--listen", "nonsense:1"))
        self.assertEqual(
            (status, lines),
            (
                1,
                [
                    "twistd socha-server: --listen nonsense:1: Unknown endpoint type: 'nonsense'",
                    "Try 'twistd socha-server --help' for the options.",
                ],
            ),
        )

    def test_sochaReplayNeedsLogsThatExist(self) -> None:
        status, lines = self.finished(twistd("socha-replay", "--web", "0"))
        self.assertEqual(
            (status, lines),
            (
                1,
                [
                    "twistd socha-replay: give at least one game log or directory of logs",
                    "Try 'twistd socha-replay --help' for the options.",
                ],
            ),
        )
        missing = self.tmp / "nope"
        status, lines = self.finished(twistd("socha-replay", "--web", "0", str(missing)))
        expected = f"twistd socha-replay: not started: no such file or directory: {missing}; the log is standard output"
        self.assertEqual(status, 1)
        self.assertEqual(lines[0], expected)

    def test_gobangBadOption(self) -> None:
        status, lines = self.finished(twistd("gobang-server", "--size", "99"))
        self.assertEqual(
            (status, lines),
            (
                1,
                [
                    "twistd gobang-server: --size must be 5 to 63 (6-bit coordinates)",
                    "Try 'twistd gobang-server --help' for the options.",
                ],
            ),
        )

    def test_clientBadOption(self) -> None:
        status, lines = self.finished(python("-c", "from velhanet.gambit.client import main; main()", "--port", "x"))
        self.assertEqual(
            (status, lines),
            (
                2,
                [
                    "gambit-client: argument --port/-p: invalid int value: 'x'",
                    "Try 'gambit-client --help' for the options.",
                ],
            ),
        )

    def test_checkerWithoutFamily(self) -> None:
        status, lines = self.finished(python("-c", "from velhanet.checks.command import main; main()"))
        self.assertEqual(
            (status, lines),
            (
                2,
                [
                    "velhanet-check: the following arguments are required: family",
                    "Try 'velhanet-check --help' for the options.",
                ],
            ),
        )

    def test_graderWithoutFolder(self) -> None:
        missing = self.tmp / "missing"
        command = python("-c", "from velhanet.grading.command import main; main()", "gambit", str(missing))
        status, lines = self.finished(command)
        self.assertEqual(
            (status, lines),
            (
                2,
                [
                    f"velhanet-grade: {missing}: no such folder or class file",
                    "Try 'velhanet-grade --help' for the options.",
                ],
            ),
        )

    def test_optionsAloneStillRaise(self) -> None:
        """Parsed without twistd (as tests and tools do), the options raise ``UsageError`` as before."""
        self.assertTrue(issubclass(VelhaOptions, ShortUsage))
        from twisted.python.usage import UsageError

        self.assertRaises(UsageError, VelhaOptions().parseOptions, ["--accept", "maybe", "--nick", "Bo"])


class DaemonTests(StartupTestCase):
    """``twistd`` without ``-n``: the command waits for the daemon's start and says how it went."""

    def test_portInUse(self) -> None:
        pidFile, logFile = self.tmp / "twistd.pid", self.tmp / "twistd.log"
        with held(socket.SOCK_STREAM) as port:
            listen = f"tcp:{port}:interface=127.0.0.1"
            status, lines = self.finished(daemon("gambit-server", "--listen", listen, pidFile=pidFile, logFile=logFile))
        expected = f"twistd gambit-server: not started: cannot listen on {listen} ({IN_USE}); the log is {logFile}"
        self.assertEqual(status, 1)
        self.assertEqual(lines[0], expected)
        self.assertTrue(lines[1].startswith("An error has occurred: b'velhanet.startup.CannotStart: cannot listen"))
        self.assertFalse(pidFile.exists())
        self.assertIn(expected, logFile.read_text())

    def test_udpPortInUse(self) -> None:
        pidFile, logFile = self.tmp / "twistd.pid", self.tmp / "twistd.log"
        with held(socket.SOCK_DGRAM) as port:
            command = daemon(
                *("velha", "--nick", "Bo", "--bot", "--interface", "127.0.0.1", "--port", str(port)),
                pidFile=pidFile,
                logFile=logFile,
            )
            status, lines = self.finished(command)
        self.assertEqual(status, 1)
        self.assertEqual(
            lines[0],
            f"twistd velha: not started: cannot listen on UDP 127.0.0.1:{port} ({IN_USE}); the log is {logFile}",
        )
        self.assertFalse(pidFile.exists())

    def test_consoleNeedsTheTerminal(self) -> None:
        """The console peer cannot run detached (it would read end-of-file and stop at once)."""
        pidFile, logFile = self.tmp / "twistd.pid", self.tmp / "twistd.log"
        status, lines = self.finished(daemon("velha", "--nick", "Bo", pidFile=pidFile, logFile=logFile))
        self.assertEqual(
            (status, lines),
            (
                1,
                [
                    "twistd velha: the console needs the terminal: run 'twistd -n velha', or add --bot",
                    "Try 'twistd velha --help' for the options.",
                ],
            ),
        )
        self.assertFalse(pidFile.exists())

    def test_startsAndStopsByItsPidFile(self) -> None:
        pidFile, logFile = self.tmp / "twistd.pid", self.tmp / "twistd.log"
        port = freePort()
        listen = f"tcp:{port}:interface=127.0.0.1"
        status, lines = self.finished(daemon("gambit-server", "--listen", listen, pidFile=pidFile, logFile=logFile))
        self.assertEqual((status, lines), (0, []))
        pid = int(pidFile.read_text())
        self.addCleanup(stopDaemon, pid)
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # listening before the command returned
        os.kill(pid, signal.SIGTERM)
        waitUntil(lambda: not alive(pid), f"daemon {pid} still running")
        self.assertFalse(pidFile.exists())
        self.assertIn("Server Shut Down.", logFile.read_text())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def waitUntil(condition: Callable[[], bool], message: str) -> None:
    """Poll ``condition``: a daemon is not our child, so there is no exit to wait for."""
    deadline = time.monotonic() + SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(message)
        time.sleep(0.05)


def stopDaemon(pid: int) -> None:
    """Cleanup: a daemon the test did not manage to stop is killed."""
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
