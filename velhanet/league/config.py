"""The league file (``LEAGUE.toml``), its players, and what a player's version is.

    name = "Piranhas 2026, class A"
    players = "players"           # a folder with one folder per player (relative to this file)
    format = "round-robin"        # or "gauntlet" (with gauntlet = "NAME"), or "sprt" (two players)
    pairs = 10                    # game pairs per pairing: each start position from both sides
    seed = 1
    # class = "class.toml"        # instead of players: velhanet-grade's class file (git or folders)
    # deadline = "2026-12-01 23:59"  # with class: each repository's last commit before it
    # only = ["ana", "bo"]        # a subset of the folder's players
    # database = "league.db"      # beside the league file by default
    # move_timeout = true          # the server's 2 s / 10 s limits
    # game_timeout = 900
    [sprt]                        # format = "sprt": stops as soon as it is decided
    elo0 = 0
    elo1 = 20
    alpha = 0.05
    beta = 0.05
    max_pairs = 1000

Each player's folder holds ``velhanet-run``: the command that starts it, with
``socha-match``'s placeholders ``{host}``, ``{port}``, ``{reservation}`` and
``{seed}`` (run by the shell in its folder, sandboxed). A player's **version**
is the hash of its folder (every file's path, mode and bytes): a changed
submission is a new version, played and rated as such. With ``class``, the
players are the students of a class file (``velhanet.grading.submissions``, the one
``velhanet-grade`` reads): a student who hands in by git plays the commit
graded (the last before ``deadline``), and that version is named after it
(``git-3f2a9c1d0e4b``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from velhanet.cluster.archive import folderVersion
from velhanet.grading.submissions import ClassFileError, fromClassFile, parseDeadline
from velhanet.i18n import _

RUN_FILE = "velhanet-run"
FORMATS = ("round-robin", "gauntlet", "sprt")


class LeagueError(Exception):
    """The league file or its players are not usable; the one line says why."""


@dataclass(frozen=True)
class Sprt:
    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05
    maxPairs: int = 1000


@dataclass(frozen=True)
class League:
    path: Path
    name: str
    players: Path
    format: str
    pairs: int
    seed: int
    only: tuple[str, ...] = ()
    gauntlet: str = ""
    sprt: Sprt | None = None
    database: Path | None = None
    moveTimeout: bool = True
    gameTimeout: float = 900.0
    classFile: Path | None = None
    """A class file (``velhanet.grading.submissions``): the players are its students, from git or folders."""
    deadline: datetime | None = None

    @property
    def databasePath(self) -> Path:
        return self.database or self.path.with_name("league.db")

    @property
    def workspace(self) -> Path:
        """Where the class file's repositories are cloned and their commits exported, beside the database."""
        return self.databasePath.with_name(self.databasePath.stem + "-submissions")

    @property
    def logs(self) -> Path:
        """The finished games' XML logs, beside the database (what the replay viewer reads)."""
        return self.databasePath.with_name(self.databasePath.stem + "-logs")


@dataclass(frozen=True)
class Player:
    name: str
    folder: Path
    command: str
    version: str


def _get(table: dict[str, object], key: str, kind: type | tuple[type, ...], default: object) -> object:
    value = table.get(key, default)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = {str: _("a text"), int: _("a whole number"), float: _("a number"), bool: _("true or false")}
        wanted = names.get(kind, _("a number")) if isinstance(kind, type) else _("a number")
        raise LeagueError(_("{key} must be {wanted}, not {value!r}").format(key=key, wanted=wanted, value=value))
    return value


def loadLeague(path: Path) -> League:
    path = path.resolve()
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise LeagueError(_("cannot read {path}: {reason}").format(path=path, reason=error.strerror)) from None
    except tomllib.TOMLDecodeError as error:
        raise LeagueError(_("{path} is not TOML: {error}").format(path=path, error=error)) from None
    form = str(_get(table, "format", str, "round-robin"))
    if form not in FORMATS:
        raise LeagueError(_("format must be {formats}, not {given!r}").format(formats=", ".join(FORMATS), given=form))
    sprt = None
    if form == "sprt":
        raw = table.get("sprt", {})
        if not isinstance(raw, dict):
            raise LeagueError(_("[sprt] must be a table"))
        sprt = Sprt(
            float(_get(raw, "elo0", (int, float), 0.0)),  # type: ignore[arg-type]
            float(_get(raw, "elo1", (int, float), 20.0)),  # type: ignore[arg-type]
            float(_get(raw, "alpha", float, 0.05)),  # type: ignore[arg-type]
            float(_get(raw, "beta", float, 0.05)),  # type: ignore[arg-type]
            int(_get(raw, "max_pairs", int, 1000)),  # type: ignore[call-overload]
        )
        if not sprt.elo0 < sprt.elo1 or not (0 < sprt.alpha < 0.5 and 0 < sprt.beta < 0.5):
            raise LeagueError(_("[sprt] needs elo0 < elo1 and 0 < alpha, beta < 0.5"))
    only = table.get("only", [])
    if not isinstance(only, list) or not all(isinstance(name, str) for name in only):
        raise LeagueError(_("only must be a list of player names"))
    database = table.get("database")
    classFile = table.get("class")
    try:
        deadline = parseDeadline(str(table["deadline"])) if "deadline" in table else None
    except ValueError as error:
        raise LeagueError(_("deadline: {error}").format(error=error)) from None
    league = League(
        path=path,
        name=str(_get(table, "name", str, path.stem)),
        players=(path.parent / str(_get(table, "players", str, "players"))).resolve(),
        format=form,
        pairs=int(_get(table, "pairs", int, 10)),  # type: ignore[call-overload]
        seed=int(_get(table, "seed", int, 0)),  # type: ignore[call-overload]
        only=tuple(only),
        gauntlet=str(_get(table, "gauntlet", str, "")),
        sprt=sprt,
        database=(path.parent / str(database)).resolve() if isinstance(database, str) else None,
        moveTimeout=bool(_get(table, "move_timeout", bool, True)),
        gameTimeout=float(_get(table, "game_timeout", (int, float), 900.0)),  # type: ignore[arg-type]
        classFile=(path.parent / str(classFile)).resolve() if isinstance(classFile, str) else None,
        deadline=deadline,
    )
    if league.pairs < 1:
        raise LeagueError(_("pairs must be at least 1"))
    if form == "gauntlet" and not league.gauntlet:
        raise LeagueError(_('format = "gauntlet" needs gauntlet = "NAME", the player against all'))
    return league


def classPlayers(league: League, say: Callable[[str], None]) -> list[Player]:
    """The class file's students as players: a git student's version names its commit (``git-3f2a9c1d0e4b``),
    a folder's is its hash; a student who cannot be had (a failed clone, no commit before the deadline) is
    left out with a line saying why."""
    assert league.classFile is not None
    try:
        submissions = fromClassFile(league.classFile, league.workspace, set(league.only), league.deadline, say)
    except ClassFileError as error:
        raise LeagueError(str(error)) from None
    players = []
    for submission in submissions:
        run = submission.folder / RUN_FILE if submission.folder is not None else None
        if run is None or not run.is_file():
            problem = submission.problem or _("no {file}").format(file=RUN_FILE)
            say(_("{student} left out: {problem}").format(student=submission.student, problem=problem))
            continue
        version = f"git-{submission.version[:12]}" if submission.source == "git" else submission.version
        players.append(Player(submission.student, run.parent, run.read_text(encoding="utf-8").strip(), version))
    return players


def discoverPlayers(league: League, say: Callable[[str], None] = lambda line: None) -> list[Player]:
    """Every player folder (with a ``velhanet-run``) of the league, sorted by name, with its version; or the
    class file's students."""
    if league.classFile is not None:
        return checkedPlayers(league, classPlayers(league, say), str(league.classFile))
    if not league.players.is_dir():
        raise LeagueError(_("the players' folder {folder} does not exist").format(folder=league.players))
    players = []
    for folder in sorted(p for p in league.players.iterdir() if p.is_dir()):
        if league.only and folder.name not in league.only:
            continue
        run = folder / RUN_FILE
        if not run.is_file():
            continue
        command = run.read_text(encoding="utf-8").strip()
        players.append(Player(folder.name, folder, command, folderVersion(folder)))
    return checkedPlayers(league, players, str(league.players))


def checkedPlayers(league: League, players: list[Player], where: str) -> list[Player]:
    missing = set(league.only) - {p.name for p in players}
    if missing:
        raise LeagueError(
            _("no player folder with a {file} for {names} in {where}").format(
                file=RUN_FILE, names=", ".join(sorted(missing)), where=where
            )
        )
    if league.format == "gauntlet" and league.gauntlet not in {p.name for p in players}:
        raise LeagueError(
            _("the gauntlet player {name!r} has no folder with a {file} in {where}").format(
                name=league.gauntlet, file=RUN_FILE, where=where
            )
        )
    if league.format == "sprt" and len(players) != 2:
        raise LeagueError(
            _('format = "sprt" plays two players, not {n}: give only = ["A", "B"]').format(n=len(players))
        )
    if len(players) < 2:
        raise LeagueError(_("a league needs two players at least; {where} has {n}").format(where=where, n=len(players)))
    return players
