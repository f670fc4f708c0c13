"""The live part of the pages: server-sent events to each signed-in reader, as the spectators' site does.

A student's stream (``/events``) carries their own hand-ins only: each change of one (queued with its
position and the estimated wait, grading, graded, refused with the reason, replaced); a teacher's
carries every hand-in's. Each stream is a ``web.stream.Stream``: written through its connection's
back-pressure, a reader who does not read is dropped (the browser's ``EventSource`` reconnects), and
a comment every L{KEEP_ALIVE} seconds keeps a proxy from closing an idle one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from twisted.internet.task import LoopingCall

from velhanet.classroom.store import HandIn
from velhanet.web.stream import Stream

KEEP_ALIVE = 25.0
BACKLOG = 64
"""Events kept for a paused reader before it is dropped."""


def handInEvent(handIn: HandIn, waiting: tuple[int, float] | None) -> bytes:
    """One hand-in's state as the pages' script reads it."""
    data: dict[str, Any] = {
        "id": handIn.id,
        "student": handIn.student,
        "status": handIn.status,
        "late": handIn.late,
        "reason": handIn.reason,
    }
    if waiting is not None:
        data["position"], data["wait"] = waiting[0], round(waiting[1])
    return b"event: handin\ndata: " + json.dumps(data).encode() + b"\n\n"


class Live:
    """Every open stream, by the student it is about (None: a teacher's, about everyone)."""

    def __init__(self, reactor: Any, waiting: Callable[[HandIn], tuple[int, float] | None]) -> None:
        self.waiting = waiting
        self.streams: defaultdict[str | None, set[Stream]] = defaultdict(set)
        self._alive = LoopingCall(self._keepAlive)
        self._alive.clock = reactor

    def start(self) -> None:
        self._alive.start(KEEP_ALIVE, now=False)

    def stop(self) -> None:
        if self._alive.running:
            self._alive.stop()
        for streams in list(self.streams.values()):
            for stream in list(streams):
                stream.drop()

    def open(self, request: Any, about: str | None) -> Stream:
        """A stream on ``request`` for the student ``about`` (None: a teacher, every student)."""
        request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
        request.setHeader(b"cache-control", b"no-cache")
        request.write(b": velhanet class\n\n")

        def forget(stream: Stream) -> None:
            self.streams[about].discard(stream)
            if not self.streams[about]:
                del self.streams[about]

        stream = Stream(request, request.channel.transport.abortConnection, forget, BACKLOG)
        self.streams[about].add(stream)
        request.notifyFinish().addBoth(lambda _: stream.stopProducing())
        return stream

    def changed(self, handIn: HandIn) -> None:
        """A hand-in changed: told to its student's streams and to the teachers'."""
        readers = self.streams.get(handIn.student, set()) | self.streams.get(None, set())
        if not readers:
            return
        event = handInEvent(handIn, self.waiting(handIn))
        for stream in list(readers):
            stream.send(event)

    def _keepAlive(self) -> None:
        for streams in list(self.streams.values()):
            for stream in list(streams):
                stream.send(b": alive\n\n")
