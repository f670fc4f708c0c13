"""The Software-Challenge lobby: rooms, reservations, administration, and one protocol per client.

Lobby requests (``join``, ``joinRoom``, ``joinPrepared``) put a client into a
room and answer ``<joined roomId/>``; administration (``authenticate``,
``prepare``, ``observe``, ``pause``, ``step``, ``cancel``) needs the password
given with ``--password`` (without it administration is off). Room ids and
reservation codes are random UUIDs. Lookups are dictionaries: no request
scans all rooms except ``join``, which takes the first open room.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from velhanet.socha.games import ADAPTERS, DEFAULT_GAME
from velhanet.socha.room import Client, Room, RoomCore, RoomMachine
from velhanet.socha.xml import XmlError, XmlStreamReader, errorPacket, render, tag

CLOSE_GRACE = 10.0
"""Seconds a client has to close after ``<left/>`` before the server closes (the real client closes first)."""

ADMIN_REQUESTS = frozenset({"authenticate", "prepare", "observe", "pause", "step", "cancel"})


@dataclass
class _Room:
    machine: Room
    core: RoomCore
    prepared: bool


Tracer = Callable[[str, str, str, str], None]


class SochaProtocol(Protocol):
    """One TCP client: XML in, packets out; a player, an observer or an administrator."""

    log = Logger()

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self.reader = XmlStreamReader()
        self.room: _Room | None = None
        self.admin = False
        self.started = False
        self.closing = False
        self.peer = "?"
        self._closeTimer: IDelayedCall | None = None
        self.closedAfterLeft = False
        """The client closed the connection itself after our ``<left/>`` (as it should)."""

    def connectionMade(self) -> None:
        assert self.transport is not None
        # Every packet is its own write, and none may wait for the peer's
        # delayed ACK (Nagle): the official server sets TCP_NODELAY too.
        setNoDelay = getattr(self.transport, "setTcpNoDelay", None)
        if setNoDelay is not None:
            setNoDelay(True)
        peer = self.transport.getPeer()
        self.peer = f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"

    # -- out -----------------------------------------------------------------------

    def sendPacket(self, packet: Element) -> None:
        if self.transport is None or (self.closing and packet.tag != "left"):
            return
        text = render(packet)
        if not self.started:
            self.started = True
            text = "<protocol>" + text
        self.lobby.trace("out", self.peer, text, packet.tag)
        self.transport.write(text.encode("utf-8"))

    def leftRoom(self, roomId: str) -> None:
        self.sendPacket(tag("left", {"roomId": roomId}))
        self.room = None
        self.closing = True
        self._closeTimer = self.lobby.clock.callLater(CLOSE_GRACE, self._closeNow)

    def error(self, message: str, original: Element | None) -> None:
        self.sendPacket(errorPacket(message, original))

    def _closeNow(self) -> None:
        self._closeTimer = None
        if self.transport is not None:
            self.transport.loseConnection()

    # -- in ------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        try:
            messages = self.reader.feed(data)
        except XmlError as error:
            self.lobby.trace("in", self.peer, data.decode("utf-8", "replace"), f"XML error: {error}")
            self.log.warn("bad XML from {peer}: {reason}", peer=self.peer, reason=str(error))
            self.error(f"bad XML: {error}", None)
            self._leaveGame()
            self.closing = True
            assert self.transport is not None
            self.transport.loseConnection()
            return
        for message in messages:
            self.lobby.trace("in", self.peer, render(message, 0).strip(), message.tag)
            try:
                self.handle(message)
            except Exception:
                self.log.failure("error handling <{tag}> from {peer}", tag=message.tag, peer=self.peer)
                self.error(f"internal error handling <{message.tag}>", message)
        if self.reader.closed:
            self._leaveGame()
            self.transport.loseConnection()  # type: ignore[union-attr]

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
        if self._closeTimer is not None and self._closeTimer.active():
            self.closedAfterLeft = True
            self._closeTimer.cancel()
        self._leaveGame()
        self.lobby.forget(self)


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
    ) -> None:
        self.clock = clock
        self.password = password
        self.timeouts = timeouts
        self.paused = paused
        self.rng = rng or random.Random()
        self.trace: Tracer = trace or (lambda direction, peer, raw, what: None)
        self.rooms: dict[str, _Room] = {}
        self.reservations: dict[str, tuple[str, int]] = {}
        self.observers: dict[str, list[Client]] = {}
        self.admins: set[SochaProtocol] = set()

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
            if self.password is None:
                client.error("administration is disabled on this server (no --password)", message)
            elif message.get("password") != self.password:
                client.error("wrong password", message)
            else:
                client.admin = True
                self.admins.add(client)
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

    def forget(self, client: SochaProtocol) -> None:
        self.admins.discard(client)
        for observers in self.observers.values():
            if client in observers:
                observers.remove(client)
