"""Who is online: the (nick, IP, last seen) list that MSG01/02/03 maintain.

Pure bookkeeping; the discovery service owns the clock and the timers.
Nicks are matched case-insensitively, as the reference program does, so
``Bo`` and ``bo`` are one player.
"""

from __future__ import annotations

from dataclasses import dataclass


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
