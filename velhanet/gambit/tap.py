"""``twistd gambit-server``: command-line options for the Gambit relay server."""

from __future__ import annotations

import os
from pathlib import Path

from twisted.python import usage

from velhanet.clientlimits import LimitOptions
from velhanet.gambit.protocol import GambitLimits
from velhanet.gambit.service import makeService
from velhanet.i18n import _
from velhanet.startup import ShortUsage
from velhanet.web.service import WEB_OPTION


class Options(ShortUsage, LimitOptions):
    synopsis = "[--listen ENDPOINT] [--no-validate] [--trace] [--web ENDPOINT] [--pgn-dir DIR] [--limit NAME=VALUE]..."
    limitsType = GambitLimits
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
        [
            "language",
            None,
            None,
            "the language of the console and of the server's words to its clients: pt, es, de or en "
            "[default: the console's from LANGUAGE, LC_ALL, LANG; the clients' es, as the original server's]",
        ],
        WEB_OPTION,
        ["pgn-dir", None, None, "write every finished game as a PGN file into this directory [default: off]"],
    ]

    def postOptions(self) -> None:
        if self["pgn-dir"]:
            directory = Path(self["pgn-dir"])
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise usage.UsageError(
                    _("--pgn-dir {directory}: {error}").format(directory=directory, error=error.strerror or error)
                ) from None
            if not os.access(directory, os.W_OK | os.X_OK):
                raise usage.UsageError(
                    _("--pgn-dir {directory}: the server cannot write there").format(directory=directory)
                )


__all__ = ["Options", "makeService"]
