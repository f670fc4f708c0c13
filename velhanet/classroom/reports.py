"""A hand-in's report as its reader gets it: the evidence page, the JSON, and the command to run at home.

The report is the grading's, as the history keeps it: the JSON is exactly what ``velhanet-check
--json`` writes (``checks.formats.jsonReport``), the page is ``velhanet-check --html``'s evidence page
(``checks.page.htmlReport``) with the hand-in's facts above it and what the program printed below, in
the reader's language. Under each rule the ``again:`` line is a ``velhanet-check`` command a student
runs at home against their own program (``againAtHome``), not a command of the server's.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

from velhanet.checks.formats import jsonReport
from velhanet.checks.outcome import Report
from velhanet.checks.page import htmlReport
from velhanet.checks.settings import DEFAULT_PORTS
from velhanet.classroom.store import HandIn
from velhanet.grading.history import Graded
from velhanet.grading.settings import GradeSettings
from velhanet.i18n import _

SHOWN_OUTPUT = 64 * 1024
"""Bytes of what a program printed that its report page shows (the end)."""

TARGETS = {
    "gambit": ["--target", f"127.0.0.1:{DEFAULT_PORTS['gambit']}"],
    "socha": ["--target", f"127.0.0.1:{DEFAULT_PORTS['socha']}"],
    "velha": ["--target", "PEER_ADDRESS"],
    "gobang": ["--target", "SERVER_PID", "--fifo-dir", "/tmp"],
}
"""How a student points ``velhanet-check`` at their own program at home, by family (as its help says)."""


def againAtHome(settings: GradeSettings, rules: str, command: str = "") -> str:
    """The ``velhanet-check`` command that runs ``rules`` against one's own program (socha-player: started by
    ``command``, its ``velhanet-run``)."""
    words = ["velhanet-check", settings.family]
    words += ["--command", command] if settings.family == "socha-player" else TARGETS[settings.family]
    words += ["--strict"] if settings.strict else []
    words += ["--repeat", str(settings.repeat)] if settings.repeat != 1 else []
    return shlex.join([*words, "--only", rules])


def withCommands(report: Report, settings: GradeSettings, folder: Path | None) -> Report:
    """A copy of ``report`` with each rule's ``again:`` for home (the history's own stays as it was)."""
    command = ""
    if folder is not None and (folder / "velhanet-run").is_file():
        command = (folder / "velhanet-run").read_text(encoding="utf-8", errors="replace").strip()
    outcomes = [
        dataclasses.replace(outcome, reproduce=againAtHome(settings, outcome.againRules(), command))
        for outcome in report.outcomes
    ]
    return dataclasses.replace(report, outcomes=outcomes)


def reportPage(handIn: HandIn, graded: Graded, report: Report, printed: bytes, title: str) -> str:
    """The evidence page of a graded hand-in, in the language spoken now (``i18n.speaking``)."""
    shown = printed[-SHOWN_OUTPUT:].decode("utf-8", "replace")
    if len(printed) > SHOWN_OUTPUT:
        shown = _("… the last {kib} KiB of what it printed …").format(kib=SHOWN_OUTPUT // 1024) + "\n" + shown
    facts = [
        (_("hand-in"), f"#{handIn.id} {title}"),
        (_("received"), handIn.received + (" " + _("(late)") if handIn.late else "")),
        (_("version"), handIn.version[:12]),
    ]
    facts += [(_("since the last version"), graded.change)] if graded.change else []
    return htmlReport(report, shown, facts)


def reportJson(report: Report) -> str:
    return jsonReport(report)
