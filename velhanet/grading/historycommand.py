"""``velhanet-grade history OUT STUDENT``: every graded version of a student's, oldest first (``grades.db``)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from velhanet.checks.base import FAIL, NOT_RUN, PASS, WARN
from velhanet.checks.runner import verdictCount
from velhanet.grading.history import History, HistoryError
from velhanet.i18n import _
from velhanet.startup import ArgumentParser


def historyCommand(argv: list[str], out: TextIO) -> int:
    """``velhanet-grade history OUT STUDENT``: every graded version of a student's, oldest first."""
    made = ArgumentParser(prog="velhanet-grade history", description="A student's graded versions, oldest first.")
    made.add_argument("out", metavar="OUT", help="the output folder of velhanet-grade (it holds grades.db)")
    made.add_argument("student", metavar="STUDENT")
    arguments = made.parse_args(argv)
    path = Path(arguments.out)
    path = path / "grades.db" if path.is_dir() else path
    if not path.is_file():
        made.error(_("{path}: no such file (velhanet-grade writes it in its --out folder)").format(path=path))
    try:
        records = History(path)
    except HistoryError as error:
        made.error(str(error))
    versions = records.versionsOf(arguments.student)
    records.close()
    if not versions:
        print(_("{student}: never graded in {path}").format(student=arguments.student, path=path), file=out)
        return 1
    for entry in versions:
        graded, row = entry["graded"], entry["row"]
        if graded.source == "git":
            where = _("commit {version} of {committed}").format(version=graded.version[:12], committed=graded.committed)
        else:
            where = _("folder {version}").format(version=graded.version)
        counts = ", ".join(
            verdictCount(status, row[column])
            for status, column in ((PASS, "passed"), (FAIL, "failed"), (WARN, "warned"), (NOT_RUN, "notRun"))
        )
        print(f"{graded.graded}  {entry['family']}  {where}: {counts}: {graded.verdict}", file=out)
        print(f"    {entry['change']}", file=out)
        failed = sorted(rule for rule, status in graded.statuses.items() if status == "FAIL")
        if failed:
            print("    " + _("failed: {rules}").format(rules=", ".join(failed)), file=out)
    return 0
