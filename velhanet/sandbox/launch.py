"""What starting any program shares, whoever starts it: the one core under ``program.py`` and ``blocking.py``.

Starting an untrusted program has three steps, the same from a reactor
(``program.SandboxedProgram``) and from blocking code (``blocking.BlockingProgram``):

1. **prepare** (L{prepare}): its control group with the limits written, its
   jail, its L{Supervision}, bwrap's argv with the info and block descriptors;
2. **set up its network** (L{setUpNetwork}) once bwrap says which process is
   the sandbox's: that process in the group, every address routed to its
   loopback, the watch that names what it tried to reach, and listening
   sockets for what it may reach. This waits for bwrap's loopback (up to
   ``network.LOOPBACK_WAIT``) from a thread that joins the namespace: the
   blocking front end waits for that thread; the reactor's front end runs
   the whole step in a thread of its own, which joins the namespace itself,
   and hands the result back with ``callFromThread``, so that nothing on the
   reactor's thread ever waits for it;
3. **finish** (L{finish}): the status the sandbox reported, the verdict, the
   watch closed and the group removed.

Throughout, an L{OutputKeeper} keeps what it printed: the last
L{TAIL_BYTES} for the verdict and the reports, and up to the output limit
to its log, then one line saying it was cut there. The front ends do the
I/O of their world (the reactor's descriptors, or threads and pipes).

The core starts every process velhanet starts: the blocking front end
through ``processes.popen``, the reactor's through ``reactor.spawnProcess``
in ``program.py``, and a tool velhanet trusts and waits for (git, Graphviz,
bwrap's probe) through ``processes.runTool``. velhanet's own helper
processes (a grading, a league's game, a Gobang checker's client) are
programs like the others, started by a front end with the sandbox off
(``Sandbox.off``): the same output tail, cap and cause when they end
(``tests/test_layers.py`` finds any process started elsewhere).
"""

from __future__ import annotations

import dataclasses
import functools
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from velhanet import i18n
from velhanet.i18n import N_, _, ngettext
from velhanet.sandbox.cgroups import ControlGroup, createGroup, groupName
from velhanet.sandbox.jail import bwrapArgv, parseStatus
from velhanet.sandbox.monitor import Supervision
from velhanet.sandbox.network import insideNetworkOf, listeningSocket, openForbiddenWatch, routeEverythingToLoopback
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.verdict import Verdict

NetworkMade = tuple[socket.socket, list[socket.socket]]
"""What the network's set-up hands back: the watch of what the program tried, and the listening sockets."""

TAIL_BYTES = 16384
"""The end of what a program printed that its verdict keeps: a start-up error and the traceback after it."""
QUOTED_TAIL = 500
"""Characters of the end of what a program printed that a verdict's reason quotes (its last lines)."""
UNSANDBOXED = N_("no sandbox (--sandbox off)")
"""How the limits were enforced without the sandbox (translated where a verdict is made)."""


class OutputKeeper:
    """What one program printed: its last L{TAIL_BYTES}, and up to ``limit`` bytes to ``sink`` (its log)."""

    def __init__(self, sink: IO[bytes] | None, limit: int) -> None:
        self.sink, self.limit = sink, limit
        self.tail = b""
        self.kept = 0
        self.cut = False

    def keep(self, data: bytes, toSink: bool = True) -> None:
        """``data`` it printed; ``toSink`` False: only into the tail (what a reader consumed)."""
        self.tail = (self.tail + data)[-TAIL_BYTES:]
        if self.sink is None or self.cut or not toSink:
            return
        room = self.limit - self.kept
        if len(data) > room:
            said = ngettext("[velhanet: output cut at {n} byte]", "[velhanet: output cut at {n} bytes]", self.limit)
            self.sink.write(data[:room] + ("\n" + said.format(n=self.limit) + "\n").encode())
            self.cut = True
            return
        self.sink.write(data)
        self.kept += len(data)

    @property
    def outputCut(self) -> int:
        """The output limit when the output was cut there, else 0 (as a L{Verdict} says it)."""
        return self.limit if self.cut else 0

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()

    def lastLine(self) -> str:
        """Why it stopped, when it said so: twistd's one-line start-up error if it printed one, else its last line."""
        lines = self.tail.decode("utf-8", "replace").strip().splitlines()
        said = [line for line in lines if line.startswith("twistd ") and any(m in line for m in notStartedMarkers())]
        return (said or lines or [""])[-1]


STARTUP_LINE = "{program}: not started: {reason}; the log is {where}"
"""The line with which twistd's velhanet services say why they did not start (``velhanet.startup``), in English."""


@functools.cache
def notStartedMarkers() -> tuple[str, ...]:
    """``: not started: `` in every language velhanet speaks: a program started here speaks its environment's."""
    markers = []
    for code in i18n.LANGUAGES:
        line = i18n.language(code).gettext(STARTUP_LINE)
        marker = line.partition("{program}")[2].partition("{reason}")[0]
        if marker.strip(" :") and marker not in markers:
            markers.append(marker)
    return tuple(markers) or (": not started: ",)


@dataclass(frozen=True)
class Launch:
    """A sandboxed program ready to be spawned: ``argv`` is bwrap's, the rest is what watches it."""

    argv: list[str]
    supervision: Supervision
    group: ControlGroup | None


def prepare(
    sandbox: Sandbox,
    command: Sequence[str],
    *,
    folder: Path | None,
    cwd: Path | None,
    shared: Sequence[Path],
    infoFd: int,
    blockFd: int,
    environment: dict[str, str] | None = None,
    stdin: bool = False,
) -> Launch:
    """Step 1: the group, the jail and the supervision of one program, and the command that starts it."""
    limits = sandbox.settings.limits
    group = createGroup(groupName(), limits)
    jail = sandbox.jail(command, folder, cwd, shared, group, stdin=stdin)
    if environment:
        jail = dataclasses.replace(jail, environment=environment)
    writable = [Path("/tmp")] + ([jail.folder] if jail.folder is not None else [])
    argv = bwrapArgv(jail, bwrap=sandbox.availability.bwrap, infoFd=infoFd, blockFd=blockFd)
    return Launch(argv, Supervision(limits, group, writable), group)


def setUpNetwork(
    supervision: Supervision,
    pid: int,
    reach: Sequence[tuple[str, int]] = (),
    *,
    inside: Callable[[int, Callable[[], NetworkMade]], NetworkMade] = insideNetworkOf,
) -> list[socket.socket]:
    """Step 2, which waits (for bwrap's loopback): ``pid`` in the group and its network made; the listening
    sockets for ``reach``, made inside it, for the front end to serve. Raises OSError when it cannot.

    ``inside`` runs the network's work in the sandbox's namespace: by default from a thread of its own that
    the caller waits for (blocking code); the reactor's front end calls this from a thread of its own that
    ends afterwards, and gives ``network.joinNetworkOf``, which moves that thread itself."""
    supervision.pid = pid
    if supervision.group is not None:
        supervision.group.add(pid)
    wanted = list(reach)

    def work() -> NetworkMade:
        routeEverythingToLoopback()
        return openForbiddenWatch(), [listeningSocket(host, port) for host, port in wanted]

    watch, sockets = inside(pid, work)
    supervision.watch = watch
    return sockets


def finish(
    supervision: Supervision,
    reported: str,
    status: int | None,
    *,
    stopped: bool,
    output: OutputKeeper,
    removeGroup: Callable[[ControlGroup], object],
) -> Verdict:
    """Step 3: the verdict from what the sandbox ``reported`` on its status descriptor, or ``status`` as the
    process ended when it reported nothing (None when velhanet stopped it); the watch closed, the group
    removed with ``removeGroup`` (on the reactor's clock, or waiting in a thread)."""
    own, leftovers, copyFailed = parseStatus(reported)
    if own is None and not copyFailed:
        own = None if stopped else status
    verdict = supervision.verdict(
        own,
        leftovers=leftovers,
        copyFailed=copyFailed,
        outputCut=output.outputCut,
        tail=output.tail,
        stoppedByVelhanet=stopped,
    )
    if supervision.watch is not None:
        supervision.watch.close()
    if supervision.group is not None:
        removeGroup(supervision.group)
    return verdict


def unsandboxed(status: int | None, output: OutputKeeper) -> Verdict:
    """The verdict of a program run without the sandbox: its status and whether its output was cut."""
    return Verdict(status=status, enforcement=_(UNSANDBOXED), outputCut=output.outputCut)

