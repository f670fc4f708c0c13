"""``velhanet-check … --html FILE``: the report as one self-contained page a student reads offline or on a phone.

The summary, then one section per rule, FAILs first, then WARNs (``id`` = the rule's id, so a class
matrix links to it): its verdict's colour, velhanet's rule and its paragraph in ``docs/``, the original
sentence in the text's own language, expected and observed, the command that runs the check again, and
the exchange as a table: time offset, what was sent and what was received in two columns, the bytes
with their decoded meaning beside them. No script, no external file, no network: styles are inline.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, VERDICTS, WARN
from velhanet.checks.exchange import EVENT, SENT, Exchange, ExchangeLine
from velhanet.checks.runner import Outcome, Report, summary, verdictCount
from velhanet.i18n import N_, _, current, ngettext

COLOURS = {PASS: "#1a7f37", FAIL: "#cf222e", WARN: "#9a6700", SKIP: "#57606a", NOT_RUN: "#6e7781"}


LANGUAGE_NAMES = {"pt": N_("Portuguese"), "es": N_("Spanish"), "de": N_("German"), "en": N_("English")}
"""The original texts' languages, as a report names them."""


def languageName(code: str) -> str:
    return _(LANGUAGE_NAMES[code]) if code in LANGUAGE_NAMES else code


SANDBOX_RULE = N_("the program stays within its sandbox's limits")
"""The rule a program started by velhanet breaks when its sandbox stops it."""


def notTested(reason: str) -> str:
    """Why nothing was checked, as every report says it."""
    return _("cannot test: {reason}").format(reason=reason)


def ruleText(outcome: Outcome) -> str:
    """The rule, in the language the report is read in (the runner gives it so; a report kept from an earlier
    run, ``grades.db``, may hold it in English)."""
    return _(outcome.rule) if outcome.rule else outcome.rule


def expectedText(outcome: Outcome) -> str:
    """What was expected: the check's own words, or the rule (translated) when the message does not say."""
    expected = outcome.expected
    return ruleText(outcome) if expected == outcome.rule else expected


def markup(message: str, **values: str) -> str:
    """A translated text in a page: escaped, then ``values`` (HTML already) put in its ``{placeholders}``."""
    return escape(message).format(**values)


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:70rem;padding:1rem;
color:#1f2328;line-height:1.4}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.05rem;margin:0 0 .3rem}
.counts span{display:inline-block;margin:.2rem .6rem .2rem 0;padding:.1rem .5rem;border-radius:.3rem;color:#fff}
section.rule{border:1px solid #d0d7de;border-left:.5rem solid var(--c);border-radius:.4rem;margin:.8rem 0;
padding:.6rem .8rem}
.verdict{color:#fff;background:var(--c);border-radius:.3rem;padding:.05rem .45rem;font-size:.85rem;
margin-right:.4rem}
.ref,.small{color:#57606a;font-size:.85rem}
blockquote{margin:.4rem 0;padding:.2rem .7rem;border-left:.25rem solid #d0d7de;color:#24292f;font-style:italic}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.4rem 0}dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
code,pre,td.raw{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.82rem}
pre{background:#f6f8fa;padding:.4rem;border-radius:.3rem;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
th,td{border:1px solid #d0d7de;padding:.15rem .35rem;vertical-align:top;text-align:left}
th{background:#f6f8fa;font-size:.8rem}td.at{text-align:right;white-space:nowrap;color:#57606a;font-size:.8rem}
td.raw{overflow-wrap:anywhere;min-width:8rem}td.event{color:#57606a;font-style:italic}
.meaning{display:block;color:#0550ae;font-family:system-ui,sans-serif;font-size:.8rem}
.sent{background:#fff8f0}.received{background:#f0f7ff}
.evidence{border-top:1px dashed #d0d7de;margin-top:.5rem;padding-top:.3rem}h3{font-size:.95rem;margin:.2rem 0}
"""


def htmlReport(report: Report, program: str = "", facts: Sequence[tuple[str, str]] = ()) -> str:
    """The whole page; ``program``: what the program printed, ``facts``: the version graded and what changed
    since the last (a student's page under ``velhanet-grade``)."""
    title = f"velhanet-check {report.family}: {report.target}"
    parts = pageStart(title, STYLE)
    if facts:
        parts.append('<dl class="facts">')
        parts += [f"<dt>{escape(name)}</dt><dd>{escape(value)}</dd>" for name, value in facts]
        parts.append("</dl>")
    if report.cannotTest:
        cannot = markup(_("cannot test: {reason}; nothing was graded"), reason=escape(report.cannotTest))
        parts.append(f'<p class="cannot">{cannot}</p>')
    else:
        counts = "".join(
            f'<span style="background:{COLOURS[status]}">{escape(verdictCount(status, report.count(status)))}</span>'
            for status in VERDICTS
        )
        parts.append(f'<p class="summary">{escape(summary(report))}</p><p class="counts">{counts}</p>')
    verdict = report.program
    if verdict is not None:
        heading, broken, noted, sandbox = map(escape, (_("The program"), _("limit broken"), _("note"), _("sandbox")))
        parts.append(f'<section class="program"><h2>{heading}</h2><dl>')
        if verdict.cause:
            parts.append(f"<dt>{broken}</dt><dd>{escape(verdict.cause)}</dd>")
        parts += [f"<dt>{noted}</dt><dd>{escape(note)}</dd>" for note in verdict.notes()]
        parts.append(f"<dt>{sandbox}</dt><dd>{escape(verdict.enforcement)}</dd></dl></section>")
    first = {FAIL: 0, WARN: 1, NOT_RUN: 2, SKIP: 3, PASS: 4}  # what to fix first, first
    parts += [ruleSection(o) for o in sorted(report.outcomes, key=lambda outcome: first.get(outcome.status, 5))]
    if program:
        printed = escape(_("What the program printed"))
        parts.append(f'<section class="output"><h2>{printed}</h2><pre>{escape(program)}</pre></section>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def pageStart(title: str, style: str) -> list[str]:
    """The head of a self-contained page (its styles inline, readable on a phone) and its heading, in the
    language this process speaks."""
    return [
        "<!DOCTYPE html>",
        f'<html lang="{current().tag}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{style}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]


def ruleSection(outcome: Outcome) -> str:
    colour = COLOURS.get(outcome.status, "#57606a")
    reference = markup(_("velhanet's rule: {reference}"), reference=f"<code>{escape(outcome.reference)}</code>")
    parts = [
        f'<section class="rule {outcome.status.lower().replace(" ", "-")}" id="{escape(outcome.anchor)}" '
        f'style="--c:{colour}">',
        f'<h2><span class="verdict">{escape(outcome.status)}</span>{escape(ruleText(outcome))}</h2>',
        f'<div class="ref">{escape(outcome.anchor)} · {reference}</div>',
    ]
    original = outcome.original
    if original is not None:
        spec = f"<code>{escape(original.spec)}</code>"
        said = markup(
            _("the original text ({language}, {spec})"), language=escape(languageName(original.language)), spec=spec
        )
        if original.decision:
            decision = f"<code>{escape(original.decisionReference)}</code>"
            said += markup(_("; the rule is velhanet's reading of it: {reference}"), reference=decision)
        parts.append(
            f'<blockquote lang="{escape(original.language)}">{escape(original.sentence)}</blockquote>'
            f'<div class="small">{said}</div>'
        )
    facts = []
    if outcome.status in (FAIL, WARN):
        facts += [(_("expected"), expectedText(outcome)), (_("observed"), outcome.observed)]
    elif outcome.reason:
        facts.append((_("why"), outcome.reason))
    if outcome.status in (FAIL, WARN) and outcome.expected == outcome.rule and outcome.reason != outcome.observed:
        facts.append((_("message"), outcome.reason))
    if outcome.runs:
        facts.append((_("runs"), outcome.tally()))
    if outcome.sighted is not None:
        facts.append((_("seen"), sightedText(outcome)))
    if outcome.reproduce and outcome.status in (FAIL, WARN):
        facts.append((_("run it again"), outcome.reproduce))
    if facts:
        parts.append("<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts) + "</dl>")
    parts.append(exchangeTable(outcome.exchange))
    for more in outcome.evidence:
        colour = COLOURS.get(more.status, "#57606a")
        parts.append(
            f'<div class="evidence"><h3><span class="verdict" style="background:{colour}">{escape(more.status)}'
            f"</span>{escape(more.where)}</h3><p>{escape(more.reason)}</p>{exchangeTable(more.exchange)}</div>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def sightedText(outcome: Outcome) -> str:
    """``kept 12 of the 13 times it was seen (its own check and the set-ups of the others)``."""
    kept, seen = outcome.sighted or (0, 0)
    return ngettext(
        "kept {kept} of the {seen} time it was seen (its own check and the set-ups of other checks)",
        "kept {kept} of the {seen} times it was seen (its own check and the set-ups of other checks)",
        seen,
    ).format(kept=kept, seen=seen)


def exchangeTable(exchange: Exchange) -> str:
    lines = exchange.lines
    if not lines:
        nothing = escape(_("nothing was exchanged in this check"))
        return f'<p class="small">{nothing}</p>'
    rows = []
    for index, line in enumerate(lines):
        if exchange.leftOut and index == len(exchange.head):
            leftOut = exchange.leftOut
            said = ngettext("… {n} line left out …", "… {n} lines left out …", leftOut).format(n=leftOut)
            rows.append(f'<tr><td colspan="4" class="event">{escape(said)}</td></tr>')
        rows.append(exchangeRow(line))
    headings = (_("ms"), _("channel"), _("sent by the checker"), _("received from the program"))
    return (
        '<div class="scroll"><table class="exchange"><thead><tr>'
        + "".join(f"<th>{escape(heading)}</th>" for heading in headings)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def exchangeRow(line: ExchangeLine) -> str:
    at = f'<td class="at">{line.at:+d}</td><td class="small">{escape(line.channel)}</td>'
    if line.kind == EVENT:
        return f'<tr>{at}<td colspan="2" class="event">{escape(line.meaning)}</td></tr>'
    cell = f'<td class="raw">{escape(line.raw)}<span class="meaning">{escape(line.meaning)}</span></td>'
    if line.kind == SENT:
        return f'<tr class="sent">{at}{cell}<td></td></tr>'
    return f'<tr class="received">{at}<td></td>{cell}</tr>'
