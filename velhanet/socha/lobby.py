"""The Software-Challenge lobby's rules: rooms, reservations, administration, pairing.

Lobby requests (``join``, ``joinRoom``, ``joinPrepared``) put a client into a
room and answer ``<joined roomId/>``; administration (``authenticate``,
``prepare``, ``observe``, ``pause``, ``step``, ``cancel``) needs the password
given with ``--password`` (without it administration is off). Room ids and
reservation codes are random UUIDs. Lookups are dictionaries: no request
scans all rooms except ``join``, which takes the first open room.

No transports here: the lobby answers through the L{Member} calls of the
connection that asked (``protocol.py`` is the Twisted side).
"""

from __future__ import annotations

import hmac
import random
import typing
import uuid
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from velhanet.clientlimits import AddressBuckets
from velhanet.i18n import _
from velhanet.socha.games import DEFAULT_GAME, GAME_TYPES
from velhanet.socha.room import Participant, Room, RoomCore, openRoom
from velhanet.socha.wire import MAX_DEPTH, MAX_ELEMENTS, MAX_MESSAGE, tag
from velhanet.watching import NO_WATCHER, GameWatcher

JOIN_REQUESTS = frozenset({"join", "joinRoom", "joinPrepared"})
MAX_SEED_DIGITS = 18
"""``<prepare seed="…">`` (velhanet's addition): the same seed gives the same start position."""
ADMIN_REQUESTS = frozenset({"authenticate", "prepare", "observe", "pause", "step", "cancel"})

CANCELLED = "Das Spiel wurde vom Administrator abgebrochen."
"""The result's reason when an administrator cancels a room."""


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
class RoomEntry:
    """A room as the lobby keeps it: its machine, its core (slots, game), and how it was made."""

    machine: Room
    core: RoomCore
    prepared: bool


class Member(Participant, typing.Protocol):
    """A connection as the lobby sees it: who it is, what it is, and how to answer it."""

    host: str
    peer: str
    room: RoomEntry | None
    """The room it plays in (set by the lobby when it joins)."""
    admin: bool
    wrongPasswords: int
    """Wrong administrator passwords given on this connection."""

    def error(self, message: str, original: Element | None) -> None:
        """Answer with an errorpacket."""

    def closeAfter(self, message: str, original: Element | None) -> None:
        """An errorpacket, and the end of the connection."""


class Lobby:
    """All rooms of one server, their reservations, observers and administrators."""

    log = Logger()
    watcher: GameWatcher = NO_WATCHER
    """Where started games are reported for the spectators' site (the factory sets it for ``--web``)."""
    showPrepared = False
    """Show prepared games on the site too (``--web-show-prepared``)."""

    def __init__(
        self,
        clock: IReactorTime,
        limits: SochaLimits,
        password: str | None = None,
        timeouts: bool = True,
        paused: bool = False,
        rng: random.Random | None = None,
        timeScale: float = 1.0,
    ) -> None:
        self.clock = clock
        self.timeScale = timeScale
        self.limits = limits
        self.password = password
        self.wrongPasswords = AddressBuckets(limits.wrongPasswordsPerAddress, limits.wrongPasswordsPerMinute, clock)
        self.timeouts = timeouts
        self.paused = paused
        self.rng = rng or random.Random()
        self.rooms: dict[str, RoomEntry] = {}
        self.reservations: dict[str, tuple[str, int]] = {}
        self.observers: dict[str, list[Participant]] = {}
        self.admins: set[Member] = set()

    # -- rooms -----------------------------------------------------------------------

    def newRoom(self, gameType: str, prepared: bool, paused: bool, seed: int | None = None) -> RoomEntry:
        """A room of ``gameType``; ``seed`` fixes its start position (a prepared game's ``seed``)."""
        roomId = str(uuid.uuid4())
        core = RoomCore(
            roomId,
            GAME_TYPES[gameType],
            self.clock,
            self.removeRoom,
            self.observers.setdefault(roomId, []),
            timeouts=self.timeouts,
            timeScale=self.timeScale,
            rng=random.Random(self.rng.random() if seed is None else seed),
            watcher=self.watcher,
            hidden=prepared and not self.showPrepared,
        )
        room = RoomEntry(openRoom(core, paused), core, prepared)
        self.rooms[roomId] = room
        return room

    def removeRoom(self, roomId: str) -> None:
        room = self.rooms.pop(roomId, None)
        self.observers.pop(roomId, None)
        if room is not None:
            for slot in room.core.slots:
                if slot.reservation is not None:
                    self.reservations.pop(slot.reservation, None)

    def join(self, client: Member, message: Element) -> None:
        """``join`` (pairing: the first open room of the game type), ``joinRoom`` or ``joinPrepared``."""
        if client.room is not None:
            client.error("already in a room", message)
            return
        kind = message.tag
        if kind == "join":
            gameType = message.get("gameType") or DEFAULT_GAME
            if gameType not in GAME_TYPES:
                client.error(f"unknown gameType {gameType!r}; this server offers {', '.join(GAME_TYPES)}", message)
                return
            room = next(
                (
                    r
                    for r in self.rooms.values()
                    if not r.prepared
                    and r.core.gameType.gameType == gameType
                    and r.core.game is None
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

    def administer(self, client: Member, message: Element) -> None:
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
            room.machine.cancel(CANCELLED)

    def authenticate(self, client: Member, message: Element) -> None:
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
        client.wrongPasswords += 1
        self.log.warn(_("wrong administrator password from {peer}"), peer=client.peer)
        if client.wrongPasswords >= self.limits.wrongPasswords:
            client.closeAfter(f"wrong password ({client.wrongPasswords} on this connection)", message)
        else:
            client.error("wrong password", message)

    def prepare(self, client: Member, message: Element) -> None:
        gameType = message.get("gameType") or DEFAULT_GAME
        slots = message.findall("slot")
        if gameType not in GAME_TYPES:
            client.error(f"unknown gameType {gameType!r}", message)
            return
        if len(slots) != 2:
            client.error(f"a game needs 2 slots, not {len(slots)}", message)
            return
        seed = message.get("seed")
        if seed is not None and not (seed.isdigit() and len(seed) <= MAX_SEED_DIGITS):
            client.error(f"seed must be a number of at most {MAX_SEED_DIGITS} digits, not {seed[:40]!r}", message)
            return
        paused = message.get("pause", "false").lower() == "true"
        room = self.newRoom(gameType, prepared=True, paused=paused, seed=None if seed is None else int(seed))
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

    # -- leaving -------------------------------------------------------------------------

    def leave(self, client: Member) -> None:
        """A player leaves its room (closed, ``<close/>``, dropped): the room decides what that means."""
        if client.room is not None:
            room, client.room = client.room, None
            room.machine.playerLeft(client)

    def forget(self, client: Member) -> None:
        """A connection is gone: no longer an administrator nor an observer."""
        self.admins.discard(client)
        for observers in self.observers.values():
            if client in observers:
                observers.remove(client)

    def cancelAll(self, reason: str) -> None:
        """End every game with a result (``reason``) and ``<left/>``: the server stops."""
        for room in list(self.rooms.values()):
            room.machine.cancel(reason)
