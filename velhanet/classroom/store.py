"""The class server's records, in the class's ``grades.db`` beside the history of its gradings.

Three tables (``grading.history`` owns the file's schema and its version):
``people`` (each person's role and the hash of their link's secret: never the
secret), ``sessions`` (the hash of each session cookie, its person and its
CSRF token) and ``handins``: each hand-in from the moment it is received,
its archive's content-addressed name, its version, whether it is late, its
status (``received`` → ``queued`` → ``grading`` → ``graded``, or
``refused`` with the reason, or ``replaced`` by a newer one before it was
graded) and, once graded, its grading in ``gradings``. Every change is
committed before anyone is told of it. Pure SQLite: no Twisted, no clock
of its own (times are given).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from velhanet.grading.history import History

RECEIVED, QUEUED, GRADING, GRADED, REFUSED, REPLACED = "received", "queued", "grading", "graded", "refused", "replaced"
UNFINISHED = (RECEIVED, QUEUED, GRADING)
"""A hand-in in one of these when the server stopped is graded when it starts again."""
UPLOAD, GIT = "upload", "git"


@dataclass(frozen=True)
class HandIn:
    id: int
    student: str
    received: str
    """When it was received (ISO 8601, this machine's offset)."""
    kind: str
    """``upload`` or ``git``."""
    archive: str
    """The stored archive's content-addressed name (an upload's), or the commit (git)."""
    version: str
    committed: str
    """A git hand-in's commit time."""
    late: bool
    status: str
    reason: str
    """Why it was refused or replaced."""
    grading: int | None
    language: str
    """The language its report is written in: its student's when it was handed in."""

    @classmethod
    def fromRow(cls, row: sqlite3.Row) -> HandIn:
        return cls(
            row["id"],
            row["student"],
            row["received"],
            row["kind"],
            row["archive"],
            row["version"],
            row["committed"],
            bool(row["late"]),
            row["status"],
            row["reason"],
            row["grading"],
            row["language"],
        )


class Store:
    def __init__(self, history: History) -> None:
        self.history = history
        self.db = history.connection

    # -- people ------------------------------------------------------------------------

    def syncPeople(self, roles: dict[str, str]) -> None:
        """The class file's people and roles; someone no longer in it keeps their row but signs in no more."""
        with self.db:
            for name, role in roles.items():
                self.db.execute(
                    "INSERT INTO people (name, role) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET role = ?",
                    (name, role, role),
                )
            gone = [row["name"] for row in self.db.execute("SELECT name FROM people") if row["name"] not in roles]
            for name in gone:
                self.db.execute("UPDATE people SET secret = NULL, role = 'gone' WHERE name = ?", (name,))
                self.db.execute("DELETE FROM sessions WHERE person = ?", (name,))

    def setSecret(self, name: str, secretHash: str, when: datetime) -> None:
        """The hash of ``name``'s new link secret; their sessions end (a revoked link signs nobody in)."""
        with self.db:
            self.db.execute(
                "UPDATE people SET secret = ?, made = ? WHERE name = ?",
                (secretHash, when.isoformat(timespec="seconds"), name),
            )
            self.db.execute("DELETE FROM sessions WHERE person = ?", (name,))

    def madeWhen(self, name: str) -> str | None:
        row = self.db.execute("SELECT made FROM people WHERE name = ? AND secret IS NOT NULL", (name,)).fetchone()
        return None if row is None else str(row["made"])

    def personBySecret(self, secretHash: str) -> tuple[str, str] | None:
        """(name, role) of the person whose link secret hashes to ``secretHash``."""
        row = self.db.execute(
            "SELECT name, role FROM people WHERE secret = ? AND role != 'gone'", (secretHash,)
        ).fetchone()
        return None if row is None else (row["name"], row["role"])

    def roleOf(self, name: str) -> str | None:
        row = self.db.execute("SELECT role FROM people WHERE name = ? AND role != 'gone'", (name,)).fetchone()
        return None if row is None else str(row["role"])

    # -- sessions ----------------------------------------------------------------------

    def addSession(self, tokenHash: str, person: str, csrf: str, when: datetime) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO sessions (token, person, csrf, created) VALUES (?, ?, ?, ?)",
                (tokenHash, person, csrf, when.isoformat(timespec="seconds")),
            )

    def session(self, tokenHash: str) -> tuple[str, str, str] | None:
        """(person, CSRF token, created) of a session."""
        row = self.db.execute("SELECT person, csrf, created FROM sessions WHERE token = ?", (tokenHash,)).fetchone()
        return None if row is None else (row["person"], row["csrf"], row["created"])

    def forgetSessions(self, before: datetime) -> None:
        """Sessions begun before ``before`` end."""
        with self.db:
            self.db.execute("DELETE FROM sessions WHERE created < ?", (before.isoformat(timespec="seconds"),))

    def endSession(self, tokenHash: str) -> None:
        with self.db:
            self.db.execute("DELETE FROM sessions WHERE token = ?", (tokenHash,))

    # -- hand-ins ----------------------------------------------------------------------

    def addHandIn(
        self,
        student: str,
        received: datetime,
        kind: str,
        archive: str,
        version: str,
        late: bool,
        language: str,
        committed: str = "",
        status: str = RECEIVED,
    ) -> HandIn:
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO handins (student, received, kind, archive, version, committed, late, status, reason,"
                " language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?)",
                (
                    student,
                    received.isoformat(timespec="seconds"),
                    kind,
                    archive,
                    version,
                    committed,
                    int(late),
                    status,
                    language,
                ),
            )
        return self.handIn(int(cursor.lastrowid or 0))

    def handIn(self, handInId: int) -> HandIn:
        row = self.db.execute("SELECT * FROM handins WHERE id = ?", (handInId,)).fetchone()
        if row is None:
            raise KeyError(handInId)
        return HandIn.fromRow(row)

    def find(self, handInId: int) -> HandIn | None:
        row = self.db.execute("SELECT * FROM handins WHERE id = ?", (handInId,)).fetchone()
        return None if row is None else HandIn.fromRow(row)

    def setStatus(self, handInId: int, status: str, reason: str = "", version: str | None = None) -> HandIn:
        with self.db:
            if version is None:
                self.db.execute("UPDATE handins SET status = ?, reason = ? WHERE id = ?", (status, reason, handInId))
            else:
                self.db.execute(
                    "UPDATE handins SET status = ?, reason = ?, version = ? WHERE id = ?",
                    (status, reason, version, handInId),
                )
        return self.handIn(handInId)

    @staticmethod
    def markGraded(connection: sqlite3.Connection, handInId: int, grading: int) -> None:
        """In the transaction that records the grading (``History.record``'s ``alsoDo``)."""
        connection.execute(
            "UPDATE handins SET status = ?, reason = '', grading = ? WHERE id = ?", (GRADED, grading, handInId)
        )

    def handInsOf(self, student: str) -> list[HandIn]:
        """A student's hand-ins, newest first."""
        rows = self.db.execute("SELECT * FROM handins WHERE student = ? ORDER BY id DESC", (student,))
        return [HandIn.fromRow(row) for row in rows]

    def allHandIns(self) -> list[HandIn]:
        return [HandIn.fromRow(row) for row in self.db.execute("SELECT * FROM handins ORDER BY id DESC")]

    def unfinished(self) -> list[HandIn]:
        """What was received but not graded, oldest first: the server stopped meanwhile."""
        marks = ", ".join("?" for _ in UNFINISHED)
        rows = self.db.execute(f"SELECT * FROM handins WHERE status IN ({marks}) ORDER BY id", UNFINISHED)
        return [HandIn.fromRow(row) for row in rows]

    def lastGraded(self, student: str, onTime: bool = False) -> HandIn | None:
        """The student's last graded hand-in (``onTime``: the last one before the deadline)."""
        late = " AND late = 0" if onTime else ""
        row = self.db.execute(
            f"SELECT * FROM handins WHERE student = ? AND status = ?{late} ORDER BY id DESC LIMIT 1",
            (student, GRADED),
        ).fetchone()
        return None if row is None else HandIn.fromRow(row)

    def lastOfKind(self, student: str, kind: str) -> HandIn | None:
        row = self.db.execute(
            "SELECT * FROM handins WHERE student = ? AND kind = ? AND status != ? ORDER BY id DESC LIMIT 1",
            (student, kind, REFUSED),
        ).fetchone()
        return None if row is None else HandIn.fromRow(row)
