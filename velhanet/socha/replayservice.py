"""``twistd socha-replay``: Piranhas game logs in the spectators' site, to step through move by move.

L{ReplayLibrary} turns log files into finished games of a L{GameHub}: each
file given, and each ``*.xml`` in each directory given (``socha-match
--log-dir`` writes ``game-NNNN.xml`` there). Directories are looked at again
every ``--rescan`` seconds, so a match's games appear while it runs. A file
is read once; one that is still being written (no ``</protocol>`` yet) is
read again when its size or time changes; one that is no game log is
reported once in the log and skipped. The answer times come from the
directory's ``summary.json`` when it has the game.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from stat import S_ISREG
from typing import Any

from twisted.application.internet import TimerService
from twisted.application.service import IService, MultiService
from twisted.logger import Logger

from velhanet.i18n import _, ngettext
from velhanet.socha.replay import IncompleteLog, LogError, ReplayedGame, loadLog, moveSeconds
from velhanet.startup import StartupReport
from velhanet.tracing import orGlobalReactor
from velhanet.web.boards import piranhasBoard
from velhanet.web.hub import GameHub
from velhanet.web.site import WebService, webEndpoint

log = Logger(namespace="velhanet.socha.replay")

GAME_NUMBER = re.compile(r"game-(\d+)\.xml$")
"""``socha-match``'s log names: the number is the game's index in ``summary.json``."""


class ReplayLibrary:
    """The logs under some paths, each added to the hub once it is complete."""

    def __init__(self, hub: GameHub, paths: list[Path]) -> None:
        self.hub = hub
        self.paths = paths
        self.seen: dict[Path, tuple[float, int] | None] = {}
        """Each file looked at: its (time, size) while it is incomplete, None once read or refused."""
        self.replayed = 0

    def scan(self) -> int:
        """Add the logs not seen yet; how many were added."""
        added = 0
        for path in self.paths:
            files = sorted(path.glob("*.xml")) if path.is_dir() else [path]
            for file in files:
                added += self._consider(file)
        self.replayed += added
        return added

    def _consider(self, file: Path) -> int:
        known = self.seen.get(file, ())
        if known is None:
            return 0
        try:
            stat = file.stat()
        except OSError:
            return 0
        if not S_ISREG(stat.st_mode):  # a FIFO or a device would block the reactor, or never end
            self.seen[file] = None
            log.warn(_("not replayed: {file}: not a regular file"), file=str(file))
            return 0
        stamp = (stat.st_mtime, stat.st_size)
        if known == stamp:
            return 0  # incomplete, and unchanged since
        try:
            game = loadLog(file)
        except IncompleteLog as error:
            if known == ():  # said once: a log cut short for good would otherwise just never appear
                log.info(_("not yet replayed: {reason}; shown once complete"), reason=str(error))
            self.seen[file] = stamp
            return 0
        except LogError as error:
            self.seen[file] = None
            log.warn(_("not replayed: {reason}"), reason=str(error))
            return 0
        self.seen[file] = None
        self._add(file, game, stat.st_mtime)
        return 1

    def _add(self, file: Path, game: ReplayedGame, modified: float) -> None:
        seconds = moveSeconds(game, self._summaryEntry(file))
        positions = game.positions
        self.hub.replayed(
            "socha",
            f"swc_2026_piranhas · {file.name}",
            game.players,
            list(zip(game.moves, seconds, strict=True)),
            game.result,
            lambda moves: piranhasBoard(positions[moves]),
            startedAt=modified,
        )

    def _summaryEntry(self, file: Path) -> dict[str, Any] | None:
        """The game's entry in ``summary.json`` beside the log (None: no summary, or no such game in it)."""
        number = GAME_NUMBER.search(file.name)
        summary = file.parent / "summary.json"
        if number is None or not summary.is_file():
            return None
        try:
            games = json.loads(summary.read_text(encoding="utf-8")).get("games", [])
        except (OSError, ValueError, AttributeError):
            return None
        wanted = int(number.group(1))
        return next((g for g in games if isinstance(g, dict) and g.get("game") == wanted), None)


def makeService(options: Any, reactor: Any = None) -> IService:
    reactor = orGlobalReactor(reactor)
    report = StartupReport(options, reactor)
    paths = [Path(path) for path in options["paths"]]
    for path in paths:
        if not path.exists():
            report.cannotStart(_("no such file or directory: {path}").format(path=path))
    hub = GameHub(reactor)
    library = ReplayLibrary(hub, paths)
    library.scan()
    where = f"http://127.0.0.1:{options['web']}/" if options["web"].isdigit() else options["web"]
    log.info(
        ngettext(
            "{count} game to replay from {paths}; the site: {where}",
            "{count} games to replay from {paths}; the site: {where}",
            library.replayed,
        ),
        count=library.replayed,
        paths=options["paths"],
        where=where,
    )
    service = MultiService()
    WebService(hub, webEndpoint(options["web"]), reactor, report).setServiceParent(service)
    if options["rescan"] > 0:
        rescan = TimerService(options["rescan"], library.scan)
        rescan.clock = reactor
        rescan.setServiceParent(service)
    return service
