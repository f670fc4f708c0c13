"""The class file of a class server: ``velhanet-grade``'s, with its family and its teachers.

    family = "gambit"
    deadline = "2026-12-20 23:59"     # this machine's time zone, or with an offset
    [teachers.tia]
    [students.ana]                    # neither git nor folder: ana hands in by upload
    [students.bo]
    git = "../repos/bo.git"           # the server polls it, and bo can ask for the last commit
    id = "bo@example.edu"             # the gradebook's key (the CSV's id column)

A name is letters, digits, ``.``, ``_`` and ``-`` (it names files and URLs), and one person is a
student or a teacher, not both.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from velhanet.checks.runner import FAMILIES
from velhanet.grading.submissions import NAME, ClassFileError, parseDeadline
from velhanet.i18n import _

STUDENT, TEACHER = "student", "teacher"


@dataclass(frozen=True)
class Person:
    name: str
    role: str
    git: str = ""
    """A git student's repository: relative to the class file, or any URL git clones."""
    folder: str = ""
    identifier: str = ""

    @property
    def teacher(self) -> bool:
        return self.role == TEACHER


@dataclass(frozen=True)
class Classroom:
    path: Path
    family: str
    deadline: datetime | None
    people: dict[str, Person] = field(default_factory=dict)

    @property
    def students(self) -> list[Person]:
        return [person for person in self.people.values() if not person.teacher]

    @property
    def teachers(self) -> list[Person]:
        return [person for person in self.people.values() if person.teacher]

    def late(self, when: datetime) -> bool:
        """Whether something handed in at ``when`` is after the deadline."""
        return self.deadline is not None and when > self.deadline

    def repository(self, person: Person) -> str:
        """A git student's repository as git reaches it from here."""
        local = self.path.parent / person.git
        return str(local.resolve()) if "://" not in person.git and local.exists() else person.git


def loadClassroom(path: Path) -> Classroom:
    """The class file at ``path``; L{ClassFileError} saying where it is wrong."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ClassFileError(f"{path}: {error}") from None
    family = data.get("family")
    if family not in FAMILIES:
        raise ClassFileError(
            _("{path}: family must be one of {families}").format(path=path, families=", ".join(sorted(FAMILIES)))
        )
    deadline = None
    if data.get("deadline"):
        try:
            deadline = parseDeadline(str(data["deadline"]))
        except ValueError as error:
            raise ClassFileError(_("{path}: deadline: {error}").format(path=path, error=error)) from None
    people: dict[str, Person] = {}
    for table, role in (("teachers", TEACHER), ("students", STUDENT)):
        entries = data.get(table, {})
        if not isinstance(entries, dict):
            raise ClassFileError(_("{path}: [{table}.NAME] tables expected").format(path=path, table=table))
        for name, entry in sorted(entries.items()):
            if not NAME.match(name) or not isinstance(entry, dict) or ("git" in entry and "folder" in entry):
                raise ClassFileError(
                    _(
                        "{path}: [{table}.{name}] needs a name of letters, digits, . _ - and at most one of"
                        " git = URL or folder = PATH"
                    ).format(path=path, table=table, name=name)
                )
            if name in people:
                raise ClassFileError(_("{path}: {name} is both a teacher and a student").format(path=path, name=name))
            people[name] = Person(
                name, role, str(entry.get("git", "")), str(entry.get("folder", "")), str(entry.get("id", ""))
            )
    if not any(person.teacher for person in people.values()):
        raise ClassFileError(_("{path}: no [teachers.NAME] table: someone must see the class").format(path=path))
    return Classroom(path.resolve(), str(family), deadline, people)
