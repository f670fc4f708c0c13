"""The class server's pages, as HTML text: pure functions of what they show, in the language spoken now.

The resources render each page inside ``i18n.speaking(the reader's language)``, so every ``_()`` here
is the reader's. Everything that comes from a student — a name, a file name in a refusal, a reason
quoting what their program sent — is escaped where it is put; the pages hold no inline script (the
one script is ``/static/classroom.js``, which reads the page's ``data-`` attributes and the event
stream) and the server sends them with a Content-Security-Policy that allows nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

from velhanet.checks.outcome import Report
from velhanet.classroom.classfile import Classroom
from velhanet.classroom.store import GIT, GRADED, GRADING, QUEUED, REFUSED, REPLACED, HandIn
from velhanet.grading.classpage import MATRIX_STYLE, classMatrix, studentVerdict
from velhanet.i18n import _, current, ngettext


@dataclass(frozen=True)
class Shown:
    """One hand-in as a page shows it."""

    handIn: HandIn
    report: Report | None
    """Its report once graded."""
    change: str = ""
    waiting: tuple[int, float] | None = None
    """Its position in the queue and the estimated seconds, while it waits."""


def page(title: str, body: Iterable[str], data: dict[str, str] | None = None, style: str = "") -> str:
    """A whole page: the stylesheet and the one script of the site, ``data`` as the body's attributes."""
    attributes = "".join(f' data-{name}="{escape(value)}"' for name, value in (data or {}).items())
    extra = f"<style>{style}</style>" if style else ""
    return (
        f'<!DOCTYPE html>\n<html lang="{current().tag}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        '<link rel="stylesheet" href="/static/classroom.css">'
        f'<script src="/static/classroom.js" defer></script>{extra}</head>'
        f"<body{attributes}>" + "\n".join(body) + "</body></html>\n"
    )


def header(classroom: Classroom, who: str, csrf: str, now: datetime) -> str:
    signOut = escape(_("sign out"))
    deadline = deadlineText(classroom, now)
    return (
        f'<header><span class="class">velhanet · {escape(classroom.family)}</span>'
        f'<span class="who">{escape(who)}</span><span class="deadline" id="deadline">{escape(deadline)}</span>'
        f'<form method="post" action="/sign-out" class="inline">{csrfField(csrf)}'
        f"<button>{signOut}</button></form></header>"
    )


def csrfField(csrf: str) -> str:
    """The token every form that changes something carries."""
    return f'<input type="hidden" name="csrf" value="{escape(csrf)}">'


def deadlineText(classroom: Classroom, now: datetime) -> str:
    if classroom.deadline is None:
        return _("no deadline")
    when = classroom.deadline.isoformat(" ", "minutes")
    left = classroom.deadline - now
    if left.total_seconds() <= 0:
        return _("deadline {when}: passed; what you hand in now is graded and marked late").format(when=when)
    return _("deadline {when}: {left} left").format(when=when, left=duration(left.total_seconds()))


def duration(seconds: float) -> str:
    """``3 days 4 h``, ``2 h 5 min``, ``12 min``, ``40 s``: a time left, as a person reads it."""
    seconds = max(0, int(seconds))
    days, hours, minutes = seconds // 86400, seconds % 86400 // 3600, seconds % 3600 // 60
    if days:
        return ngettext("{n} day", "{n} days", days).format(n=days) + f" {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min"
    return f"{seconds} s"


def statusText(shown: Shown) -> str:
    handIn = shown.handIn
    if handIn.status == QUEUED and shown.waiting is not None:
        position, wait = shown.waiting
        return _("queued: number {position}, about {wait}").format(position=position, wait=duration(wait))
    if handIn.status == QUEUED:
        return _("queued")
    if handIn.status == GRADING:
        return _("being graded")
    if handIn.status == REFUSED:
        return _("refused: {reason}").format(reason=handIn.reason)
    if handIn.status == REPLACED:
        return _("not graded: {reason}").format(reason=handIn.reason)
    if handIn.status == GRADED and shown.report is not None:
        return studentVerdict(shown.report)
    return _("received")


def handInRows(shown: Sequence[Shown], withStudent: bool = False, empty: str = "") -> list[str]:
    """The hand-ins table, newest first: each row's status follows the event stream (``data-hand-in``)."""
    if not shown:
        nothing = empty or _("Nothing handed in yet.")
        return [f'<p class="empty">{escape(nothing)}</p>']
    names = [_("hand-in"), *([_("student")] if withStudent else []), _("received"), _("version"), _("status")]
    names += [_("rules"), _("since the previous one")]
    rows = ['<table class="handins"><thead><tr>' + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr></thead>"]
    rows.append("<tbody>")
    lateWord = escape(_("late"))
    for item in shown:
        handIn = item.handIn
        link = f'<a href="/hand-ins/{handIn.id}">#{handIn.id}</a>' if handIn.status == GRADED else f"#{handIn.id}"
        late = f' <span class="late">{lateWord}</span>' if handIn.late else ""
        kind = _("commit {version}") if handIn.kind == GIT else _("upload {version}")
        version = kind.format(version=handIn.version[:8]) if handIn.version else "—"
        counts = "—"
        if item.report is not None and not item.report.cannotTest:
            counts = ", ".join(f"{item.report.count(status)} {status}" for status in ("PASS", "FAIL", "WARN"))
        when = f'<time datetime="{escape(handIn.received)}">{escape(handIn.received[:16].replace("T", " "))}</time>'
        cells = [link, *([escape(handIn.student)] if withStudent else []), when + late]
        cells += [escape(version), f'<span class="status">{escape(statusText(item))}</span>', escape(counts)]
        cells.append(escape(item.change))
        classes = f"{handIn.status}{' late' if handIn.late else ''}"
        rows.append(
            f'<tr data-hand-in="{handIn.id}" data-status="{escape(handIn.status)}" class="{classes}">'
            + "".join(f"<td>{cell}</td>" for cell in cells)
            + "</tr>"
        )
    rows.append("</tbody></table>")
    return rows


def studentPage(classroom: Classroom, student: str, csrf: str, shown: Sequence[Shown], now: datetime, git: bool) -> str:
    title = _("velhanet: {student}'s hand-ins").format(student=student)
    hand = escape(_("Hand in"))
    explain = escape(
        _(
            "A .zip or .tar.gz of your program's folder, with its velhanet-run at the top. It is graded in a"
            " sandbox, as velhanet-grade does; a newer hand-in replaces one still waiting."
        )
    )
    body = [header(classroom, student, csrf, now), f"<main><h1>{escape(title)}</h1>", f"<section><h2>{hand}</h2>"]
    body.append(f"<p>{explain}</p>")
    send, commit, yours = escape(_("hand in")), escape(_("grade my last commit")), escape(_("Your hand-ins"))
    body.append(
        '<form method="post" action="/hand-ins" enctype="multipart/form-data" id="upload">'
        f"{csrfField(csrf)}"
        '<input type="file" name="archive" id="archive" accept=".zip,.tar.gz,.tgz,application/zip,application/gzip"> '
        f'<button id="send">{send}</button></form>'
    )
    if git:
        body.append(
            f'<form method="post" action="/commit" id="commit">{csrfField(csrf)}<button>{commit}</button></form>'
        )
    body.append(f"</section><section><h2>{yours}</h2>")
    body += handInRows(shown)
    body.append("</section></main>")
    return page(title, body, {"live": "/events"})


def teacherPage(
    classroom: Classroom,
    teacher: str,
    csrf: str,
    latest: Sequence[tuple[str, HandIn, Report]],
    queue: Sequence[Shown],
    now: datetime,
    league: str = "",
) -> str:
    title = _("velhanet: the class")
    body = [header(classroom, teacher, csrf, now), f"<main><h1>{escape(title)}</h1>"]
    sheet, matrix = escape(_("gradebook CSV (the last hand-in before the deadline)")), escape(_("the matrix as JSON"))
    again = escape(_("grade everything again"))
    body.append(f'<p class="actions"><a href="/class.csv">{sheet}</a> · <a href="/api/class">{matrix}</a></p>')
    body.append(
        f'<form method="post" action="/class/regrade" class="inline">{csrfField(csrf)}<button>{again}</button></form>'
    )
    if classroom.family == "socha-player":
        play, theLeague = (
            escape(_("play the league (the last hand-in of each before the deadline)")),
            escape(_("the league")),
        )
        body.append(
            f'<form method="post" action="/class/league" class="inline">{csrfField(csrf)}<button>{play}</button></form>'
        )
        if league:
            body.append(f'<p><a href="/class/league">{theLeague}</a>: {escape(league)}</p>')
    heading = escape(_("The class"))
    body.append(f"<h2>{heading}</h2>")
    pages = {student: f"/hand-ins/{handIn.id}" for student, handIn, _report in latest}
    body += classMatrix(classroom.family, [(student, report) for student, _h, report in latest], pages.__getitem__)
    lateOnes = [student for student, handIn, _report in latest if handIn.late]
    if lateOnes:
        said = _("late (after the deadline; the CSV takes their last hand-in before it): {students}")
        body.append(f'<p class="late">{escape(said.format(students=", ".join(lateOnes)))}</p>')
    students = escape(_("Students"))
    body.append(f'<h2>{students}</h2><ul class="students">')
    for person in classroom.students:
        body.append(f'<li><a href="/students/{escape(person.name)}">{escape(person.name)}</a></li>')
    waiting = escape(_("Waiting and being graded"))
    body.append(f"</ul><h2>{waiting}</h2>")
    body += handInRows(queue, withStudent=True, empty=_("Nobody is waiting."))
    body.append("</main>")
    return page(title, body, {"live": "/events", "reload": "graded"}, MATRIX_STYLE)


def historyPage(
    classroom: Classroom, teacher: str, student: str, csrf: str, shown: Sequence[Shown], now: datetime
) -> str:
    title = _("velhanet: {student}'s hand-ins").format(student=student)
    back = escape(_("← the class"))
    body = [header(classroom, teacher, csrf, now), f'<main><p><a href="/class">{back}</a></p>']
    body.append(f"<h1>{escape(title)}</h1>")
    body += handInRows(shown)
    body.append("</main>")
    return page(title, body, {"live": "/events"})


def messagePage(title: str, message: str) -> str:
    """A page that says one thing (signed out, not found, refused)."""
    return page(title, [f"<main><h1>{escape(title)}</h1><p>{escape(message)}</p></main>"])
