"""What ``velhanet-grade`` grades: a class folder, or a class file naming each student's git repository or folder.

A class folder holds one folder per student. A class file (TOML) names them::

    deadline = "2026-12-01 23:59"    # optional; --deadline overrides it
    [students.ana]
    git = "../repos/ana.git"         # relative to this file, or any URL git clones
    id = "ana@example.edu"           # optional: the gradebook's key for this student (the CSV's id column)
    [students.bo]
    folder = "submissions/bo"
    [students.cy]                    # neither: cy hands in by upload, to the class server
    [teachers.tia]                   # the class server's teachers (velhanet-grade reads no more of them)

A repository is cloned (bare, into the output folder's ``.repos``), and the
last commit of its default branch made before the deadline (by its commit
time) is exported into ``.submissions``: that commit is the version graded,
and the report names it, its time and how many commits came later. A folder's
version is the hash of its content (every file's path, mode and bytes). A
repository that cannot be cloned, or has no commit before the deadline, is
that student's line with the reason; nothing stops the class.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from velhanet.cluster.archive import extractData, folderVersion
from velhanet.i18n import _, ngettext
from velhanet.sandbox.processes import ToolFailed, runTool

GIT_TIMEOUT = 300.0
"""Seconds one git command may take (a clone over a slow network); then the student's line says so."""
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A student's name: it names the report files."""


class ClassFileError(Exception):
    """The class file cannot be read: the line says where."""


@dataclass(frozen=True)
class Submission:
    student: str
    folder: Path | None
    """What is graded; None when there is nothing to grade (then ``problem`` says why)."""
    version: str
    """The folder's content hash, or the commit."""
    source: str = "folder"
    """``folder`` or ``git``."""
    committed: str = ""
    """The commit's time (ISO 8601, its own offset) for a git submission."""
    laterCommits: int = 0
    """Commits on the default branch after the one graded (made after the deadline)."""
    identifier: str = ""
    """The gradebook's key for the student, from the class file."""
    problem: str = ""

    def describe(self) -> str:
        """The version as a report names it: ``commit 3f2a9c1d0e4b (2026-12-01T22:10:00+01:00), 2 later…``."""
        if self.source != "git":
            return _("folder {version}").format(version=self.version)
        described = _("commit {version} ({committed})").format(version=self.version[:12], committed=self.committed)
        if self.laterCommits:
            later = ngettext(
                "; {n} later commit, after the deadline, not graded",
                "; {n} later commits, after the deadline, not graded",
                self.laterCommits,
            )
            described += later.format(n=self.laterCommits)
        return described


def parseDeadline(text: str) -> datetime:
    """``2026-12-01 23:59`` in the machine's local time, or with an offset (``…+01:00``, ``…Z``)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            _("{text!r} is not a time like 2026-12-01 23:59 or 2026-12-01T23:59+01:00").format(text=text)
        ) from None
    return moment.astimezone() if moment.tzinfo is None else moment


def fromFolder(root: Path, wanted: set[str]) -> list[Submission]:
    """One submission per subdirectory of ``root``, its version the hash of its content."""
    return [
        Submission(path.name, path, folderVersion(path))
        for path in sorted(root.iterdir())
        if path.is_dir() and not path.name.startswith(".") and (not wanted or path.name in wanted)
    ]


def fromClassFile(
    path: Path,
    workspace: Path,
    wanted: set[str],
    deadline: datetime | None = None,
    say: Callable[[str], None] = lambda line: None,
    fileDeadline: bool = True,
) -> list[Submission]:
    """Each student of the class file, cloned and exported into ``workspace`` where they hand in by git;
    ``deadline`` overrides the file's, ``fileDeadline`` False ignores it (each repository's last commit)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ClassFileError(f"{path}: {error}") from None
    students = data.get("students")
    if not isinstance(students, dict) or not students:
        raise ClassFileError(_("{path}: no [students.NAME] tables").format(path=path))
    if deadline is None and fileDeadline and data.get("deadline"):
        try:
            deadline = parseDeadline(str(data["deadline"]))
        except ValueError as error:
            raise ClassFileError(_("{path}: deadline: {error}").format(path=path, error=error)) from None
    found = []
    for student, entry in sorted(students.items()):
        if wanted and student not in wanted:
            continue
        if not NAME.match(student) or not isinstance(entry, dict) or ("git" in entry and "folder" in entry):
            raise ClassFileError(
                _(
                    "{path}: [students.{student}] needs a name of letters, digits, . _ - and at most one of"
                    " git = URL or folder = PATH"
                ).format(path=path, student=student)
            )
        identifier = str(entry.get("id", ""))
        if "git" not in entry and "folder" not in entry:
            problem = _("hands in by upload, to the class server: nothing to grade here")
            found.append(Submission(student, None, "", "upload", identifier=identifier, problem=problem))
            continue
        if "folder" in entry:
            folder = (path.parent / str(entry["folder"])).resolve()
            if not folder.is_dir():
                problem = _("no folder {folder}").format(folder=folder)
                found.append(Submission(student, None, "", identifier=identifier, problem=problem))
                continue
            found.append(Submission(student, folder, folderVersion(folder), identifier=identifier))
            continue
        say(_("cloning {student}'s repository ...").format(student=student))
        found.append(fromGit(student, str(entry["git"]), path.parent, workspace, deadline, identifier))
    return found


class GitFailed(Exception):
    pass


def _git(*arguments: str) -> str:
    return _gitBytes(*arguments).decode("utf-8", "replace").strip()


def _gitBytes(*arguments: str) -> bytes:
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/true", "LC_ALL": "C"}
    try:
        done = runTool(["git", *arguments], environment=environment, timeout=GIT_TIMEOUT)
    except ToolFailed as error:
        raise GitFailed(str(error)) from None
    if done.returncode != 0:
        said = [line for line in done.stderr.decode("utf-8", "replace").strip().splitlines() if line.strip()]
        raise GitFailed(
            said[-1].removeprefix("fatal: ") if said else _("git {command} failed").format(command=arguments[0])
        )
    return done.stdout


def _cloneOrFetch(source: str, clone: Path) -> None:
    """A bare copy of ``source`` at ``clone``: fetched again when it is there already (a class graded before),
    cloned afresh when it is not (or came from another URL)."""
    if (clone / "HEAD").is_file():
        try:
            if _git("-C", str(clone), "config", "--get", "remote.origin.url") == source:
                _git("-C", str(clone), "fetch", "--quiet", "--prune", "--force", "origin", "+refs/heads/*:refs/heads/*")
                return
        except GitFailed:
            pass  # cloned again below
    shutil.rmtree(clone, ignore_errors=True)
    clone.parent.mkdir(parents=True, exist_ok=True)
    _git("clone", "--bare", "--quiet", "--", source, str(clone))


def fromGit(
    student: str, url: str, base: Path, workspace: Path, deadline: datetime | None, identifier: str = ""
) -> Submission:
    """The commit to grade of ``student``'s repository, exported; or a submission with the ``problem``."""
    local = base / url
    source = str(local.resolve()) if "://" not in url and local.exists() else url
    clone = workspace / ".repos" / f"{student}.git"

    def failed(problem: str) -> Submission:
        return Submission(student, None, "", "git", identifier=identifier, problem=problem)

    try:
        _cloneOrFetch(source, clone)
    except GitFailed as error:
        return failed(_("cannot clone {url}: {error}").format(url=url, error=error))
    try:
        if not _git("-C", str(clone), "rev-list", "-1", "--all"):
            return failed(_("{url} has no commit").format(url=url))
        before = [f"--before={deadline.isoformat()}"] if deadline is not None else []
        commit = _git("-C", str(clone), "rev-list", "-1", *before, "HEAD")
        if not commit:
            first = _git("-C", str(clone), "log", "--reverse", "--format=%cI", "HEAD").splitlines()[:1]
            assert deadline is not None
            when = deadline.isoformat(" ", "minutes")
            if first:
                return failed(
                    _("no commit before the deadline {deadline} (its first is from {first})").format(
                        deadline=when, first=first[0]
                    )
                )
            return failed(_("no commit before the deadline {deadline}").format(deadline=when))
        committed = _git("-C", str(clone), "show", "-s", "--format=%cI", commit)
        later = int(_git("-C", str(clone), "rev-list", "--count", f"{commit}..HEAD") or 0)
        folder = workspace / ".submissions" / f"{student}-{commit[:12]}"
        if not folder.is_dir():
            tree = _gitBytes("-C", str(clone), "archive", "--format=tar", commit)
            staging = folder.with_name(folder.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            with tarfile.open(fileobj=io.BytesIO(tree)) as archive:
                extractData(archive, staging)
            staging.rename(folder)
    except (GitFailed, OSError, tarfile.TarError) as error:
        return failed(_("cannot read {url}: {error}").format(url=url, error=error))
    return Submission(student, folder, commit, "git", committed, later, identifier)
