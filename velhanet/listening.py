"""Listening endpoints with room for a class connecting at once.

Twisted listens with a backlog of 50 unless the endpoint says otherwise.
When a whole class (or a load generator) connects within a few
milliseconds, connections beyond the backlog are dropped by the kernel and
their clients retry only after a second, then three, then seven: players
time out before they are even accepted. L{withBacklog} gives a TCP
endpoint description a larger backlog (the kernel caps it at
``net.core.somaxconn``) unless it names one itself.
"""

from __future__ import annotations

BACKLOG = 1024


def withBacklog(description: str, backlog: int = BACKLOG) -> str:
    """``description`` with ``backlog=`` added, if it is a TCP endpoint that has none."""
    kind = description.split(":", 1)[0]
    if "backlog=" in description or kind not in ("tcp", "tcp6"):
        return description
    return f"{description}:backlog={backlog}"
