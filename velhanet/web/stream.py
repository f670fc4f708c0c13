"""One spectator's event stream, written through the transport's back-pressure.

A slow or stuck browser never delays a game: each L{Stream} is an C{IPushProducer} registered on its request,
so when the kernel's send buffer and the transport's buffer are full the transport pauses it; while paused it
keeps at most C{backlog} events, and one more drops the spectator (the connection is aborted). Dropping rather
than coalescing is the decision: the browser's C{EventSource} reconnects, and the first event of every
connection is a snapshot of the whole game, which *is* the coalesced backlog, rebuilt from the hub rather than
kept per spectator. A spectator thus costs at most C{backlog} shared event strings plus the transport's own
buffer, whatever the game does.
"""

from __future__ import annotations

import typing
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet.interfaces import IPushProducer
from twisted.logger import Logger
from zope.interface import implementer

from velhanet.i18n import _

log = Logger(namespace="velhanet.web")


class Request(typing.Protocol):
    """What a L{Stream} needs of a C{twisted.web} request."""

    def write(self, data: bytes) -> None: ...
    def registerProducer(self, producer: Any, streaming: bool) -> None: ...
    def unregisterProducer(self) -> None: ...


@implementer(IPushProducer)
class Stream:
    """One spectator's event stream, written through the transport's back-pressure.

    ``abort`` closes the connection at once (a stuck spectator's transport would otherwise keep its buffer until
    TCP gives up).
    """

    def __init__(
        self,
        request: Request,
        abort: Callable[[], None],
        forget: Callable[[Stream], None],
        backlog: int,
        language: str = "en",
    ):
        self.request = request
        self.language = language
        """The language of the page it feeds: the words of its events (a Gambit game's end) are in it."""
        self.abort = abort
        self.forget = forget
        self.backlog = backlog
        self.pending: deque[bytes] = deque()
        self.paused = False
        self.closed = False
        request.registerProducer(self, True)

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        if self.paused or self.pending:
            if len(self.pending) >= self.backlog:
                log.info(_("spectator dropped: {count} events waiting"), count=len(self.pending))
                self.drop()
                return
            self.pending.append(data)
            return
        self.request.write(data)

    def pauseProducing(self) -> None:
        self.paused = True

    def resumeProducing(self) -> None:
        self.paused = False
        while self.pending and not self.paused and not self.closed:
            self.request.write(self.pending.popleft())

    def stopProducing(self) -> None:
        """The connection is gone."""
        self._close()

    def drop(self) -> None:
        request, abort = self.request, self.abort
        self._close()
        request.unregisterProducer()
        abort()

    def _close(self) -> None:
        """Closed: forgotten by the hub, and holding neither the request nor its connection any more (the request
        holds this stream as its producer: keeping it would make each finished stream a reference cycle)."""
        if not self.closed:
            self.closed = True
            self.pending.clear()
            self.forget(self)
            self.request, self.abort = _GONE, _nothing


def sendEach(streams: Iterable[Stream], make: Callable[[str], bytes]) -> None:
    """``make(language)`` to each stream, in its language: made once per language, the same bytes to each."""
    made: dict[str, bytes] = {}
    for stream in list(streams):
        data = made.get(stream.language)
        if data is None:
            data = made[stream.language] = make(stream.language)
        stream.send(data)


class _Gone:
    """The request of a closed stream: nothing is written to it any more."""

    def write(self, data: bytes) -> None:
        pass

    def registerProducer(self, producer: Any, streaming: bool) -> None:
        pass

    def unregisterProducer(self) -> None:
        pass


def _nothing() -> None:
    """A closed stream's abort."""


_GONE = _Gone()
