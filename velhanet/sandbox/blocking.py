"""Running one untrusted program from plain, blocking code (the graders): the same sandbox as ``program.py``.

``velhanet-grade`` starts a student's program, runs the family's checks
against it (trial, in the main thread), and stops it. L{BlockingProgram}
does the first and the last with a watcher thread (the same L{Supervision}
as the reactor's programs) and an output thread, and offers what a checker
needs to reach the program inside its sandbox:

- L{BlockingProgram.network}: the calling thread joins the program's
  network namespace for the checks and comes back after (real root, or an
  ordinary user after ``userns.enterUserNamespace(privateNetwork=True)``);
- L{BlockingProgram.inPidNamespace}: a command prefix that starts a helper
  (a Gobang client agent) inside the program's PID namespace, so that the
  process ids the protocol carries mean the same on both sides;
- L{BlockingProgram.hostPid}: the host's number of a process the program
  knows by its own number.

velhanet's own helper processes started from blocking code (a grading
process on a cluster's worker, a league's game, a Gobang checker's scripted
client) are L{BlockingProgram}s too, with the sandbox off: a ``reader`` for
what they print as it comes, ``stdin`` to talk to them, the same output tail
and the same cause when they end.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from velhanet.i18n import _
from velhanet.sandbox.cgroups import removeWaiting
from velhanet.sandbox.jail import STATUS_FD
from velhanet.sandbox.launch import OutputKeeper, finish, prepare, setUpNetwork, unsandboxed
from velhanet.sandbox.monitor import POLL, Supervision, processTree
from velhanet.sandbox.network import setNetworkNamespace
from velhanet.sandbox.processes import popen
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.verdict import Verdict

READ_SIZE = 65536
"""Bytes read from its output at a time."""


class SandboxStartFailed(OSError):
    """bwrap ended before the program could start: the one line says what bwrap said."""


class BlockingProgram:
    """One program started now; ``stop()`` ends it and says how it ended."""

    def __init__(
        self,
        sandbox: Sandbox,
        command: Sequence[str],
        *,
        folder: Path | None = None,
        cwd: Path | None = None,
        shared: Sequence[Path] = (),
        output: Path | None = None,
        environment: Mapping[str, str] | None = None,
        reader: Callable[[bytes], None] | None = None,
        stdin: bool = False,
    ) -> None:
        """``reader``: who reads its output as it comes (a helper velhanet talks to), beside its tail, and
        an empty chunk once it closed its output;
        ``stdin``: L{write} reaches its standard input."""
        self.sandbox = sandbox
        self.limits = sandbox.settings.limits
        self.outputPath = output
        self.output = OutputKeeper(None, self.limits.output)
        self.reader = reader
        self.supervision: Supervision | None = None
        self._status = b""
        self._stopping = threading.Event()
        self.stoppedByVelhanet = False
        if sandbox.active:
            self._startSandboxed(command, folder, cwd, shared, environment, stdin)
        else:
            self.process = popen(
                command,
                stdin=stdin,
                cwd=cwd or folder,
                environment=environment,
            )
            self._startReading()

    def _startReading(self) -> None:
        self._reader = threading.Thread(target=self._readOutput, daemon=True, name="sandbox-output")
        self._reader.start()

    # -- start ------------------------------------------------------------------------

    def _startSandboxed(
        self,
        command: Sequence[str],
        folder: Path | None,
        cwd: Path | None,
        shared: Sequence[Path],
        environment: Mapping[str, str] | None,
        stdin: bool,
    ) -> None:
        statusRead, statusWrite = os.pipe()
        infoRead, infoWrite = os.pipe()
        blockRead, blockWrite = os.pipe()
        launch = prepare(
            self.sandbox,
            command,
            folder=folder,
            cwd=cwd,
            shared=shared,
            infoFd=infoWrite,
            blockFd=blockRead,
            environment=dict(environment) if environment is not None else None,
            stdin=stdin,
        )

        def statusOnThree() -> None:
            os.dup2(statusWrite, STATUS_FD)

        try:
            self.process = popen(
                launch.argv,
                stdin=stdin,
                passFds=(infoWrite, blockRead, statusWrite, STATUS_FD),
                beforeExec=statusOnThree,
            )
        finally:
            for fd in (infoWrite, blockRead, statusWrite):
                os.close(fd)
        self._statusFd, self._blockFd = statusRead, blockWrite
        self._startReading()
        self.supervision = launch.supervision
        try:
            setUpNetwork(launch.supervision, self._readChildPid(infoRead))
            os.write(blockWrite, b"start")
        except OSError as error:
            self._kill()
            status = self.process.wait()
            self.outputRead(5)
            if launch.group is not None:
                removeWaiting(launch.group)
            said = self.tail.decode("utf-8", "replace").strip().splitlines()
            detail = said[-1] if said else str(error)
            raise SandboxStartFailed(
                _("the sandbox did not start (status {status}): {detail}").format(status=status, detail=detail)
            ) from None
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="sandbox-watch")
        self._watcher.start()

    def _readChildPid(self, infoRead: int) -> int:
        raw = b""
        with os.fdopen(infoRead, "rb", buffering=0) as info:
            while True:
                chunk = info.read(4096)
                if not chunk:
                    raise OSError(_("bwrap ended before the sandbox was made"))
                raw += chunk
                with contextlib.suppress(ValueError):
                    return int(json.loads(raw)["child-pid"])

    def _watch(self) -> None:
        assert self.supervision is not None
        while not self._stopping.wait(POLL):
            if self.process.poll() is not None:
                return
            if self.supervision.check():
                self._kill()
                return

    def _readOutput(self) -> None:
        assert self.process.stdout is not None
        self.output.sink = self.outputPath.open("wb", buffering=0) if self.outputPath is not None else None
        try:
            for chunk in iter(lambda: self.process.stdout.read1(READ_SIZE), b""):  # type: ignore[union-attr,attr-defined]
                if self.reader is not None:
                    self.output.keep(chunk, toSink=False)
                    self.reader(chunk)
                else:
                    self.output.keep(chunk)
        finally:
            self.output.close()
            if self.reader is not None:
                self.reader(b"")  # the end of its output

    @property
    def tail(self) -> bytes:
        return self.output.tail

    @property
    def cut(self) -> bool:
        return self.output.cut

    # -- while it runs ------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """To its standard input (started with ``stdin``); nothing once it is closed or the program ended."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError, ValueError):
                self.process.stdin.write(data)
                self.process.stdin.flush()

    def closeStdin(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()

    def poll(self) -> int | None:
        return self.process.poll()

    def outputRead(self, seconds: float) -> None:
        """Wait, at most ``seconds``, until its output is read to its end.

        A program that has exited may still have its last words in the pipe, not yet in its tail: whoever
        reads the tail of an ended program waits for this first (bounded: a process it left behind may hold
        the pipe open)."""
        self._reader.join(seconds)

    @property
    def brokeALimit(self) -> bool:
        return self.supervision is not None and bool(self.supervision.limit)

    @contextlib.contextmanager
    def network(self) -> Iterator[None]:
        """The calling thread inside the program's network for the duration (nothing to do unsandboxed)."""
        if self.supervision is None or self.supervision.pid is None:
            yield
            return
        try:
            target = os.open(f"/proc/{self.supervision.pid}/ns/net", os.O_RDONLY)
        except FileNotFoundError:  # it ended already (a command not found): the grader says so, not a traceback
            yield
            return
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            setNetworkNamespace(target)
            try:
                yield
            finally:
                setNetworkNamespace(home)
        finally:
            os.close(target)
            os.close(home)

    def inPidNamespace(self) -> list[str]:
        """A prefix that starts a command inside the program's PID namespace (empty unsandboxed)."""
        if self.supervision is None or self.supervision.pid is None:
            return []
        return ["nsenter", f"--target={self.supervision.pid}", "--pid", "--"]

    def hostPid(self, ownPid: int) -> int:
        """The host's number of the program's process ``ownPid`` (as the program numbers it); 0 if none."""
        if self.supervision is None or self.supervision.pid is None:
            return ownPid
        for pid in processTree(self.supervision.pid):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("NSpid:") and line.split()[-1] == str(ownPid):
                        return pid
        return 0

    # -- end ------------------------------------------------------------------------------

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
        if self.supervision is not None and self.supervision.group is not None:
            self.supervision.group.killAll()

    def wait(self) -> Verdict:
        """Wait for it to end by itself (a helper that ends when its work is done) and say how it ended."""
        self.process.wait()
        return self.stop()

    def stop(self, grace: float = 0.0) -> Verdict:
        """End it now (after ``grace`` seconds for it to end by itself) and say how it ended."""
        if grace and self.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        if self.process.poll() is None:
            self.stoppedByVelhanet = True
            self._kill()
        raw = self.process.wait()
        self._stopping.set()
        self.outputRead(5)
        status = raw if raw >= 0 else 128 - raw
        if self.supervision is None:
            return unsandboxed(status, self.output)
        self._watcher.join(5)
        with os.fdopen(self._statusFd, "rb") as statusPipe:
            said = statusPipe.read().decode("ascii", "replace")
        os.close(self._blockFd)
        return finish(
            self.supervision,
            said,
            status,
            stopped=self.stoppedByVelhanet,
            output=self.output,
            removeGroup=removeWaiting,
        )
