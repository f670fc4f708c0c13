"""``velhanet-grade``'s ``index.html``: a class at a glance, students × rules.

One row per student (sorted by name), one column per rule, grouped and ordered as the family's doc lists
them, which is as its checks are written (discovery, invitation, series…; ``tests/test_docs.py`` keeps
the two in step). Each cell is the verdict, linked to that rule in that student's page
(``STUDENT.html#rule``); under them a row of how many students pass each rule: what the class as a whole
got wrong is what the teacher explains next. Self-contained, as the students' pages are.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, WARN
from velhanet.checks.page import COLOURS, pageStart
from velhanet.checks.runner import FAMILIES, Report, checksOf, ruleOf
from velhanet.i18n import _, ngettext, pgettext

SECTION = re.compile(r"^\s*# -- (.+?) -+\s*$")

RULE_GROUP = "rule group"
"""The catalogs' context of a section's name (``velhanet.i18nextract`` extracts the names in it)."""

SHORT = {PASS: "pass", FAIL: "FAIL", WARN: "warn", SKIP: "skip", NOT_RUN: "n/r"}
"""The verdicts in the matrix's cells: the verdict tokens, short (not translated, as PASS and FAIL are not)."""


@dataclass(frozen=True)
class Column:
    group: str
    anchor: str
    rule: str


def sectionName(line: str) -> str | None:
    """The name of the section a source line opens (``# -- robustness (may stop …) --``: ``robustness``), if any."""
    found = SECTION.match(line)
    return found.group(1).split("(")[0].strip() if found else None


def columnsOf(family: str) -> list[Column]:
    """The family's rules in run order, each with the section of the checks it is in (``# -- discovery --``;
    shown translated when the catalogs have its name)."""
    placed = []
    for test in checksOf(family):
        text, anchor = ruleOf(test)
        method = getattr(type(test), test._testMethodName, None)
        method = inspect.unwrap(method) if method is not None else None  # past @inlineCallbacks
        group, line = family, 0
        if method is not None:
            line = method.__code__.co_firstlineno
            lines, _ = inspect.getsourcelines(inspect.getmodule(method))  # type: ignore[arg-type]
            for source in reversed(lines[: line - 1]):
                name = sectionName(source)
                if name:
                    group = name
                    break
        placed.append((line, Column(group, anchor, text)))
    placed.sort(key=lambda pair: pair[0])  # as the checks are written, which is as the doc lists the rules
    columns = [column for _, column in placed]
    order = {name: index for index, name in enumerate(dict.fromkeys(column.group for column in columns))}
    return sorted(columns, key=lambda column: order[column.group])


def classPage(family: str, graded: list[tuple[str, Report]], title: str = "") -> str:
    """The matrix page; ``graded``: (student, report) pairs; each student's page is ``STUDENT.html``."""
    students = ngettext("{n} student", "{n} students", len(graded)).format(n=len(graded))
    title = title or f"velhanet-grade {family}: {students}"
    legend = _(
        "Each cell links to the rule in that student's page: the exchange on the wire, "
        "the original sentence, expected and observed, and the command that runs the check again."
    )
    parts = [*pageStart(title, STYLE), *classMatrix(family, graded, lambda student: quote(f"{student}.html"))]
    parts.append(f'<p class="small">{escape(legend)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def classMatrix(family: str, graded: list[tuple[str, Report]], pageOf: Callable[[str], str]) -> list[str]:
    """The matrix itself, a table in a scrolling ``div``: a row per student (sorted by name), a column per
    rule; ``pageOf(student)`` is the URL of the page each row's cells link into (``#rule``)."""
    assert family in FAMILIES
    columns = columnsOf(family)
    rows = sorted(graded, key=lambda pair: pair[0].casefold())
    groups: list[tuple[str, int]] = []
    for column in columns:
        if groups and groups[-1][0] == column.group:
            groups[-1] = (column.group, groups[-1][1] + 1)
        else:
            groups.append((column.group, 1))
    student, verdict = escape(_("student")), escape(_("verdict"))
    parts = [
        f'<div class="scroll"><table class="matrix"><thead><tr><th rowspan="2">{student}</th>',
        *(f'<th colspan="{span}" class="group">{escape(pgettext(RULE_GROUP, name))}</th>' for name, span in groups),
        f'<th rowspan="2">{verdict}</th></tr><tr>',
        *(f'<th class="rule" title="{escape(_(c.rule))}"><span>{escape(c.anchor)}</span></th>' for c in columns),
        "</tr></thead><tbody>",
    ]
    passing = dict.fromkeys((column.anchor for column in columns), 0)
    for student, report in rows:
        page = escape(pageOf(student))
        verdicts = {outcome.anchor: outcome for outcome in report.outcomes}
        cells = [f'<th class="student"><a href="{page}">{escape(student)}</a></th>']
        for column in columns:
            outcome = verdicts.get(column.anchor)
            if outcome is None:
                cells.append('<td class="none">—</td>')
                continue
            passing[column.anchor] += outcome.status == PASS
            colour = COLOURS.get(outcome.status, "#57606a")
            kept = outcome.keptOf()
            counted = f'<span class="kept">{kept[0]}/{kept[1]}</span>' if kept and kept[0] < kept[1] else ""
            cells.append(
                f'<td class="cell {outcome.status.lower().replace(" ", "-")}" style="background:{colour}" '
                f'title="{escape(column.anchor)}: {escape(outcome.reason or outcome.status)}">'
                f'<a href="{page}#{quote(column.anchor)}">{SHORT.get(outcome.status, outcome.status)}{counted}</a></td>'
            )
        cells.append(f'<td class="verdict">{escape(studentVerdict(report))}</td>')
        parts.append("<tr>" + "".join(cells) + "</tr>")
    passedBy = escape(_("passed by"))
    parts.append(f"</tbody><tfoot><tr><th>{passedBy}</th>")
    parts += [f'<td class="count">{passing[c.anchor]}/{len(rows)}</td>' for c in columns]
    parts.append("<td></td></tr></tfoot></table></div>")
    return parts


def studentVerdict(report: Report) -> str:
    """``pass`` or ``fail`` (verdict tokens, with the limit the program broke), or why it could not be tested."""
    if report.program is not None and report.program.brokeALimit:
        return f"fail: {report.program.cause}"
    if report.cannotTest:
        return _("cannot test: {reason}").format(reason=report.cannotTest)
    return "fail" if report.count(FAIL) else "pass"


MATRIX_STYLE = """
.scroll{overflow-x:auto}table.matrix{border-collapse:collapse}
table.matrix th,table.matrix td{border:1px solid #d0d7de;padding:.2rem .35rem;text-align:center}
th.group{background:#f6f8fa;font-size:.85rem}th.rule{vertical-align:bottom;height:9rem;font-weight:500;
font-size:.75rem}th.rule span{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
th.student{text-align:left;white-space:nowrap}td.cell a{color:#fff;text-decoration:none;font-size:.8rem;
display:block}td.cell .kept{display:block;font-size:.65rem}
td.verdict{text-align:left;font-size:.85rem;max-width:22rem}td.count{font-size:.8rem;
color:#57606a}tfoot th{text-align:left}
"""
"""The matrix's own style, which a page that embeds it (the class server's) adds to its own."""

STYLE = (
    """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:90rem;padding:1rem;
color:#1f2328}
h1{font-size:1.3rem}.small{color:#57606a;font-size:.85rem}
"""
    + MATRIX_STYLE
)
