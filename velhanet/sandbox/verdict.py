"""How a sandboxed program ended, in words a student can act on. Pure.

A L{Verdict} is what every report shows of a program velhanet ran: its exit
status, the limit it broke if it broke one (then it was stopped, and it
loses: ``killed: memory limit 512 MiB exceeded``), the addresses it tried to
reach, whether its output was cut, what it left running, its CPU time and
peak memory, and how the limits were enforced on this machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from velhanet.i18n import _, ngettext
from velhanet.sandbox.limits import ProgramLimits, formatSeconds, formatSize

MEMORY, CPU, PROCESSES, DISK, NETWORK, FOLDER = "memory", "cpu", "processes", "disk", "network", "folder"
LIMITS = (MEMORY, CPU, PROCESSES, DISK, NETWORK, FOLDER)


def limitCause(limit: str, limits: ProgramLimits, detail: str = "") -> str:
    """The cause of a stop for breaking ``limit``, as the reports print it (in the language this process speaks:
    a league's game process speaks the run's)."""
    if limit == MEMORY:
        return _("killed: memory limit {size} exceeded").format(size=formatSize(limits.memory))
    if limit == CPU:
        return _("killed: {seconds} of CPU used").format(seconds=formatSeconds(limits.cpu))
    if limit == PROCESSES:
        return ngettext("killed: more than {n} process", "killed: more than {n} processes", limits.processes).format(
            n=limits.processes
        )
    if limit == DISK:
        return _("killed: disk limit {size} reached").format(size=formatSize(limits.disk))
    if limit == FOLDER:
        return _("not started: its folder does not fit in the disk limit of {size}").format(
            size=formatSize(limits.disk)
        )
    if limit == NETWORK:
        return _("killed: {detail}").format(detail=detail)
    raise ValueError(f"no limit {limit!r}")


@dataclass
class Verdict:
    """How one program ended."""

    status: int | None = None
    """Its exit status (128 + N: killed by signal N); None when velhanet stopped it before it ended."""
    limit: str = ""
    """The limit it broke (``MEMORY`` …), or empty."""
    cause: str = ""
    """Why it was stopped, when it broke a limit: the words every report shows."""
    forbidden: list[str] = field(default_factory=list)
    """Each address it tried to reach, as a sentence."""
    outputCut: int = 0
    """The output limit in bytes when its output was cut there, else 0."""
    leftovers: int = 0
    """Processes still running when it exited (they were killed)."""
    cpuSeconds: float = 0.0
    memoryPeak: int = 0
    enforcement: str = ""
    """How the limits were enforced: what the report says was on."""
    stoppedByVelhanet: bool = False
    """Stopped because its game or check was over (not a limit)."""

    @property
    def brokeALimit(self) -> bool:
        return bool(self.limit)

    def notes(self) -> list[str]:
        """Everything worth telling beside the cause: addresses tried, output cut, processes left."""
        notes = [text for text in self.forbidden if text not in self.cause]
        if self.outputCut:
            notes.append(_("output cut at {size}").format(size=formatSize(self.outputCut)))
        if self.leftovers:
            notes.append(
                ngettext(
                    "left {n} process running after it exited (killed)",
                    "left {n} processes running after it exited (killed)",
                    self.leftovers,
                ).format(n=self.leftovers)
            )
        return notes

    def summary(self) -> str:
        """One line: the cause if any, then the notes."""
        parts = [self.cause] if self.cause else []
        return "; ".join(parts + self.notes())

    def asDict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "limit": self.limit or None,
            "cause": self.cause or None,
            "forbidden": self.forbidden,
            "outputCut": self.outputCut or None,
            "leftovers": self.leftovers,
            "cpuSeconds": round(self.cpuSeconds, 3),
            "memoryPeak": self.memoryPeak,
            "enforcement": self.enforcement,
        }

    @classmethod
    def fromDict(cls, data: dict[str, object]) -> Verdict:
        def number(name: str) -> float:
            value = data.get(name)
            return float(value) if isinstance(value, int | float) else 0.0

        status = data.get("status")
        forbidden = data.get("forbidden")
        return cls(
            status=status if isinstance(status, int) else None,
            limit=str(data.get("limit") or ""),
            cause=str(data.get("cause") or ""),
            forbidden=[str(text) for text in forbidden] if isinstance(forbidden, list) else [],
            outputCut=int(number("outputCut")),
            leftovers=int(number("leftovers")),
            cpuSeconds=number("cpuSeconds"),
            memoryPeak=int(number("memoryPeak")),
            enforcement=str(data.get("enforcement") or ""),
        )


MEMORY_WORDS = ("MemoryError", "OutOfMemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")
"""What a program says when an allocation is refused (the setrlimit fallback refuses instead of killing)."""


def saidOutOfMemory(tail: bytes) -> bool:
    text = tail.decode("utf-8", "replace")
    return any(word in text for word in MEMORY_WORDS)
