"""Listening endpoints with room for a class connecting at once, and free ports for the programs we start.

Twisted listens with a backlog of 50 unless the endpoint says otherwise.
When a whole class (or a load generator) connects within a few
milliseconds, connections beyond the backlog are dropped by the kernel and
their clients retry only after a second, then three, then seven: players
time out before they are even accepted. L{withBacklog} gives a TCP
endpoint description a larger backlog (the kernel caps it at
``net.core.somaxconn``) unless it names one itself.
"""

from __future__ import annotations

import socket

BACKLOG = 1024


def withBacklog(description: str, backlog: int = BACKLOG) -> str:
    """``description`` with ``backlog=`` added, if it is a TCP endpoint that has none."""
    kind = description.split(":", 1)[0]
    if "backlog=" in description or kind not in ("tcp", "tcp6"):
        return description
    return f"{description}:backlog={backlog}"


def freePort(kind: int = socket.SOCK_STREAM, host: str = "127.0.0.1") -> int:
    """A port nobody listens on now, chosen by the OS: for a program we start and tell where to listen."""
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
