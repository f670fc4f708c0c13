"""Watching one running sandboxed program: when to stop it, and what to say when it ended.

L{Supervision} is shared by both ways of running a program (the Twisted
one in ``program.py``, the blocking one in ``blocking.py``): they call
L{Supervision.check} every L{POLL} seconds and stop the program when it
says so, and L{Supervision.verdict} when it has ended. It reads:

- the control group's counters where there is one (CPU used, OOM kills,
  ``fork`` refused at the process limit): the kernel enforces, velhanet
  reads why;
- otherwise the program's process tree in ``/proc`` (CPU time, processes and
  threads, resident memory): ``setrlimit`` enforces per process, and the
  tree's totals are checked here;
- the fill of its private ``/tmp`` and folder (``statvfs`` through
  ``/proc/PID/root``), and the packets it sent out of loopback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path

from velhanet.i18n import _
from velhanet.sandbox.cgroups import ControlGroup
from velhanet.sandbox.limits import ProgramLimits, formatSize
from velhanet.sandbox.network import Forbidden
from velhanet.sandbox.verdict import CPU, DISK, FOLDER, MEMORY, NETWORK, PROCESSES, Verdict, limitCause, saidOutOfMemory

POLL = 0.25
"""Seconds between two looks at a running program."""
DISK_SLACK = 64 * 1024
"""A tmpfs this close to its size is full (the last writes were refused)."""
DNS_PORT = 53
TICKS = os.sysconf("SC_CLK_TCK")


def enforcementOf(group: ControlGroup | None, limits: ProgramLimits) -> str:
    """What this machine enforces, as the reports say it."""
    disk = _("disk: tmpfs of {size}; network: loopback only").format(size=formatSize(limits.disk))
    if group is not None:
        layout = "cgroup v2" if "unified" in group.directories else "cgroup v1"
        return _("bubblewrap; memory, processes, CPU: {layout}; {disk}").format(layout=layout, disk=disk)
    return _("bubblewrap; memory, processes, CPU: setrlimit per process (no writable cgroup); {disk}").format(disk=disk)


def rlimitOptions(limits: ProgramLimits, withGroup: bool) -> list[str]:
    """``prlimit`` options: a file past the disk limit always; the rest where no group enforces them."""
    options = [f"--fsize={limits.disk}"]
    if not withGroup:
        cpu = int(limits.cpu + 0.999)
        options += [f"--data={limits.memory}", f"--cpu={cpu}:{cpu + 1}", f"--nproc={limits.processes}"]
    return options


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as children:
                found += [int(child) for child in children.read().split()]
    return found


def processTree(pid: int) -> list[int]:
    """``pid`` and every process it started, still running."""
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo += _children(current)
    return tree


def treeSchedule(pid: int) -> tuple[float, float]:
    """Seconds the tree's threads ran, and waited runnable for a CPU (``/proc/…/task/…/schedstat``).

    The second tells a player the machine starved apart from one that slept:
    both get little CPU during a turn, only the starved one was ready to run.
    """
    run = wait = 0
    for process in processTree(pid):
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{process}/task"):
                with contextlib.suppress(OSError, ValueError), open(f"/proc/{process}/task/{task}/schedstat") as stat:
                    ran, waited, _ = stat.read().split()
                    run, wait = run + int(ran), wait + int(waited)
    return run / 1e9, wait / 1e9


@dataclass
class TreeUsage:
    cpuSeconds: float = 0.0
    tasks: int = 0
    resident: int = 0


def treeUsage(pid: int) -> TreeUsage:
    """CPU time (the reaped children's included), tasks (threads) and resident memory of the tree."""
    usage = TreeUsage()
    for index, process in enumerate(processTree(pid)):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{process}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            if index == 0:
                ticks += int(fields[13]) + int(fields[14])  # what its reaped children used
            usage.cpuSeconds += ticks / TICKS
            with open(f"/proc/{process}/status") as status:
                for line in status:
                    if line.startswith("Threads:"):
                        usage.tasks += int(line.split()[1])
                    elif line.startswith("VmRSS:"):
                        usage.resident += int(line.split()[1]) * 1024
    return usage


@dataclass
class Supervision:
    """One program's limits, counters and what it did; the front ends do the I/O of starting and stopping."""

    limits: ProgramLimits
    group: ControlGroup | None = None
    writable: list[Path] = field(default_factory=list)
    """Its private tmpfs mounts (``/tmp``, its folder), watched for fill."""
    watch: socket.socket | None = None
    pid: int | None = None
    """The sandbox's first process (the supervisor), as this machine numbers it."""
    limit: str = ""
    detail: str = ""
    forbidden: list[str] = field(default_factory=list)
    cpuSeconds: float = 0.0
    memoryPeak: int = 0
    _seen: set[Forbidden] = field(default_factory=set)

    def check(self) -> bool:
        """Look at the program once; True when it broke a limit and must be stopped now."""
        if self.pid is None or self.limit:
            return bool(self.limit)
        self._readPackets()
        if not self.limit:
            self._readUsage()
        if not self.limit:
            self._readDisk()
        return bool(self.limit)

    def breaks(self, limit: str, detail: str = "") -> None:
        if not self.limit:
            self.limit, self.detail = limit, detail

    def currentCpuSeconds(self) -> float:
        """CPU time used so far (the league times each turn with it)."""
        if self.group is not None:
            return self.group.usage().cpuSeconds
        return treeUsage(self.pid).cpuSeconds if self.pid is not None else 0.0

    def _readPackets(self) -> None:
        if self.watch is None:
            return
        while True:
            try:
                packet = self.watch.recv(2048)
            except (BlockingIOError, OSError):
                return
            attempt = Forbidden.parse(packet)
            if attempt is None or attempt in self._seen:
                continue
            self._seen.add(attempt)
            self.forbidden.append(attempt.cause())
            if attempt.port != DNS_PORT:  # a name lookup is told, not punished: runtimes do it on their own
                self.breaks(NETWORK, attempt.cause())

    def _readUsage(self) -> None:
        limits = self.limits
        if self.group is not None:
            usage = self.group.usage()
            self.cpuSeconds, self.memoryPeak = usage.cpuSeconds, max(self.memoryPeak, usage.memoryPeak)
            if usage.oomKills:
                self.breaks(MEMORY)
            elif usage.processLimitHits:
                self.breaks(PROCESSES)
            elif usage.cpuSeconds >= limits.cpu:
                self.breaks(CPU)
            return
        assert self.pid is not None
        tree = treeUsage(self.pid)
        self.cpuSeconds, self.memoryPeak = max(self.cpuSeconds, tree.cpuSeconds), max(self.memoryPeak, tree.resident)
        if tree.tasks >= limits.processes:
            self.breaks(PROCESSES)
        elif tree.cpuSeconds >= limits.cpu:
            self.breaks(CPU)

    def _readDisk(self) -> None:
        for path in self.writable:
            with contextlib.suppress(OSError):
                fill = os.statvfs(f"/proc/{self.pid}/root{path}")
                used = (fill.f_blocks - fill.f_bfree) * fill.f_frsize
                if used >= self.limits.disk - DISK_SLACK:
                    self.breaks(DISK)
                    return

    def verdict(
        self,
        status: int | None,
        leftovers: int = 0,
        copyFailed: bool = False,
        outputCut: int = 0,
        tail: bytes = b"",
        stoppedByVelhanet: bool = False,
    ) -> Verdict:
        """How the program ended: ``status`` as the supervisor saw it, or None when it was stopped.

        What it tried to reach just before it ended is still queued on the watch: read now, or a program that
        tries a forbidden address and exits at once would be told so only when a look came in time."""
        if self.pid is not None:
            self._readPackets()
        if self.group is not None:
            usage = self.group.usage()
            self.cpuSeconds, self.memoryPeak = usage.cpuSeconds, max(self.memoryPeak, usage.memoryPeak)
            if usage.oomKills:
                self.breaks(MEMORY)
            elif usage.processLimitHits and status not in (0, None):
                self.breaks(PROCESSES)
        if copyFailed:
            self.breaks(FOLDER)
        elif status == 128 + signal.SIGXCPU or (
            self.group is None and status == 137 and self.cpuSeconds >= self.limits.cpu - 1
        ):
            self.breaks(CPU)
        elif status == 128 + signal.SIGXFSZ:
            self.breaks(DISK)
        elif self.group is None and status not in (0, None) and saidOutOfMemory(tail):
            self.breaks(MEMORY)
        cause = limitCause(self.limit, self.limits, self.detail) if self.limit else ""
        if self.limit == MEMORY and self.group is None:
            cause = _("memory limit {size} reached: an allocation was refused").format(
                size=formatSize(self.limits.memory)
            )
        return Verdict(
            status=status,
            limit=self.limit,
            cause=cause,
            forbidden=list(self.forbidden),
            outputCut=outputCut,
            leftovers=leftovers,
            cpuSeconds=self.cpuSeconds,
            memoryPeak=self.memoryPeak,
            enforcement=enforcementOf(self.group, self.limits),
            stoppedByVelhanet=stoppedByVelhanet and not self.limit,
        )
