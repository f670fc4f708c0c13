"""Running one untrusted program from a Twisted reactor: in its sandbox, within its limits.

    sandbox = Sandbox.forCommand(settings, say=print)      # once per command
    program = spawn(sandbox, reactor, argv, folder=..., reach=[("127.0.0.1", port)], output=log)
    await program.ready        # it runs now: its start-up cost is behind it
    verdict = await program.ended

The sequence, for a sandboxed program (``launch.py``, the core it shares
with the blocking front end): bwrap is spawned with three extra descriptors
(status, info, block); when its info says which process is the sandbox's
first, a thread of its own puts that process in the program's control group
and makes its network (every other address refused, ``network.py``; this may
wait for bwrap's loopback) and hands the result back to the reactor with
``callFromThread`` — the reactor never waits for it, so the other games go
on meanwhile. Then velhanet opens a relay to each address in ``reach`` (the
game's server), and only then lets the program start by writing on the
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
import json
import os
import socket
import threading
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

from velhanet.i18n import _
from velhanet.sandbox.cgroups import removeEventually
from velhanet.sandbox.jail import STATUS_FD
from velhanet.sandbox.launch import OutputKeeper, finish, prepare, setUpNetwork, unsandboxed
from velhanet.sandbox.monitor import POLL, Supervision, treeSchedule
from velhanet.sandbox.network import joinNetworkOf
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.verdict import Verdict
from velhanet.sendnow import noDelay

INFO_FD, BLOCK_FD = 4, 5


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
        self.output = OutputKeeper(output, outputLimit)
        self.reach = reach
        self.ready: Deferred[None] = Deferred()
        self.ended: Deferred[Verdict] = Deferred()
        self.cleaned: Deferred[None] = Deferred()
        """Fires once nothing of it is left: ended, and its control group removed (or given up on)."""
        self._info = b""
        self._status = b""
        self._listeners: list[Any] = []
        self._monitor: LoopingCall | None = None
        self.stopped = False
        self.stdinClosed = False
        self.verdict: Verdict | None = None
        self.status: int | None = None
        """Its exit status once it ended (128 + N when a signal N ended it)."""

    @classmethod
    def notStarted(cls, reactor: Any, status: int) -> SandboxedProgram:
        """A program that could not even be spawned: ended at once with ``status`` (127: no such command)."""
        program = cls(reactor, None, None, 0)
        program.status = status
        program.verdict = Verdict(status=status)
        program.ready.callback(None)
        program.cleaned.callback(None)
        program.ended.callback(program.verdict)
        return program

    # -- output ----------------------------------------------------------------------

    @property
    def tail(self) -> bytes:
        """The last bytes it printed: why it stopped, when it says so."""
        return self.output.tail

    def exitedSaying(self) -> str:
        """``exited with status N``, and the line that says why when it printed one."""
        said = self.output.lastLine()
        if said:
            return _("exited with status {status}: {said}").format(status=self.status, said=said)
        return _("exited with status {status}").format(status=self.status)

    def childDataReceived(self, childFD: int, data: bytes) -> None:
        if childFD == 1 and self.reader is not None:
            self.output.keep(data, toSink=False)
            self.reader(data)
        elif childFD in (1, 2):
            self.output.keep(data)
        elif childFD == STATUS_FD:
            self._status += data
        elif childFD == INFO_FD and self.supervision is not None and self.supervision.pid is None:
            self._info += data
            try:
                info = json.loads(self._info)
            except ValueError:
                return  # not all of it yet
            self._setUp(int(info["child-pid"]))

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
        """bwrap said which process is the sandbox's: its network is made in a thread of its own, which joins
        the sandbox's namespace itself and ends (the reactor's thread never waits for it)."""
        supervision = self.supervision
        assert supervision is not None
        supervision.pid = pid
        reach = list(self.reach)

        def makeNetwork() -> None:
            try:
                sockets = setUpNetwork(supervision, pid, reach, inside=joinNetworkOf)
            except OSError as error:
                self.reactor.callFromThread(self._setUpFailed, error)
            else:
                self.reactor.callFromThread(self._networkMade, sockets)

        threading.Thread(target=makeNetwork, name=f"sandbox-setup-{pid}", daemon=True).start()

    def _setUpFailed(self, error: OSError) -> None:
        self.log.failure(_("sandbox set-up failed"), Failure(error))
        self.stop()

    def _networkMade(self, sockets: list[socket.socket]) -> None:
        """Back in the reactor: relays to what it may reach, and the program may start."""
        if self.verdict is not None or self.stopped:  # stopped (or ended) meanwhile
            for listener in sockets:
                listener.close()
            return
        for (host, port), listener in zip(self.reach, sockets, strict=True):
            self._listeners.append(
                self.reactor.adoptStreamPort(listener.fileno(), listener.family, RelayFactory(host, port))
            )
            listener.close()
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
        self.lookNow()

    def lookNow(self) -> bool:
        """Look at it now, as every L{POLL} seconds: True (and it is stopped) if it broke a limit.

        What it tried to reach is in the watch the moment it tried (the kernel hands the packet over as it
        leaves), so a caller that looks before it serves the program's next message (the checker's server,
        before it takes a connection) stops it at the same step every time, not when the next look comes."""
        if self.supervision is None or self.verdict is not None or self.stopped:
            return self.stopped
        if self.supervision.check():
            self.log.info(_("sandboxed program broke its {limit} limit: stopped"), limit=self.supervision.limit)
            self.stop()
            return True
        return False

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
            verdict = unsandboxed(raw, self.output)
        else:
            verdict = finish(
                self.supervision,
                self._status.decode("ascii", "replace"),
                raw,
                stopped=self.stopped,
                output=self.output,
                removeGroup=lambda group: removeEventually(group, self.reactor, done=self._groupRemoved),
            )
        self.verdict = verdict
        self.output.close()
        if not self.ready.called:
            self.ready.callback(None)
        if self.supervision is None or self.supervision.group is None:
            self._groupRemoved()
        self.ended.callback(verdict)

    def _groupRemoved(self) -> None:
        if not self.cleaned.called:
            self.cleaned.callback(None)


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
    launch = prepare(
        sandbox,
        command,
        folder=folder,
        cwd=cwd,
        shared=shared,
        infoFd=INFO_FD,
        blockFd=BLOCK_FD,
        environment=environment,
        stdin=reader is not None,
    )
    program = SandboxedProgram(reactor, launch.supervision, output, limits.output, reach, reader)
    childFDs: dict[int, int | str] = {0: "w", 1: "r", 2: "r", STATUS_FD: "r", INFO_FD: "r", BLOCK_FD: "w"}
    try:
        reactor.spawnProcess(
            program,
            launch.argv[0],
            launch.argv,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            childFDs=childFDs,
        )
    except OSError:
        if launch.group is not None:
            launch.group.remove()
        raise
    return program
