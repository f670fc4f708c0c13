"""The league's database (SQLite): players and versions, and every game with how it ended.

A game row is created once, when it is first scheduled (its players, their
versions, the pair, the side: unique), and finished once: ``finish`` changes a
row only while it is still ``scheduled``, in one transaction. A run that is
stopped anywhere (Ctrl-C, a crash, a dead scheduler) leaves every finished
game finished and every other one scheduled; ``run`` again plays exactly the
scheduled ones, and no game is counted twice. WAL mode lets the standings
(and the spectators' site) read while a run writes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from velhanet.i18n import _
from velhanet.league.config import LeagueError, Player
from velhanet.league.schedule import Scheduled

SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
    name TEXT NOT NULL, version TEXT NOT NULL, command TEXT NOT NULL, first_seen REAL NOT NULL,
    PRIMARY KEY (name, version));
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    a TEXT NOT NULL, a_version TEXT NOT NULL, b TEXT NOT NULL, b_version TEXT NOT NULL,
    pair INTEGER NOT NULL, side INTEGER NOT NULL, seed INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'scheduled',   -- scheduled, done, void
    score REAL,                                -- a's points: 1, 0.5, 0 (NULL unless done)
    winner TEXT, loser TEXT, loss_kind TEXT, reason TEXT,
    moves INTEGER, seconds REAL, worker TEXT, replays INTEGER NOT NULL DEFAULT 0, replayed_because TEXT,
    notes TEXT, log TEXT, finished REAL,
    UNIQUE (a, a_version, b, b_version, pair, side));
"""
SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a database this velhanet writes; 0: made before the schema had a version."""
LATER_COLUMNS = {
    "replays": "INTEGER NOT NULL DEFAULT 0",
    "replayed_because": "TEXT",
    "notes": "TEXT",
    "log": "TEXT",
}
"""The games' columns added after the first leagues were played: a database from then gets them (version 1)."""


class StoreError(LeagueError):
    """The database cannot be used by this velhanet: the line says why."""


def _toVersion1(db: sqlite3.Connection) -> None:
    present = {row[1] for row in db.execute("PRAGMA table_info(games)")}
    for column, kind in LATER_COLUMNS.items():
        if column not in present:
            db.execute(f"ALTER TABLE games ADD COLUMN {column} {kind}")


MIGRATIONS = {1: _toVersion1}
"""Each schema version's step from the one before, applied in order when an older database is opened."""


@dataclass(frozen=True)
class Outcome:
    """How one game ended, as the league counts it."""

    winner: str | None
    """The winning player's name; None for a draw or a void game."""
    void: bool
    lossKind: str
    reason: str
    moves: int
    seconds: float
    worker: str
    notes: str = ""
    log: str = ""


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            self.db.close()
            raise StoreError(
                _("{path} was written by a newer velhanet (schema {version}, this one {mine})").format(
                    path=path, version=version, mine=SCHEMA_VERSION
                )
            )
        self.db.executescript(SCHEMA)  # a new database gets today's tables; an old one keeps its own
        if version < SCHEMA_VERSION:
            self.db.execute("BEGIN IMMEDIATE")  # one opener migrates; another waits, then finds it done
            try:
                version = self.db.execute("PRAGMA user_version").fetchone()[0]
                for step in range(version + 1, SCHEMA_VERSION + 1):
                    MIGRATIONS[step](self.db)  # each step idempotent: a new database passes through them too
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self.db.close()

    def addPlayers(self, players: Iterable[Player]) -> list[str]:
        """Record each player's version; the names of the players whose version is new."""
        new = []
        with self.db:
            for player in players:
                known = self.db.execute("SELECT COUNT(*) FROM players WHERE name = ?", (player.name,)).fetchone()[0]
                inserted = self.db.execute(
                    "INSERT OR IGNORE INTO players VALUES (?, ?, ?, ?)",
                    (player.name, player.version, player.command, time.time()),
                ).rowcount
                if inserted and known:
                    new.append(player.name)
        return new

    def schedule(self, games: Iterable[Scheduled]) -> int:
        """Add the games not yet in the database; how many were added."""
        added = 0
        with self.db:
            for game in games:
                added += self.db.execute(
                    "INSERT OR IGNORE INTO games (a, a_version, b, b_version, pair, side, seed)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (game.a.name, game.a.version, game.b.name, game.b.version, game.pair, game.side, game.seed),
                ).rowcount
        return added

    def gameId(self, game: Scheduled) -> int:
        row = self.db.execute(
            "SELECT id FROM games WHERE a = ? AND a_version = ? AND b = ? AND b_version = ? AND pair = ? AND side = ?",
            (game.a.name, game.a.version, game.b.name, game.b.version, game.pair, game.side),
        ).fetchone()
        return int(row[0])

    def pending(self, games: Sequence[Scheduled]) -> list[tuple[int, Scheduled]]:
        """The games of ``games`` still to play, with their ids, in order."""
        scheduled = {
            (r["a"], r["a_version"], r["b"], r["b_version"], r["pair"], r["side"]): r["id"]
            for r in self.db.execute("SELECT * FROM games WHERE state = 'scheduled'")
        }
        found = []
        for game in games:
            key = (game.a.name, game.a.version, game.b.name, game.b.version, game.pair, game.side)
            if key in scheduled:
                found.append((scheduled[key], game))
        return found

    def finish(self, gameId: int, outcome: Outcome, a: str) -> bool:
        """Record how game ``gameId`` ended, once: False if it was finished already."""
        score = None if outcome.void else (0.5 if outcome.winner is None else float(outcome.winner == a))
        with self.db:
            row = self.db.execute("SELECT a, b FROM games WHERE id = ?", (gameId,)).fetchone()
            loser = None if outcome.winner is None else (row["b"] if outcome.winner == row["a"] else row["a"])
            return (
                self.db.execute(
                    "UPDATE games SET state = ?, score = ?, winner = ?, loser = ?, loss_kind = ?, reason = ?,"
                    " moves = ?, seconds = ?, worker = ?, notes = ?, log = ?, finished = ?"
                    " WHERE id = ? AND state = 'scheduled'",
                    (
                        "void" if outcome.void else "done",
                        score,
                        outcome.winner,
                        loser,
                        outcome.lossKind,
                        outcome.reason,
                        outcome.moves,
                        outcome.seconds,
                        outcome.worker,
                        outcome.notes,
                        outcome.log,
                        time.time(),
                        gameId,
                    ),
                ).rowcount
                == 1
            )

    def replayed(self, gameId: int, because: str) -> int:
        """A game played again (a loss on time the machine caused): how many times so far."""
        with self.db:
            self.db.execute(
                "UPDATE games SET replays = replays + 1, replayed_because = ? WHERE id = ? AND state = 'scheduled'",
                (because, gameId),
            )
        return int(self.db.execute("SELECT replays FROM games WHERE id = ?", (gameId,)).fetchone()[0])

    def games(self, state: str | None = None) -> Iterator[sqlite3.Row]:
        query = "SELECT * FROM games" + (" WHERE state = ?" if state else "") + " ORDER BY id"
        yield from self.db.execute(query, (state,) if state else ())

    def counts(self) -> dict[str, int]:
        return {r["state"]: r["n"] for r in self.db.execute("SELECT state, COUNT(*) AS n FROM games GROUP BY state")}

    def versions(self) -> dict[str, list[tuple[str, float]]]:
        """Every version of every player, oldest first."""
        known: dict[str, list[tuple[str, float]]] = {}
        for row in self.db.execute("SELECT name, version, first_seen FROM players ORDER BY first_seen"):
            known.setdefault(row["name"], []).append((row["version"], row["first_seen"]))
        return known


def asDict(row: sqlite3.Row) -> dict[str, Any]:
    return {key: row[key] for key in row.keys()}  # noqa: SIM118 (a Row iterates its values)
