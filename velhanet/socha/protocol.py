"""The Software-Challenge server's Twisted side: one protocol per client, and their factory.

A L{SochaProtocol} parses its client's stream (``wire.py``), feeds each
message to the L{Lobby}'s rules or to its room's machine, and writes what
they answer; it also bounds what one client may cost (``SochaLimits``).
"""

from __future__ import annotations

import random
from collections import deque
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from velhanet.i18n import _
from velhanet.sendnow import noDelay, writerFor
from velhanet.socha.lobby import ADMIN_REQUESTS, JOIN_REQUESTS, Lobby, RoomEntry, SochaLimits
from velhanet.socha.wire import XmlError, XmlStreamReader, errorPacket, render, tag
from velhanet.tracing import IN, OUT, Tracer, noTrace
from velhanet.watching import NO_WATCHER, GameWatcher

INPUT_PIECE = 4096
"""Bytes of a client's input parsed and handled before checking that it still reads our answers."""

SHUTDOWN_GRACE = 2.0
"""Seconds a stopping server waits for its clients' connections to close."""

CLOSE_GRACE = 10.0
"""Seconds a client has to close after ``<left/>`` before the server closes (the real client closes first)."""


@implementer(IPushProducer)
class SochaProtocol(Protocol):
    """One TCP client: XML in, packets out; a player, an observer or an administrator.

    It is the producer of its transport's writes: when the client stops
    reading and the transport's buffer fills, the transport pauses it, and
    then it stops reading the client too (a client that does not read
    cannot make the server answer more) and counts what others still send
    it (moves, mementos); past ``maxUnsent`` the connection is dropped.
    """

    log = Logger()

    def __init__(self, factory: SochaFactory) -> None:
        self.factory = factory
        self.lobby = factory.lobby
        self.limits = factory.limits
        self.reader = XmlStreamReader(self.limits.maxMessage, self.limits.maxDepth, self.limits.maxElements)
        self.room: RoomEntry | None = None
        self.admin = False
        self.started = False
        self.closing = False
        self.peer = "?"
        self.host = "?"
        self._closeTimer: IDelayedCall | None = None
        self.closedAfterLeft = False
        """The client closed the connection itself after our ``<left/>`` (as it should)."""
        self._writesPaused = False
        self._unsent = 0
        """Bytes written while the transport's buffer was full (the client is not reading)."""
        self._errorsInRow = 0
        self._erred = False
        self.wrongPasswords = 0
        self._input: deque[bytes] = deque()
        """Bytes read but not parsed yet (only while the client does not read our answers)."""
        self._messages: deque[Element] = deque()
        """Messages parsed but not handled yet (the same)."""
        self._readingPaused = False
        """Reading stopped until this connection's next turn (``perTurn`` messages were handled)."""
        self._nextTurn: IDelayedCall | None = None

    def connectionMade(self) -> None:
        assert self.transport is not None
        # Every packet is its own write, and none may wait for the peer's
        # delayed ACK (Nagle): the official server sets TCP_NODELAY too.
        noDelay(self.transport)
        self._write = writerFor(self.transport)
        peer = self.transport.getPeer()
        self.host = str(getattr(peer, "host", "?"))
        self.peer = f"{self.host}:{getattr(peer, 'port', '?')}"
        self.transport.registerProducer(self, True)  # type: ignore[attr-defined]
        self.factory.connections.add(self)

    # IPushProducer: the transport's write buffer is full, or has drained.
    def pauseProducing(self) -> None:
        if not self._writesPaused:
            self._writesPaused = True
            self._unsent = 0
            if not self.closing:
                self.transport.pauseProducing()  # type: ignore[union-attr]

    def resumeProducing(self) -> None:
        if self._writesPaused:
            self._writesPaused = False
            if not self.closing and self._nextTurn is None:
                self.transport.resumeProducing()  # type: ignore[union-attr]
                self._consume()

    def stopProducing(self) -> None:
        self.closing = True

    # -- out -----------------------------------------------------------------------

    def sendPacket(self, packet: Element) -> None:
        if self.transport is None or (self.closing and packet.tag != "left"):
            return
        raw = self.factory.render(packet)
        if not self.started:
            self.started = True
            raw = b"<protocol>" + raw
        if self.factory.tracing:
            self.factory.trace(OUT, self.peer, raw, packet.tag)
        if self._writesPaused:
            self._unsent += len(raw)
            if self._unsent > self.limits.maxUnsent:
                self._drop(_("it has not read {count} bytes written to it").format(count=self._unsent))
                return
        self._write(raw)

    def _drop(self, why: str) -> None:
        """Abort a connection that does not read: a clean close would wait for it forever."""
        self.log.warn(_("dropping {peer}: {why}"), peer=self.peer, why=why)
        self.closing = True
        self._leaveGame()
        self.lobby.forget(self)
        self.transport.abortConnection()  # type: ignore[union-attr]

    def leftRoom(self, roomId: str) -> None:
        self.sendPacket(tag("left", {"roomId": roomId}))
        self.room = None
        self.closing = True
        self._closeTimer = self.factory.clock.callLater(CLOSE_GRACE, self._closeNow)

    def error(self, message: str, original: Element | None) -> None:
        self._erred = True
        self.sendPacket(errorPacket(message, original))

    def closeAfter(self, message: str, original: Element | None) -> None:
        """An errorpacket, and the end of this connection (and of its game, which it leaves)."""
        self.log.info(_("closing {peer}: {why}"), peer=self.peer, why=message)
        self.error(message, original)
        self._leaveGame()
        self.closing = True
        self.transport.loseConnection()  # type: ignore[union-attr]

    def _closeNow(self) -> None:
        self._closeTimer = None
        if self.transport is not None:
            self.transport.loseConnection()

    # -- in ------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        self._input.append(data)
        self._consume()

    def _consume(self) -> None:
        """Parse and handle input, a piece at a time, while the client reads what we write.

        When the client stops reading (the transport pauses us), handling
        stops too, even in the middle of a read: what is left waits, parsed
        or not, until it reads again. A client cannot make the server answer
        more than one piece of its input ahead of what it has read.
        """
        self._nextTurn = None
        handled = 0
        while not self.closing and not self._writesPaused:
            if handled >= self.limits.perTurn and (self._messages or self._input):
                # The other connections' turn: read no more of this one until then.
                self._readingPaused = True
                self.transport.pauseProducing()  # type: ignore[union-attr]
                self._nextTurn = self.factory.clock.callLater(0, self._consume)
                return
            if self._messages:
                handled += 1
                self._handleMessage(self._messages.popleft())
                continue
            if not self._input:
                break
            data = self._input.popleft()
            if len(data) > INPUT_PIECE:
                data, rest = data[:INPUT_PIECE], data[INPUT_PIECE:]
                self._input.appendleft(rest)
            try:
                self._messages.extend(self.reader.feed(data))
            except XmlError as error:
                self._badXml(data, error)
                return
        if self._readingPaused and not self.closing and not self._writesPaused:
            self._readingPaused = False
            self.transport.resumeProducing()  # type: ignore[union-attr]
        if self.reader.closed and not self._messages and not self.closing:
            self._leaveGame()
            self.closing = True
            self.transport.loseConnection()  # type: ignore[union-attr]

    def _badXml(self, data: bytes, error: XmlError) -> None:
        self.factory.trace(IN, self.peer, data, f"XML error: {error}")
        self.log.warn(_("bad XML from {peer}: {reason}"), peer=self.peer, reason=str(error))
        self.error(f"bad XML: {error}", None)
        self._leaveGame()
        self.closing = True
        assert self.transport is not None
        self.transport.loseConnection()

    def _handleMessage(self, message: Element) -> None:
        if self.factory.tracing:
            self.factory.trace(IN, self.peer, render(message, 0), message.tag)
        self._erred = False
        try:
            self.handle(message)
        except Exception:
            self.log.failure(_("error handling <{tag}> from {peer}"), tag=message.tag, peer=self.peer)
            self.error(f"internal error handling <{message.tag}>", message)
        self._errorsInRow = self._errorsInRow + 1 if self._erred else 0
        if self._errorsInRow > self.limits.errorsInRow and not self.closing:
            self.closeAfter(f"{self._errorsInRow} requests in a row were errors", None)

    def handle(self, message: Element) -> None:
        name = message.tag
        if name == "close":
            self._leaveGame()
            self.closing = True
            self.transport.loseConnection()  # type: ignore[union-attr]
        elif name in JOIN_REQUESTS:
            self.lobby.join(self, message)
        elif name in ADMIN_REQUESTS:
            self.lobby.administer(self, message)
        elif name == "room":
            self._roomMessage(message)
        else:
            self.error(f"unknown request <{name}>", message)

    def _roomMessage(self, message: Element) -> None:
        data = message.find("data")
        if self.room is None or message.get("roomId") != self.room.core.roomId:
            self.error(f"you are not a player of room {message.get('roomId')!r}", message)
        elif data is None or data.get("class") != "move":
            self.error('the only room message a player sends is <data class="move">', message)
        else:
            self.room.machine.move(self, data)

    def _leaveGame(self) -> None:
        self.lobby.leave(self)

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self._nextTurn is not None and self._nextTurn.active():
            self._nextTurn.cancel()
        self._nextTurn = None
        self._messages.clear()
        self._input.clear()
        if self._closeTimer is not None and self._closeTimer.active():
            self.closedAfterLeft = True
            self._closeTimer.cancel()
        self._leaveGame()
        self.lobby.forget(self)
        self.factory.connections.discard(self)
        self.factory.connectionClosed()


class SochaFactory(Factory):
    """One server's connections: builds a L{SochaProtocol} per client, all sharing one L{Lobby}."""

    def __init__(
        self,
        clock: IReactorTime,
        password: str | None = None,
        timeouts: bool = True,
        paused: bool = False,
        rng: random.Random | None = None,
        trace: Tracer | None = None,
        limits: SochaLimits | None = None,
        watcher: GameWatcher = NO_WATCHER,
        showPrepared: bool = False,
        timeScale: float = 1.0,
    ) -> None:
        self.clock = clock
        self.limits = limits or SochaLimits()
        self.lobby = Lobby(clock, self.limits, password, timeouts, paused, rng, timeScale)
        self.lobby.watcher = watcher
        self.lobby.showPrepared = showPrepared
        self._lastRendered: tuple[Element, bytes] | None = None
        self.tracing = trace is not None
        """Whether ``--trace`` is on: when off, no message is rendered or decoded for it."""
        self.trace: Tracer = trace or noTrace
        self.connections: set[SochaProtocol] = set()
        self._allClosed: Deferred[None] | None = None

    def render(self, packet: Element) -> bytes:
        """The packet's XML, rendered and encoded once for all its recipients (players and observers).

        A room sends the same packet object to each of them in turn; packets
        are not changed once sent.
        """
        last = self._lastRendered
        if last is not None and last[0] is packet:
            return last[1]
        raw = render(packet).encode("utf-8")
        self._lastRendered = (packet, raw)
        return raw

    def buildProtocol(self, addr: object) -> SochaProtocol:
        return SochaProtocol(self)

    def shutdown(self, reason: str = "Der Server wird beendet.") -> Deferred[None]:
        """The server stops: end every game with a result and ``<left/>``, then close every connection.

        Real players (the ``socha`` library among them) end on ``<left/>``,
        but not on a closed connection: without this they would wait forever.
        Fires when every connection has closed, or after ``SHUTDOWN_GRACE``.
        """
        self.lobby.cancelAll(reason)
        for client in list(self.connections):
            client.closing = True
            if client.transport is not None:
                client.transport.loseConnection()
        if not self.connections:
            return succeed(None)
        self._allClosed = Deferred()
        grace = self.clock.callLater(SHUTDOWN_GRACE, self._shutdownOver)
        self._allClosed.addBoth(lambda result: grace.cancel() if grace.active() else None)
        return self._allClosed

    def _shutdownOver(self) -> None:
        """The grace is over: drop whoever is still connected, and let the process go."""
        for client in list(self.connections):
            if client.transport is not None:
                client.transport.abortConnection()  # type: ignore[attr-defined]
        if self._allClosed is not None and not self._allClosed.called:
            self._allClosed.callback(None)

    def connectionClosed(self) -> None:
        if self._allClosed is not None and not self.connections and not self._allClosed.called:
            self._allClosed.callback(None)
