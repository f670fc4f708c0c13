"""Limits and accounting for one sandboxed program from a control group, where the machine gives one.

A control group holds every process and thread of the program, so its
limits are the whole program's: memory (the kernel's OOM killer acts inside
the group only), processes (``fork`` fails past the limit) and its CPU time
(read here; the monitor stops the program when it is spent). Two layouts:

- cgroup v2 (one hierarchy, ``cgroup.controllers`` at its root): a group
  ``velhanet-…`` under ``/sys/fs/cgroup`` (root) or under the caller's own
  group when systemd delegated it (an ordinary user's session);
- cgroup v1 (one hierarchy per controller): ``memory``, ``pids`` and
  ``cpuacct`` groups named ``velhanet/…`` (root only).

L{createGroup} gives None where neither can be written: the sandbox then
falls back to ``setrlimit`` (per process) and the report says so. The root of
the hierarchy is a parameter, so tests run both layouts on a fake tree.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from velhanet.sandbox.limits import ProgramLimits


class Clock(typing.Protocol):
    """What of a reactor (``IReactorTime``) a busy group's removal needs; this module stays free of Twisted."""

    def callLater(self, delay: float, callable: Callable[..., object], *args: object) -> object: ...


CGROUP_ROOT = Path("/sys/fs/cgroup")
PARENT = "velhanet"


@dataclass(frozen=True)
class Usage:
    """What the group's counters say now."""

    cpuSeconds: float = 0.0
    memoryPeak: int = 0
    oomKills: int = 0
    processLimitHits: int = 0
    processes: int = 0


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _field(text: str, name: str) -> int:
    """``name N`` from a flat-keyed cgroup file (``memory.events``, ``pids.events``, ``oom_control``)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == name and parts[1].isdigit():
            return int(parts[1])
    return 0


def _number(text: str) -> int:
    text = text.strip()
    return int(text) if text.isdigit() else 0


class ControlGroup:
    """One program's group(s); ``enforced`` names what the kernel limits there."""

    enforced: tuple[str, ...] = ("memory", "processes", "cpu")

    def __init__(self, directories: dict[str, Path]) -> None:
        self.directories = directories

    def procsFiles(self) -> list[Path]:
        return [directory / "cgroup.procs" for directory in dict.fromkeys(self.directories.values())]

    def add(self, pid: int) -> None:
        """Put ``pid`` (and so every process it will start) in the group."""
        for procs in self.procsFiles():
            procs.write_text(f"{pid}\n")

    def pids(self) -> list[int]:
        found: set[int] = set()
        for procs in self.procsFiles():
            found.update(int(word) for word in _read(procs).split() if word.isdigit())
        return sorted(found)

    def usage(self) -> Usage:
        raise NotImplementedError

    def killAll(self) -> None:
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Kill what is left, remove the group, and its ``velhanet`` parent when no other program uses it.

        True once the group is gone. A killed process leaves its group only when the kernel has
        finished it (a program that held 256 MiB takes a moment to give it back), so until then
        the directory is busy and this says False: try again a little later (L{removeEventually},
        L{removeWaiting}); a group still busy when velhanet exits is removed on the way out.
        """
        self.killAll()
        gone = True
        for directory in dict.fromkeys(self.directories.values()):
            try:
                directory.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
                continue
            if directory.parent.name.startswith(PARENT):
                with contextlib.suppress(OSError):
                    directory.parent.rmdir()
        if gone:
            _lingering.discard(self)
        else:
            _lingering.add(self)
        return gone


class GroupV2(ControlGroup):
    def usage(self) -> Usage:
        directory = self.directories["unified"]
        cpu = _field(_read(directory / "cpu.stat"), "usage_usec") / 1e6
        peak = _number(_read(directory / "memory.peak")) or _number(_read(directory / "memory.current"))
        return Usage(
            cpuSeconds=cpu,
            memoryPeak=peak,
            oomKills=_field(_read(directory / "memory.events"), "oom_kill"),
            processLimitHits=_field(_read(directory / "pids.events"), "max"),
            processes=_number(_read(directory / "pids.current")),
        )

    def killAll(self) -> None:
        kill = self.directories["unified"] / "cgroup.kill"
        if kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1\n")
        super().killAll()


class GroupV1(ControlGroup):
    def usage(self) -> Usage:
        memory, pids, cpu = self.directories["memory"], self.directories["pids"], self.directories["cpuacct"]
        return Usage(
            cpuSeconds=_number(_read(cpu / "cpuacct.usage")) / 1e9,
            memoryPeak=_number(_read(memory / "memory.max_usage_in_bytes")),
            oomKills=_field(_read(memory / "memory.oom_control"), "oom_kill"),
            processLimitHits=_field(_read(pids / "pids.events"), "max"),
            processes=_number(_read(pids / "pids.current")),
        )


def _ownGroupV2(root: Path) -> Path | None:
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        if line.startswith("0::"):
            return root / line[3:].strip().lstrip("/")
    return None


def _v2Base(root: Path) -> Path | None:
    """Where a v2 group may be made: the root (for root), else the parent of our own group if delegated."""
    candidates = [root]
    own = _ownGroupV2(root)
    if own is not None and own != root:
        candidates.append(own.parent)
    for base in candidates:
        controllers = set(_read(base / "cgroup.controllers").split())
        if {"memory", "pids", "cpu"} <= controllers and os.access(base, os.W_OK):
            return base
    return None


def _writeLimitsV2(directory: Path, limits: ProgramLimits) -> None:
    (directory / "memory.max").write_text(f"{limits.memory}\n")
    with contextlib.suppress(OSError):
        (directory / "memory.swap.max").write_text("0\n")
    (directory / "pids.max").write_text(f"{limits.processes}\n")


def _createV2(root: Path, name: str, limits: ProgramLimits) -> GroupV2 | None:
    base = _v2Base(root)
    if base is None:
        return None
    parent = base / PARENT
    try:
        parent.mkdir(exist_ok=True)
        for directory in (base, parent):
            with contextlib.suppress(OSError):
                (directory / "cgroup.subtree_control").write_text("+memory +pids +cpu\n")
        directory = parent / f"{PARENT}-{name}"
        directory.mkdir()
        _writeLimitsV2(directory, limits)
    except OSError:
        return None
    return GroupV2({"unified": directory})


def _createV1(root: Path, name: str, limits: ProgramLimits) -> GroupV1 | None:
    directories = {
        controller: root / controller / PARENT / f"{PARENT}-{name}" for controller in ("memory", "pids", "cpuacct")
    }
    made: list[Path] = []
    try:
        for directory in directories.values():
            if not (directory.parent.parent / "cgroup.procs").exists():
                raise OSError(f"no {directory.parent.parent.name} hierarchy")
            directory.parent.mkdir(exist_ok=True)
            directory.mkdir()
            made.append(directory)
        memory = directories["memory"]
        (memory / "memory.limit_in_bytes").write_text(f"{limits.memory}\n")
        swap = memory / "memory.memsw.limit_in_bytes"
        if swap.exists():
            with contextlib.suppress(OSError):
                swap.write_text(f"{limits.memory}\n")
        (directories["pids"] / "pids.max").write_text(f"{limits.processes}\n")
    except OSError:
        for directory in made:
            with contextlib.suppress(OSError):
                directory.rmdir()
        return None
    return GroupV1(directories)


RUN_VARIABLE = "VELHANET_RUN"
"""Set by a command whose programs run in other processes (``velhanet-grade``'s graders): its pid."""


def groupName() -> str:
    """``<pid of the velhanet command>-<random>``: an administrator (and a test) sees whose group it is."""
    return f"{os.environ.get(RUN_VARIABLE) or os.getpid()}-{secrets.token_hex(4)}"


def createGroup(name: str, limits: ProgramLimits, root: Path = CGROUP_ROOT) -> ControlGroup | None:
    """A new group ``velhanet-NAME`` for one program, its limits written; None where this machine gives none."""
    if (root / "cgroup.controllers").exists():
        return _createV2(root, name, limits)
    return _createV1(root, name, limits)


RETRY_SECONDS = 0.02
"""How often a busy group is tried again while its killed processes finish."""
GIVE_UP_SECONDS = 5.0
"""How long a busy group is tried; a process the kernel has not finished by then is not velhanet's to wait for."""

_lingering: set[ControlGroup] = set()
"""Groups whose removal found them busy, removed at the latest when velhanet exits."""


def removeEventually(
    group: ControlGroup,
    clock: Clock,
    attempts: int = int(GIVE_UP_SECONDS / RETRY_SECONDS),
    done: Callable[[], None] = lambda: None,
) -> None:
    """Remove ``group`` now or, while its killed processes finish, a little later on ``clock`` (never a wait);
    ``done`` once it is removed or given up on (a checker waits for it: nothing of a program is left pending)."""
    if not group.remove() and attempts > 1:
        clock.callLater(RETRY_SECONDS, removeEventually, group, clock, attempts - 1, done)
        return
    done()


def removeWaiting(group: ControlGroup, seconds: float = GIVE_UP_SECONDS) -> bool:
    """Remove ``group``, waiting up to ``seconds`` for its killed processes (a thread's or an exit's way)."""
    deadline = time.monotonic() + seconds
    while not group.remove():
        if time.monotonic() >= deadline:
            return False
        time.sleep(RETRY_SECONDS)
    return True


@atexit.register
def _removeLingering() -> None:
    for group in list(_lingering):
        removeWaiting(group, 2.0)
