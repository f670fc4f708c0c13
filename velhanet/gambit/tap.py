"""``twistd gambit-server``: command-line options for the Gambit relay server."""

from __future__ import annotations

from typing import Any

from twisted.python import usage

from velhanet.gambit.service import makeService as _makeService


class Options(usage.Options):
    synopsis = "[--listen ENDPOINT] [--no-validate] [--trace]"
    longdesc = (
        "A Gambit chess relay server (JSON over TCP, port 22022), compatible with the "
        "original Go client; validates moves with the chess library unless --no-validate."
    )
    optFlags = [
        ["no-validate", None, "relay moves without checking turn or legality (as the original server)"],
        ["trace", None, "log every message in and out, raw and decoded"],
    ]
    optParameters = [
        ["listen", None, "tcp:22022", "Twisted endpoint to listen on (e.g. tcp:22022:interface=127.0.0.1)"],
        ["spacing", None, 0.01, "seconds between two writes to one client (0: no pacing)", float],
    ]


def makeService(options: Any) -> Any:
    return _makeService(options)
