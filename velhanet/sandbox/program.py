"""Running one untrusted program from a Twisted reactor: in its sandbox, within its limits.

    sandbox = Sandbox.forCommand(settings, say=print)      # once per command
    program = spawn(sandbox, reactor, argv, folder=..., reach=[("127.0.0.1", port)], output=log)
    await program.ready        # it runs now: its start-up cost is behind it
    verdict = await program.ended

The sequence, for a sandboxed program: bwrap is spawned with three extra
descriptors (status, info, block); when its info says which process is the
sandbox's first, velhanet puts that process in the program's control group,
joins its network namespace from a thread to make every other address
refuse (``network.py``), opens there a relay to each address in ``reach``
(the game's server), and only then lets the program start by writing on the
block descriptor. Every L{POLL} seconds the L{Supervision} looks at it; a
limit broken stops it at once. Its output is kept up to the output limit.

A program velhanet talks to (a UCI engine) is spawned with a ``reader``:
its standard output goes to the reader as it comes, and
L{SandboxedProgram.write} reaches its standard input (the sandbox passes
velhanet's pipe through to it instead of ``/dev/null``).

With ``--sandbox off`` (or ``auto`` where bwrap does not work) the same
object runs the program directly, as its user, with only the output limit:
the caller's code is the same either way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from twisted.internet.defer import Deferred
from twisted.internet.error import ProcessDone
from twisted.internet.protocol import ProcessProtocol
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.protocols import portforward
from twisted.python.failure import Failure

from velhanet.sandbox.cgroups import createGroup, groupName, removeEventually
from velhanet.sandbox.jail import STATUS_FD, bwrapArgv, parseStatus
from velhanet.sandbox.monitor import POLL, Supervision, treeSchedule
from velhanet.sandbox.network import insideNetworkOf, listeningSocket, openForbiddenWatch, routeEverythingToLoopback
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.verdict import Verdict
from velhanet.sendnow import noDelay

INFO_FD, BLOCK_FD = 4, 5
TAIL_BYTES = 16384


class _RelayClient(portforward.ProxyClient):
    def connectionMade(self) -> None:
        noDelay(self.transport)
        super().connectionMade()


class _RelayClientFactory(portforward.ProxyClientFactory):
    protocol = _RelayClient


class _RelayServer(portforward.ProxyServer):
    """One connection of the program, relayed to the address it may reach (Nagle off both ways)."""

    clientProtocolFactory = _RelayClientFactory

    def connectionMade(self) -> None:
        noDelay(self.transport)
        super().connectionMade()


class RelayFactory(portforward.ProxyFactory):
    protocol = _RelayServer


class SandboxedProgram(ProcessProtocol):
    """One program: its output, its end, and (sandboxed) its supervision."""

    log = Logger()

    def __init__(
        self,
        reactor: Any,
        supervision: Supervision | None,
        output: IO[bytes] | None,
        outputLimit: int,
        reach: Sequence[tuple[str, int]] = (),
        reader: Callable[[bytes], None] | None = None,
    ) -> None:
        self.reactor = reactor
        self.reader = reader
        """Who reads its standard output as it comes (a program velhanet talks to), if anyone."""
        self.supervision = supervision
        self.output, self.outputLimit, self.reach = output, outputLimit, reach
        self.ready: Deferred[None] = Deferred()
        self.ended: Deferred[Verdict] = Deferred()
        self.tail = b""
        self.kept = 0
        self.cut = False
        self._info = b""
        self._status = b""
        self._listeners: list[Any] = []
        self._monitor: LoopingCall | None = None
        self.stopped = False
        self.stdinClosed = False
        self.verdict: Verdict | None = None
        self.status: int | None = None
        """Its exit status once it ended (128 + N when a signal N ended it)."""

    # -- output ----------------------------------------------------------------------

    def childDataReceived(self, childFD: int, data: bytes) -> None:
        if childFD == 1 and self.reader is not None:
            self.tail = (self.tail + data)[-TAIL_BYTES:]
            self.reader(data)
        elif childFD in (1, 2):
            self._keep(data)
        elif childFD == STATUS_FD:
            self._status += data
        elif childFD == INFO_FD and self.supervision is not None and self.supervision.pid is None:
            self._info += data
            try:
                info = json.loads(self._info)
            except ValueError:
                return  # not all of it yet
            self._setUp(int(info["child-pid"]))

    def _keep(self, data: bytes) -> None:
        self.tail = (self.tail + data)[-TAIL_BYTES:]
        if self.output is None or self.cut:
            return
        room = self.outputLimit - self.kept
        if len(data) > room:
            self.output.write(data[:room])
            self.output.write(f"\n[velhanet: output cut at {self.outputLimit} bytes]\n".encode())
            self.cut = True
            data = b""
        self.output.write(data)
        self.kept += len(data)

    def write(self, data: bytes) -> None:
        """To its standard input (spawned with a ``reader``); nothing once it is closed or the program ended."""
        if self.transport is not None and self.verdict is None and not self.stdinClosed:
            self.transport.writeToChild(0, data)

    def closeStdin(self) -> None:
        if self.transport is not None and self.verdict is None and not self.stdinClosed:
            self.stdinClosed = True
            self.transport.closeStdin()

    # -- start -------------------------------------------------------------------------

    def connectionMade(self) -> None:
        if self.supervision is None:
            self._started()

    def _setUp(self, pid: int) -> None:
        supervision = self.supervision
        assert supervision is not None
        supervision.pid = pid
        try:
            if supervision.group is not None:
                supervision.group.add(pid)
            reach = list(self.reach)

            def inside() -> tuple[Any, list[Any]]:
                routeEverythingToLoopback()
                return openForbiddenWatch(), [listeningSocket(host, port) for host, port in reach]

            watch, sockets = insideNetworkOf(pid, inside)
            supervision.watch = watch
            for (host, port), listener in zip(reach, sockets, strict=True):
                self._listeners.append(
                    self.reactor.adoptStreamPort(listener.fileno(), listener.family, RelayFactory(host, port))
                )
                listener.close()
        except OSError as error:
            self.log.failure("sandbox set-up failed", Failure(error))
            self.stop()
            return
        assert self.transport is not None
        self.transport.writeToChild(BLOCK_FD, b"start")
        self._monitor = LoopingCall(self._look)
        self._monitor.clock = self.reactor
        self._monitor.start(POLL, now=False)
        self._started()

    def _started(self) -> None:
        if not self.ready.called:
            self.ready.callback(None)

    def _look(self) -> None:
        assert self.supervision is not None
        if self.supervision.check():
            self.log.info("sandboxed program broke its {limit} limit: stopped", limit=self.supervision.limit)
            self.stop()

    # -- accounting, stop, end ----------------------------------------------------------------

    def cpuSeconds(self) -> float:
        """CPU time the program has used so far (0 when it is not sandboxed)."""
        return self.supervision.currentCpuSeconds() if self.supervision is not None else 0.0

    def schedule(self) -> tuple[float, float]:
        """Seconds its processes have run, and waited runnable for a CPU, so far (see ``treeSchedule``)."""
        if self.supervision is not None and self.supervision.pid is not None:
            return treeSchedule(self.supervision.pid)
        pid = getattr(self.transport, "pid", None)
        return treeSchedule(pid) if pid else (0.0, 0.0)

    @property
    def killed(self) -> bool:
        """Still running when velhanet stopped it (its game was over, or it broke a limit)."""
        return self.stopped

    def stop(self, signalName: str = "KILL") -> None:
        """Stop it (its game or check is over, or a limit): the whole sandbox goes. Nothing if it ended."""
        if self.verdict is not None:
            return
        self.stopped = True
        if self.transport is not None:
            with contextlib.suppress(Exception):  # it ended meanwhile
                self.transport.signalProcess(signalName)
        if self.supervision is not None and self.supervision.group is not None:
            self.supervision.group.killAll()

    def processEnded(self, reason: Failure) -> None:
        if self._monitor is not None and self._monitor.running:
            self._monitor.stop()
        for listener in self._listeners:
            listener.stopListening()
        exitCode = 0 if reason.check(ProcessDone) else getattr(reason.value, "exitCode", None)
        signalNumber = getattr(reason.value, "signal", None)
        raw = exitCode if exitCode is not None else (128 + signalNumber if signalNumber else None)
        self.status = -1 if raw is None else raw
        if self.supervision is None:
            verdict = Verdict(
                status=raw, enforcement="no sandbox (--sandbox off)", outputCut=self.outputLimit if self.cut else 0
            )
        else:
            status, leftovers, copyFailed = parseStatus(self._status.decode("ascii", "replace"))
            if status is None and not copyFailed:
                status = None if self.stopped else raw
            verdict = self.supervision.verdict(
                status,
                leftovers=leftovers,
                copyFailed=copyFailed,
                outputCut=self.outputLimit if self.cut else 0,
                tail=self.tail,
                stoppedByVelhanet=self.stopped,
            )
            if self.supervision.watch is not None:
                self.supervision.watch.close()
            if self.supervision.group is not None:
                removeEventually(self.supervision.group, self.reactor)
        self.verdict = verdict
        if self.output is not None:
            self.output.close()
        if not self.ready.called:
            self.ready.callback(None)
        self.ended.callback(verdict)


def spawn(
    sandbox: Sandbox,
    reactor: Any,
    command: Sequence[str],
    *,
    folder: Path | None = None,
    cwd: Path | None = None,
    shared: Sequence[Path] = (),
    reach: Sequence[tuple[str, int]] = (),
    output: IO[bytes] | None = None,
    environment: dict[str, str] | None = None,
    reader: Callable[[bytes], None] | None = None,
) -> SandboxedProgram:
    """Start ``command``; see the module's docstring. Raises OSError if it cannot even be spawned."""
    limits = sandbox.settings.limits
    if not sandbox.active:
        program = SandboxedProgram(reactor, None, output, limits.output, reader=reader)
        where = str(cwd or folder or Path.cwd())
        env = {**os.environ, **(environment or {})}
        reactor.spawnProcess(program, command[0], list(command), env=env, path=where, childFDs={0: "w", 1: "r", 2: "r"})
        return program
    group = createGroup(groupName(), limits)
    jail = sandbox.jail(command, folder, cwd, shared, group, stdin=reader is not None)
    if environment:
        jail = dataclasses.replace(jail, environment=environment)
    writable = [Path("/tmp")] + ([jail.folder] if jail.folder is not None else [])
    supervision = Supervision(limits, group, writable)
    program = SandboxedProgram(reactor, supervision, output, limits.output, reach, reader)
    argv = bwrapArgv(jail, bwrap=sandbox.availability.bwrap, infoFd=INFO_FD, blockFd=BLOCK_FD)
    childFDs: dict[int, int | str] = {0: "w", 1: "r", 2: "r", STATUS_FD: "r", INFO_FD: "r", BLOCK_FD: "w"}
    try:
        reactor.spawnProcess(
            program, argv[0], argv, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, childFDs=childFDs
        )
    except OSError:
        if group is not None:
            group.remove()
        raise
    return program
