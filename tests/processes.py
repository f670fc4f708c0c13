"""Real processes for the few integration tests that need them: one launcher for all.

Every test that starts ``twistd`` or a client program goes through here, so
each gets the same guarantees: the child runs the working tree's code
(``PYTHONPATH``), listens on a port the OS picked, is stopped at the end of
the test whatever happened, and a child that dies is noticed at once rather
than after a long wait for a port that will never open.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from velhanet.listening import freePort as freePort  # the tests' own name for it, kept

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = dict(os.environ, PYTHONPATH=str(ROOT))
PYTHON = sys.executable


def python(*args: str) -> list[str]:
    """This interpreter running ``args``."""
    return [PYTHON, *args]


def twistd(*args: str, log: str | Path = "-") -> list[str]:
    """``twistd -n`` in the foreground with no pid file, logging to ``log`` (``-``: standard output)."""
    return python("-c", "from twisted.scripts.twistd import run; run()", "-n", "--pidfile=", "-l", str(log), *args)


def stopProcess(process: subprocess.Popen[Any]) -> None:
    """Ask ``process`` to end (SIGTERM), and kill it if it has not after 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def defaultSigint() -> None:
    """In the child, before it runs its program: SIGINT at its default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ChildDied(AssertionError):
    """The child process exited while a test was waiting for it."""


class Child:
    """One child process, stopped by the test's cleanup.

    ``output`` is where its standard output and error go: ``None`` for a
    pipe the test reads with L{readLine}, or an open file.
    """

    def __init__(
        self,
        testCase: Any,
        command: Sequence[str],
        output: IO[str] | None = None,
        stdin: int | None = subprocess.DEVNULL,
        environment: dict[str, str] | None = None,
        interruptible: bool = False,
    ) -> None:
        """``interruptible``: the child gets SIGINT at its default, as from a terminal, for a test that
        sends it ^C; a suite started in the background (``trial … &``) has SIGINT ignored, and a
        program keeps an ignored SIGINT ignored, as POSIX asks (``nohup``, a shell's ``&``)."""
        self.command = list(command)
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=environment or ENVIRONMENT,
            text=True,
            stdin=stdin,
            stdout=subprocess.PIPE if output is None else output,
            stderr=subprocess.STDOUT,
            preexec_fn=defaultSigint if interruptible else None,
        )
        testCase.addCleanup(self.stop)

    def checkAlive(self) -> None:
        status = self.process.poll()
        if status is not None:
            raise ChildDied(f"exited with status {status}: {' '.join(self.command)}")

    def waitForPort(self, port: int, host: str = "127.0.0.1", seconds: float = 20) -> None:
        """Return once ``host:port`` accepts a connection; fail at once if the child dies first."""
        deadline = time.monotonic() + seconds
        while True:
            self.checkAlive()
            try:
                socket.create_connection((host, port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"nothing listens on {host}:{port} after {seconds} s") from None
                time.sleep(0.05)  # polling a port: there is no event to wait for across processes

    def readLine(self) -> str:
        """The next line the child printed ('' once it closed its output)."""
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def wait(self, seconds: float) -> int:
        """The child's exit status, waiting at most ``seconds``."""
        return self.process.wait(seconds)

    def stop(self) -> None:
        stopProcess(self.process)
        if self.process.stdout is not None:
            self.process.stdout.close()
