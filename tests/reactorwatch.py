"""Does the reactor keep answering? A LoopingCall ticking every 10 ms, and the ticks it missed.

A tick is late when the reactor's thread was busy or blocked (what a test
wants to catch) or when the kernel gave that thread no processor (a busy
machine: the suite's other workers, ``stress-ng``). The second is read from
the kernel's own count of the time the thread waited, runnable, for a CPU
(``/proc/self/task/TID/schedstat``), and left out: what is left is what the
reactor's own thread did, so the figure holds on a loaded machine.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.task import LoopingCall

TICK = 0.01


def runQueueSeconds(threadId: int) -> float:
    """Seconds thread ``threadId`` of this process has waited, runnable, for a processor since it began."""
    with open(f"/proc/self/task/{threadId}/schedstat") as stat:
        return int(stat.read().split()[1]) / 1e9


@dataclass
class ReactorWatch:
    reactor: Any
    interval: float = TICK
    ticks: list[tuple[float, float]] = field(default_factory=list)
    """(when, seconds waited for a processor so far) at each tick."""

    def start(self) -> None:
        self.thread = threading.get_native_id()  # the reactor's thread: the one that starts the watch
        self.loop = LoopingCall(self._tick)
        self.loop.clock = self.reactor
        self.loop.start(self.interval)

    def _tick(self) -> None:
        self.ticks.append((self.reactor.seconds(), runQueueSeconds(self.thread)))

    def stop(self) -> None:
        if self.loop.running:
            self.loop.stop()

    def stalls(self) -> list[float]:
        """Each gap between two ticks beyond the interval, less the time the thread waited for a processor."""
        found = []
        for (before, waitedBefore), (after, waitedAfter) in zip(self.ticks, self.ticks[1:], strict=False):
            found.append(max(0.0, (after - before) - (waitedAfter - waitedBefore) - self.interval))
        return found

    def missed(self) -> int:
        """Ticks the reactor's own thread made it miss."""
        return sum(int(stall / self.interval) for stall in self.stalls())

    def longest(self) -> float:
        return max(self.stalls(), default=0.0)
