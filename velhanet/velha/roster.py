"""Who is online: the (nick, IP, last seen) list that MSG01/02/03 maintain.

Pure bookkeeping; the discovery service owns the clock and the timers.
Nicks are matched case-insensitively, as the reference program does, so
``Bo`` and ``bo`` are one player.
"""

from __future__ import annotations

from dataclasses import dataclass

NICKS_PER_ADDRESS = 4
"""Players kept per address (several peers may share a host); a newer nick replaces the oldest."""

MAX_PLAYERS = 1024
"""Players kept in all, more than a class: a storm of made-up nicks cannot grow the roster."""


@dataclass(slots=True)
class RosterEntry:
    nick: str
    address: str
    lastSeen: float


class Roster:
    """The players seen online, keyed by case-folded nick, the least recently seen first.

    A sighting moves its player to the end of the table and of its address's
    table (dicts keep their order), so the limits forget from the front: a
    storm of made-up nicks costs each datagram the same few steps however
    full the roster is, where sorting every player per datagram had made a
    5,000-datagram storm take seconds.
    """

    def __init__(self) -> None:
        self._entries: dict[str, RosterEntry] = {}
        self._atAddress: dict[str, dict[str, RosterEntry]] = {}

    def seen(self, nick: str, address: str, now: float) -> bool:
        """Record a MSG01/MSG02 from ``nick`` at ``address``; True if the player is new.

        A known player who now answers from another address is moved there:
        the address is how we reach them, and the newest one is the right one.
        """
        key = nick.casefold()
        entry = self._forget(key)
        isNew = entry is None
        if entry is None:
            entry = RosterEntry(nick, address, now)
        else:
            entry.address, entry.lastSeen, entry.nick = address, now, nick
        self._entries[key] = entry
        self._atAddress.setdefault(address, {})[key] = entry
        return isNew

    def _forget(self, key: str) -> RosterEntry | None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            here = self._atAddress[entry.address]
            del here[key]
            if not here:
                del self._atAddress[entry.address]
        return entry

    def trim(self, address: str) -> list[RosterEntry]:
        """After a new player at ``address``: forget the least recently seen beyond the limits."""
        here = self._atAddress.get(address, {})
        gone = [self._forgotten(next(iter(here))) for _ in range(len(here) - NICKS_PER_ADDRESS)]
        gone += [self._forgotten(next(iter(self._entries))) for _ in range(len(self._entries) - MAX_PLAYERS)]
        return gone

    def _forgotten(self, key: str) -> RosterEntry:
        entry = self._forget(key)
        assert entry is not None
        return entry

    def remove(self, nick: str) -> RosterEntry | None:
        """Forget ``nick`` (MSG03); the entry removed, if there was one."""
        return self._forget(nick.casefold())

    def expire(self, silentSince: float) -> list[RosterEntry]:
        """Drop every player not heard from since ``silentSince``; return them.

        Called 15 s after our MSG01 with the time it was sent: whoever did
        not answer it is taken to be offline (text: MSG02).
        """
        gone = [entry for entry in self._entries.values() if entry.lastSeen < silentSince]
        for entry in gone:
            self._forget(entry.nick.casefold())
        return gone

    def get(self, nick: str) -> RosterEntry | None:
        return self._entries.get(nick.casefold())

    def byAddress(self, address: str) -> list[RosterEntry]:
        """The players at ``address``, the least recently seen first."""
        return list(self._atAddress.get(address, {}).values())

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(self._entries.values(), key=lambda entry: entry.nick.casefold()))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, nick: object) -> bool:
        return isinstance(nick, str) and nick.casefold() in self._entries
