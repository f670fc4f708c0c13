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
    """The players seen online, keyed by case-folded nick."""

    def __init__(self) -> None:
        self._entries: dict[str, RosterEntry] = {}

    def seen(self, nick: str, address: str, now: float) -> bool:
        """Record a MSG01/MSG02 from ``nick`` at ``address``; True if the player is new.

        A known player who now answers from another address is moved there:
        the address is how we reach them, and the newest one is the right one.
        """
        key = nick.casefold()
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = RosterEntry(nick, address, now)
            return True
        entry.address, entry.lastSeen, entry.nick = address, now, nick
        return False

    def trim(self, address: str) -> list[RosterEntry]:
        """After a new player at ``address``: forget the least recently seen beyond the limits."""
        gone: list[RosterEntry] = []
        here = sorted(self.byAddress(address), key=lambda entry: entry.lastSeen)
        while len(here) > NICKS_PER_ADDRESS:
            gone.append(here.pop(0))
        if len(self._entries) - len(gone) > MAX_PLAYERS:
            keep = set(map(id, gone))
            rest = sorted((e for e in self._entries.values() if id(e) not in keep), key=lambda e: e.lastSeen)
            gone.extend(rest[: len(self._entries) - len(gone) - MAX_PLAYERS])
        for entry in gone:
            del self._entries[entry.nick.casefold()]
        return gone

    def remove(self, nick: str) -> RosterEntry | None:
        """Forget ``nick`` (MSG03); the entry removed, if there was one."""
        return self._entries.pop(nick.casefold(), None)

    def expire(self, silentSince: float) -> list[RosterEntry]:
        """Drop every player not heard from since ``silentSince``; return them.

        Called 15 s after our MSG01 with the time it was sent: whoever did
        not answer it is taken to be offline (text: MSG02).
        """
        gone = [entry for entry in self._entries.values() if entry.lastSeen < silentSince]
        for entry in gone:
            del self._entries[entry.nick.casefold()]
        return gone

    def get(self, nick: str) -> RosterEntry | None:
        return self._entries.get(nick.casefold())

    def byAddress(self, address: str) -> list[RosterEntry]:
        return [entry for entry in self._entries.values() if entry.address == address]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(self._entries.values(), key=lambda entry: entry.nick.casefold()))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, nick: object) -> bool:
        return isinstance(nick, str) and nick.casefold() in self._entries
