"""The fair queue of hand-ins waiting to be graded: one per student, one grading per student at a time.

Students wait in the order their waiting hand-in came; a student's newer hand-in takes the place of
their waiting one (which is then replaced, never graded), so handing in again does not cost a
student their turn, and handing in ten times does not take ten turns. A student whose hand-in is
being graded waits until it is done, however many slots are free: one student cannot fill the
graders. Pure: no Twisted, no clock.
"""

from __future__ import annotations

import math


class FairQueue:
    def __init__(self) -> None:
        self._waiting: dict[str, int] = {}
        """Each waiting student's hand-in, in the order the students came (a dict keeps its order)."""
        self._busy: set[str] = set()

    def add(self, student: str, handIn: int) -> int | None:
        """``handIn`` waits; the student's hand-in it replaces, if one was waiting."""
        replaced = self._waiting.get(student)
        self._waiting[student] = handIn  # an existing key keeps its place
        return replaced

    def take(self) -> tuple[str, int] | None:
        """The next hand-in to grade (its student is then busy until L{done}), or None."""
        for student, handIn in self._waiting.items():
            if student not in self._busy:
                del self._waiting[student]
                self._busy.add(student)
                return student, handIn
        return None

    def done(self, student: str) -> None:
        self._busy.discard(student)

    def busy(self, student: str) -> bool:
        return student in self._busy

    def remove(self, student: str) -> int | None:
        """The student's waiting hand-in taken out of the queue (it will not be graded), if any."""
        return self._waiting.pop(student, None)

    def positions(self) -> dict[str, tuple[int, int]]:
        """Each waiting student: (their hand-in, their position: 1 is the next to be graded)."""
        return {student: (handIn, place) for place, (student, handIn) in enumerate(self._waiting.items(), start=1)}

    def __len__(self) -> int:
        return len(self._waiting)


def estimatedWait(position: int, slots: int, running: int, meanSeconds: float) -> float:
    """Seconds until a hand-in at ``position`` is graded, with ``slots`` gradings at once, ``running`` of them
    busy, each taking ``meanSeconds``: the rounds of gradings ahead of it, and its own."""
    slots = max(1, slots)
    ahead = position - 1 + running
    return (math.floor(ahead / slots) + 1) * meanSeconds
