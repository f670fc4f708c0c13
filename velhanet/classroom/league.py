"""A socha-player class's league: every student's last hand-in before the deadline, against each other.

The teacher presses the button; the server copies each student's last graded hand-in from before the
deadline into ``league/players/NAME``, writes ``league/league.toml`` (round robin, each start position
from both sides) and runs ``velhanet-league run`` on it as a process of its own (through the launch
core: ``sandbox.program.spawn``, the league sandboxing the players itself, with the server's
``--sandbox``). Its store and its standings page are the league's own (``velhanet.league``), read here
for ``/class/league``. A league needs Dask (``pip install 'velhanet[league]'``): without it the button
says so in one line.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from twisted.internet.threads import deferToThread
from twisted.logger import Logger

from velhanet.classroom.classfile import Classroom
from velhanet.classroom.desk import Desk
from velhanet.classroom.pages import messagePage
from velhanet.classroom.store import Store
from velhanet.cluster.workers import DaskMissing, requireDask
from velhanet.i18n import _, current
from velhanet.league.config import discoverPlayers, loadLeague
from velhanet.league.standings import standingsOf
from velhanet.league.standingspage import standingsPage
from velhanet.league.store import Store as LeagueStore
from velhanet.sandbox.limits import SandboxSettings
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.sandbox.sandbox import Sandbox

LEAGUE_FILE = """name = {name!r}
players = "players"
format = "round-robin"
pairs = {pairs}
seed = 1
"""


class ClassLeague:
    log = Logger()

    def __init__(
        self,
        classroom: Classroom,
        store: Store,
        desk: Desk,
        reactor: Any,
        root: Path,
        sandbox: SandboxSettings,
        pairs: int = 2,
    ) -> None:
        self.classroom, self.store, self.desk, self.reactor = classroom, store, desk, reactor
        self.root, self.sandbox, self.pairs = root, sandbox, pairs
        self.program: SandboxedProgram | None = None
        self.said = ""

    @property
    def leagueFile(self) -> Path:
        return self.root / "league.toml"

    def state(self) -> str:
        if self.classroom.family != "socha-player":
            return ""
        if self.program is not None:
            return _("being played")
        return self.said

    def play(self) -> str:
        """Start the league; what stops it from starting, or an empty string."""
        if self.classroom.family != "socha-player":
            return _("only a socha-player class has a league")
        if self.program is not None:
            return _("the league is being played already")
        try:
            requireDask(_("a league"), "pip install 'velhanet[league]'")
        except DaskMissing as missing:
            return str(missing)
        players = {}
        for person in self.classroom.students:
            handIn = self.store.lastGraded(person.name, onTime=True)
            if handIn is not None:
                players[person.name] = self.desk.folderOf(handIn)
        if len(players) < 2:
            return _("a league needs two students with a hand-in graded before the deadline")
        deferToThread(self._prepare, players).addCallbacks(self._start, self._failed)
        self.said = _("being played")
        return ""

    def _prepare(self, players: dict[str, Path]) -> None:
        shutil.rmtree(self.root / "players", ignore_errors=True)
        for name, folder in players.items():
            shutil.copytree(folder, self.root / "players" / name, symlinks=True)
        name = _("{family} class league").format(family=self.classroom.family)
        self.leagueFile.write_text(LEAGUE_FILE.format(name=name, pairs=self.pairs), encoding="utf-8")

    def _start(self, ignored: object) -> None:
        command = [sys.executable, "-m", "velhanet.league.cli", "run", str(self.leagueFile)]
        command += ["--sandbox", self.sandbox.mode, "--language", current().code]
        log = open(self.root / "run.log", "wb")  # noqa: SIM115 (closed by the program's end)
        self.program = spawn(Sandbox.off(), self.reactor, command, cwd=self.root, output=log)
        self.program.ended.addBoth(self._ended)

    def _ended(self, ignored: object) -> None:
        program, self.program = self.program, None
        assert program is not None
        if program.status == 0:
            self.said = _("played: see its standings")
        else:
            self.said = _("the league stopped: {said}").format(said=program.output.lastLine())
        self.log.info("the class league ended: {said}", said=self.said)

    def _failed(self, failure: Any) -> None:
        self.said = _("the league could not start: {error}").format(error=failure.getErrorMessage())

    def page(self) -> str:
        """The league's standings page (the league's own), or why there is none yet."""
        if not self.leagueFile.exists():
            return messagePage(_("the league"), _("no league has been played yet"))
        league = loadLeague(self.leagueFile)
        if not league.databasePath.exists():
            return messagePage(_("the league"), self.state() or _("no league has been played yet"))
        store = LeagueStore(league.databasePath)
        try:
            standings = standingsOf(store, discoverPlayers(league))
        finally:
            store.db.close()
        return standingsPage(league.name, standings, self.program is not None, current())
