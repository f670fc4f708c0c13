"""The Software-Challenge lobby: rooms, reservations, administration, and one protocol per client.

Lobby requests (``join``, ``joinRoom``, ``joinPrepared``) put a client into a
room and answer ``<joined roomId/>``; administration (``authenticate``,
``prepare``, ``observe``, ``pause``, ``step``, ``cancel``) needs the password
given with ``--password`` (without it administration is off). Room ids and
reservation codes are random UUIDs. Lookups are dictionaries: no request
scans all rooms except ``join``, which takes the first open room.
"""

from __future__ import annotations

import hmac
import random
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from velhanet.limits import AddressBuckets
from velhanet.sendnow import noDelay, writerFor
from velhanet.socha.games import ADAPTERS, DEFAULT_GAME
from velhanet.socha.room import Client, Room, RoomCore, RoomMachine
from velhanet.socha.xml import MAX_DEPTH, MAX_ELEMENTS, MAX_MESSAGE, XmlError, XmlStreamReader, errorPacket, render, tag

INPUT_PIECE = 4096
"""Bytes of a client's input parsed and handled before checking that it still reads our answers."""

SHUTDOWN_GRACE = 2.0
"""Seconds a stopping server waits for its clients' connections to close."""

CLOSE_GRACE = 10.0
"""Seconds a client has to close after ``<left/>`` before the server closes (the real client closes first)."""

ADMIN_REQUESTS = frozenset({"authenticate", "prepare", "observe", "pause", "step", "cancel"})


@dataclass(frozen=True)
class SochaLimits:
    """What one client may cost the server; ``--limit NAME=VALUE`` changes one (``docs/security.md``)."""

    maxMessage: int = MAX_MESSAGE
    """Bytes of one message (or of anything unfinished between messages); past it the connection ends."""
    maxDepth: int = MAX_DEPTH
    """Nesting of elements inside ``<protocol>``."""
    maxElements: int = MAX_ELEMENTS
    """Elements in one message."""
    maxUnsent: int = 1024 * 1024
    """Bytes written to a client while it does not read (beyond the transport's own 64 KiB); past it, dropped."""
    perTurn: int = 64
    """Messages of one connection handled before the other connections get their turn."""
    errorsInRow: int = 32
    """Requests answered with an errorpacket in a row; one more and the connection is closed."""
    wrongPasswords: int = 3
    """Wrong administrator passwords on one connection; the last one closes it."""
    wrongPasswordsPerAddress: int = 10
    """Wrong passwords from one address before it must wait."""
    wrongPasswordsPerMinute: float = 5.0
    """How fast an address earns back wrong passwords."""


@dataclass
class _Room:
    machine: Room
    core: RoomCore
    prepared: bool


Tracer = Callable[[str, str, str, str], None]


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

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.limits = lobby.limits
        self.reader = XmlStreamReader(self.limits.maxMessage, self.limits.maxDepth, self.limits.maxElements)
        self.room: _Room | None = None
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
        self._wrongPasswords = 0
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
        self.lobby.connections.add(self)

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
        raw = self.lobby.render(packet)
        if not self.started:
            self.started = True
            raw = b"<protocol>" + raw
        if self.lobby.tracing:
            self.lobby.trace("out", self.peer, raw.decode("utf-8"), packet.tag)
        if self._writesPaused:
            self._unsent += len(raw)
            if self._unsent > self.limits.maxUnsent:
                self._drop(f"it has not read {self._unsent} bytes written to it")
                return
        self._write(raw)

    def _drop(self, why: str) -> None:
        """Abort a connection that does not read: a clean close would wait for it forever."""
        self.log.warn("dropping {peer}: {why}", peer=self.peer, why=why)
        self.closing = True
        self._leaveGame()
        self.lobby.forget(self)
        self.transport.abortConnection()  # type: ignore[union-attr]

    def leftRoom(self, roomId: str) -> None:
        self.sendPacket(tag("left", {"roomId": roomId}))
        self.room = None
        self.closing = True
        self._closeTimer = self.lobby.clock.callLater(CLOSE_GRACE, self._closeNow)

    def error(self, message: str, original: Element | None) -> None:
        self._erred = True
        self.sendPacket(errorPacket(message, original))

    def closeAfter(self, message: str, original: Element | None) -> None:
        """An errorpacket, and the end of this connection (and of its game, which it leaves)."""
        self.log.info("closing {peer}: {why}", peer=self.peer, why=message)
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
                self._nextTurn = self.lobby.clock.callLater(0, self._consume)
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
        self.lobby.trace("in", self.peer, data.decode("utf-8", "replace"), f"XML error: {error}")
        self.log.warn("bad XML from {peer}: {reason}", peer=self.peer, reason=str(error))
        self.error(f"bad XML: {error}", None)
        self._leaveGame()
        self.closing = True
        assert self.transport is not None
        self.transport.loseConnection()

    def _handleMessage(self, message: Element) -> None:
        if self.lobby.tracing:
            self.lobby.trace("in", self.peer, render(message, 0).strip(), message.tag)
        self._erred = False
        try:
            self.handle(message)
        except Exception:
            self.log.failure("error handling <{tag}> from {peer}", tag=message.tag, peer=self.peer)
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
        elif name in ("join", "joinRoom", "joinPrepared"):
            if self.room is not None or self.closing:
                self.error("already in a room", message)
            else:
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
        if self.room is not None:
            room, self.room = self.room, None
            room.machine.playerLeft(self)

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
        self.lobby.connections.discard(self)
        self.lobby._connectionClosed()


class Lobby(Factory):
    """All rooms of one server; builds a L{SochaProtocol} per connection."""

    log = Logger()

    def __init__(
        self,
        clock: IReactorTime,
        password: str | None = None,
        timeouts: bool = True,
        paused: bool = False,
        rng: random.Random | None = None,
        trace: Tracer | None = None,
        limits: SochaLimits | None = None,
    ) -> None:
        self.clock = clock
        self._lastRendered: tuple[Element, bytes] | None = None
        self.limits = limits or SochaLimits()
        self.password = password
        self.wrongPasswords = AddressBuckets(
            self.limits.wrongPasswordsPerAddress, self.limits.wrongPasswordsPerMinute, clock
        )
        self.timeouts = timeouts
        self.paused = paused
        self.rng = rng or random.Random()
        self.tracing = trace is not None
        """Whether ``--trace`` is on: when off, no message is rendered or decoded for it."""
        self.trace: Tracer = trace or (lambda direction, peer, raw, what: None)
        self.rooms: dict[str, _Room] = {}
        self.reservations: dict[str, tuple[str, int]] = {}
        self.observers: dict[str, list[Client]] = {}
        self.admins: set[SochaProtocol] = set()
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

    # -- rooms -----------------------------------------------------------------------

    def newRoom(self, gameType: str, prepared: bool, paused: bool) -> _Room:
        roomId = str(uuid.uuid4())
        core = RoomCore(
            roomId,
            ADAPTERS[gameType],
            self.clock,
            self.removeRoom,
            self.observers.setdefault(roomId, []),
            paused=paused,
            timeouts=self.timeouts,
            rng=random.Random(self.rng.random()),
        )
        room = _Room(RoomMachine(core), core, prepared)
        self.rooms[roomId] = room
        return room

    def removeRoom(self, roomId: str) -> None:
        room = self.rooms.pop(roomId, None)
        self.observers.pop(roomId, None)
        if room is not None:
            for slot in room.core.slots:
                if slot.reservation is not None:
                    self.reservations.pop(slot.reservation, None)

    def join(self, client: SochaProtocol, message: Element) -> None:
        kind = message.tag
        if kind == "join":
            gameType = message.get("gameType") or DEFAULT_GAME
            if gameType not in ADAPTERS:
                client.error(f"unknown gameType {gameType!r}; this server offers {', '.join(ADAPTERS)}", message)
                return
            room = next(
                (
                    r
                    for r in self.rooms.values()
                    if not r.prepared
                    and r.core.adapter.gameType == gameType
                    and r.core.state is None
                    and any(s.client is None for s in r.core.slots)
                ),
                None,
            ) or self.newRoom(gameType, prepared=False, paused=self.paused)
            slot = next(s for s in room.core.slots if s.client is None)
        elif kind == "joinRoom":
            found = self.rooms.get(message.get("roomId", ""))
            free = [s for s in found.core.slots if s.client is None and s.reservation is None] if found else []
            if found is None or not free:
                client.error(f"room {message.get('roomId')!r} does not exist or has no free slot", message)
                return
            room, slot = found, free[0]
        else:
            code = message.get("reservationCode", "")
            reserved = self.reservations.pop(code, None)
            if reserved is None or reserved[0] not in self.rooms:
                client.error(
                    "sc.server.gaming.UnknownReservationException: Couldn't find a reservation for the provided token.",
                    message,
                )
                return
            room = self.rooms[reserved[0]]
            slot = room.core.slots[reserved[1]]
        slot.client = client
        client.room = room
        client.sendPacket(tag("joined", {"roomId": room.core.roomId}))
        players = sum(s.client is not None for s in room.core.slots)
        for admin in self.admins:
            admin.sendPacket(tag("joinedGameRoom", {"roomId": room.core.roomId, "playerCount": players}))
        room.machine.playerJoined(slot)

    # -- administration --------------------------------------------------------------------

    def administer(self, client: SochaProtocol, message: Element) -> None:
        kind = message.tag
        if kind == "authenticate":
            self.authenticate(client, message)
            return
        if not client.admin:
            client.error(f'<{kind}> needs <authenticate password="…"/> first', message)
            return
        if kind == "prepare":
            self.prepare(client, message)
            return
        room = self.rooms.get(message.get("roomId", ""))
        if room is None:
            client.error(f"no room {message.get('roomId')!r}", message)
        elif kind == "observe":
            self.observers[room.core.roomId].append(client)
            client.sendPacket(tag("observed", {"roomId": room.core.roomId}))
        elif kind == "pause":
            if message.get("pause", "true").lower() == "true":
                room.machine.pause()
            else:
                room.machine.resume()
        elif kind == "step":
            room.machine.step()
        else:
            room.machine.cancel()

    def authenticate(self, client: SochaProtocol, message: Element) -> None:
        """Check the password, in constant time, and count the wrong ones per connection and per address."""
        if self.password is None:
            client.error("administration is disabled on this server (no --password)", message)
            return
        if not self.wrongPasswords.available(client.host):
            seconds = max(1, round(self.wrongPasswords.secondsUntilAvailable(client.host)))
            client.closeAfter(f"too many wrong passwords from your address: wait {seconds} s", message)
            return
        given = message.get("password", "").encode("utf-8")
        if hmac.compare_digest(given, self.password.encode("utf-8")):
            client.admin = True
            self.admins.add(client)
            return
        self.wrongPasswords.fail(client.host)
        client._wrongPasswords += 1
        self.log.warn("wrong administrator password from {peer}", peer=client.peer)
        if client._wrongPasswords >= self.limits.wrongPasswords:
            client.closeAfter(f"wrong password ({client._wrongPasswords} on this connection)", message)
        else:
            client.error("wrong password", message)

    def prepare(self, client: SochaProtocol, message: Element) -> None:
        gameType = message.get("gameType") or DEFAULT_GAME
        slots = message.findall("slot")
        if gameType not in ADAPTERS:
            client.error(f"unknown gameType {gameType!r}", message)
            return
        if len(slots) != 2:
            client.error(f"a game needs 2 slots, not {len(slots)}", message)
            return
        room = self.newRoom(gameType, prepared=True, paused=message.get("pause", "false").lower() == "true")
        codes = []
        for index, (element, slot) in enumerate(zip(slots, room.core.slots, strict=True)):
            slot.displayName = element.get("displayName", "")
            slot.canTimeout = element.get("canTimeout", "true").lower() != "false"
            if element.get("reserved", "true").lower() != "false":
                slot.reservation = str(uuid.uuid4())
                self.reservations[slot.reservation] = (room.core.roomId, index)
                codes.append(slot.reservation)
        client.sendPacket(
            tag("prepared", {"roomId": room.core.roomId}, *(tag("reservation", None, code) for code in codes))
        )

    def shutdown(self, reason: str = "Der Server wird beendet.") -> Deferred[None]:
        """The server stops: end every game with a result and ``<left/>``, then close every connection.

        Real players (the ``socha`` library among them) end on ``<left/>``,
        but not on a closed connection: without this they would wait forever.
        Fires when every connection has closed, or after ``SHUTDOWN_GRACE``.
        """
        for room in list(self.rooms.values()):
            room.core.cancelReason = reason
            room.machine.cancel()
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

    def _connectionClosed(self) -> None:
        if self._allClosed is not None and not self.connections and not self._allClosed.called:
            self._allClosed.callback(None)

    def forget(self, client: SochaProtocol) -> None:
        self.admins.discard(client)
        for observers in self.observers.values():
            if client in observers:
                observers.remove(client)
