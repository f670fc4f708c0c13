"""``twistd socha-replay``: command-line options for replaying Piranhas game logs in a browser."""

from __future__ import annotations

from typing import Any

from twisted.python import usage

from velhanet.i18n import _
from velhanet.socha.replayservice import makeService
from velhanet.startup import ShortUsage

__all__ = ["Options", "makeService"]


class Options(ShortUsage):
    synopsis = "[--web ENDPOINT] [--rescan SECONDS] LOG-OR-DIRECTORY..."
    longdesc = (
        "Serve Piranhas game logs (socha-match --log-dir writes one per game) as finished games in the "
        "spectators' site, to step through move by move: each file given, and each *.xml in each directory "
        "given; logs written into a directory later appear as they are finished."
    )
    optParameters = [
        [
            "web",
            None,
            "8080",
            "Twisted endpoint of the site; a bare port listens on 127.0.0.1 only",
        ],
        ["rescan", None, 2.0, "seconds between two looks for new logs in the directories (0: only at start)", float],
    ]

    def parseArgs(self, *paths: str) -> None:
        if not paths:
            raise usage.UsageError(_("give at least one game log or directory of logs"))
        self["paths"] = list(paths)

    def postOptions(self) -> None:
        rescan: Any = self["rescan"]
        if rescan < 0:
            raise usage.UsageError(_("--rescan must be 0 or more seconds, not {rescan:g}").format(rescan=rescan))
