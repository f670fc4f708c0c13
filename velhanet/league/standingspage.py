"""The league's two pages as HTML: the standings (``/``) and the games (``/games``, one player's or all).

Strings from what the database says (``standings.standingsOf`` and the rows
of ``Store.games``), no Twisted and no request: each page is tested as text,
and the site (``league.site``) only reads the database and serves. As every
page of velhanet, self-contained (styles inline, no script, nothing from
elsewhere) and every name, version and reason a player's program chose
escaped with ``html.escape``, never markup. The ratings and their intervals
are the fit's (``ratings.fitRatings`` through ``standingsOf``), printed by
the same functions as the text table, never recomputed here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from velhanet import i18n
from velhanet.i18n import N_
from velhanet.league.standings import (
    CAUSES,
    Line,
    Standings,
    eloText,
    intervalText,
    olderVersionsText,
    scoreBetween,
    summaryText,
)

REFRESH = 5
"""Seconds between two reloads of a page while a run plays: a game ends every few seconds on a cluster,
and a reload reads the database afresh (no event stream to hold open per spectator)."""

CAUSE_WORDS = {
    "board": N_("on the board"),
    "time": N_("time"),
    "rule": N_("illegal move"),
    "crash": N_("crash"),
    "limit": N_("sandbox limit"),
    "no-join": N_("never joined"),
    "deadline": N_("game too long"),
    "irregular": N_("irregular end"),
}
"""The database's loss kinds (``Outcome.lossKind``; empty for a regular loss) in a class's words (translated
where a page shows them)."""


def _language(language: i18n.Language | None) -> i18n.Language:
    return language if language is not None else i18n.current()


STYLE = """
:root{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;font-size:18px;color:#1f2328;background:#fafafa}
body{margin:0 auto;max-width:80rem;padding:.5rem 1rem;line-height:1.35}
h1{font-size:1.5rem;margin:.3rem 0}h2{font-size:1.1rem;margin:1rem 0 .3rem}
a{color:#0645ad}nav,.small{color:#57606a;font-size:.85rem}nav a{margin-right:.8rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
th,td{text-align:left;padding:.3rem .45rem;border-bottom:1px solid #d0d7de;vertical-align:top}
th{background:#f0f2f4;font-size:.8rem}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8rem;overflow-wrap:anywhere}
td.player{font-weight:600}td.interval{white-space:nowrap;font-variant-numeric:tabular-nums}
tr.playing td{background:#eef8ee}td.why{overflow-wrap:anywhere}.scroll{overflow-x:auto}
td.significant{font-weight:700}table.head-to-head{width:auto}.head-to-head td{min-width:4rem}
td.version code,span.who{white-space:nowrap}
@media (max-width:700px){:root{font-size:15px}.wide{display:none}}
"""


def causeWord(cause: str, language: i18n.Language | None = None) -> str:
    """A loss kind in a class's words (an unknown one as the database says it)."""
    return _language(language).gettext(CAUSE_WORDS[cause]) if cause in CAUSE_WORDS else cause


def causesText(lossesBy: Mapping[str, int], language: i18n.Language | None = None) -> str:
    """``time 2, crash 1, illegal move 1``: the most frequent cause first (ties in ``CAUSES``' order)."""
    order = {cause: index for index, cause in enumerate(CAUSES)}
    ranked = sorted(lossesBy.items(), key=lambda item: (-item[1], order.get(item[0], len(order)), item[0]))
    return ", ".join(f"{causeWord(cause, language)} {count}" for cause, count in ranked) or "–"


def gamesHref(player: str | None = None) -> str:
    """The list of games, of one player when named (the name quoted: it is the student's folder name)."""
    return "/games" if player is None else "/games?player=" + quote(player, safe="")


def _page(title: str, refresh: bool, body: Iterable[str], language: i18n.Language) -> str:
    code = language.tag
    head = [
        "<!DOCTYPE html>",
        f'<html lang="{code}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        *([f'<meta http-equiv="refresh" content="{REFRESH}">'] if refresh else []),
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
    ]
    return "\n".join([*head, *body, "</body></html>"]) + "\n"


def _nav(running: bool, here: str, language: i18n.Language) -> str:
    gettext = language.gettext
    links = [("/", gettext("standings")), ("/games", gettext("every game"))]
    if running:
        links.append(("/live", gettext("the games being played")))
    links.append(("/standings.json", "JSON"))
    shown = [f'<a href="{href}">{escape(words)}</a>' for href, words in links if href != here]
    note = " · " + gettext("reloads every {seconds} s while the league runs").format(seconds=REFRESH) if running else ""
    return f"<nav>{''.join(shown)}{escape(note)}</nav>"


def _points(line: Line) -> str:
    points = line.wins + line.draws / 2
    return f"{points:g} ({100 * line.score:.1f} %)"


def _playerRow(rank: int, line: Line, language: i18n.Language) -> str:
    older = (
        f'<br><span class="small">{olderVersionsText(escapedLine(line), language, _code)}</span>'
        if line.olderVersions
        else ""
    )
    cells = [
        f'<td class="n">{rank}</td>',
        f'<td class="player"><a href="{escape(gamesHref(line.name))}">{escape(line.name)}</a></td>',
        f'<td class="version"><code>{escape(line.version)}</code>{older}</td>',
        f'<td class="n">{line.games}</td>',
        f'<td class="n">{_points(line)}</td>',
        f'<td class="n wide">{line.wins}</td><td class="n wide">{line.draws}</td><td class="n wide">{line.losses}</td>',
        f'<td class="n">{escape(eloText(line.rating, language))}</td>',
        f'<td class="interval">{escape(intervalText(line.rating, language))}</td>',
        f'<td class="causes">{escape(causesText(line.lossesBy, language))}</td>',
    ]
    return f'<tr data-player="{escape(line.name)}">{"".join(cells)}</tr>'


def _code(version: str) -> str:
    return f"<code>{version}</code>"


def escapedLine(line: Line) -> Line:
    """A line whose name and versions are escaped, for a text made of them to be markup as it is."""
    return dataclasses.replace(
        line, name=escape(line.name), olderVersions=[(escape(v), n) for v, n in line.olderVersions]
    )


def _headToHead(standings: Standings, language: i18n.Language) -> list[str]:
    names = [line.name for line in standings.lines]
    if len(names) < 2:
        return []
    rows = ["<tr><th></th>" + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"]
    for row in names:
        cells = []
        for column in names:
            stats = scoreBetween(standings, row, column)
            if stats is None:
                cells.append('<td class="n">–</td>')
                continue
            mark, cls = ("*", "n significant") if stats.significant else ("", "n")
            said = language.gettext("{won} won, {drawn} drawn, {lost} lost").format(
                won=stats.wins, drawn=stats.draws, lost=stats.losses
            )
            cells.append(f'<td class="{cls}" title="{escape(said)}">{stats.score:.2f}{mark}</td>')
        rows.append(f"<tr><th>{escape(row)}</th>{''.join(cells)}</tr>")
    heading = escape(language.gettext("Head to head"))
    return [
        f"<h2>{heading}</h2>",
        '<p class="small">'
        + escape(language.gettext("the row's score against the column; * where its interval (95 %) excludes one half"))
        + "</p>",
        f'<div class="scroll"><table class="head-to-head">{"".join(rows)}</table></div>',
    ]


def _headings(words: Sequence[str], wide: Iterable[int] = ()) -> str:
    """A table's heading row; the columns at the indexes ``wide`` are left out on a narrow screen."""
    hidden = set(wide)
    cells = (
        f'<th class="wide">{escape(w)}</th>' if i in hidden else f"<th>{escape(w)}</th>" for i, w in enumerate(words)
    )
    return f"<tr>{''.join(cells)}</tr>"


def standingsPage(title: str, standings: Standings, running: bool, language: i18n.Language | None = None) -> str:
    """``/``: one row per player, best rating first; ``running``: the page reloads itself while games are played.
    In ``language`` (the process's by default)."""
    texts = _language(language)
    gettext = texts.gettext
    header = _headings(
        [
            "#",
            gettext("player"),
            gettext("version"),
            gettext("games"),
            gettext("points (score)"),
            gettext("W"),
            gettext("D"),
            gettext("L"),
            "Elo",
            gettext("interval (95 %)"),
            gettext("losses by cause"),
        ],
        (5, 6, 7),
    )
    rows = [_playerRow(rank, line, texts) for rank, line in enumerate(standings.lines, 1)]
    explained = gettext(
        "Elo: one maximum-likelihood fit of every counted game, the average player at 0; the interval holds the "
        "rating with a confidence of 95 %. Only each player's current version counts. Follow a name for that "
        "player's games, each replayable."
    )
    body = [
        f"<h1>{escape(title)}</h1>",
        _nav(running, "/", texts),
        f'<p class="summary">{escape(summaryText(standings, texts))}</p>',
        f'<div class="scroll"><table id="standings"><thead>{header}</thead>',
        f"<tbody>{''.join(rows)}</tbody></table></div>",
        f'<p class="small">{escape(explained)}</p>',
        *_headToHead(standings, texts),
    ]
    return _page(gettext("{league}: standings").format(league=title), running, body, texts)


def _player(name: str, version: str) -> str:
    link = f'<a href="{escape(gamesHref(name))}">{escape(name)}</a>'
    return f'<span class="who">{link} <code class="small">{escape(version)}</code></span>'


def _outcome(row: Mapping[str, Any], language: i18n.Language) -> tuple[str, str]:
    """(the result, how it came): ``ana won`` and ``bo: time — …``, a draw, a void game, or one being played.
    The reason is the game's, as it was recorded (in the language of the run that played it)."""
    gettext = language.gettext
    reason = escape(row["reason"] or "")
    if row["state"] == "scheduled":
        return escape(gettext("playing")), ""
    if row["state"] == "void":
        return escape(gettext("void")), reason
    if row["winner"] is None:
        return escape(gettext("draw")), reason
    cause = causeWord(row["loss_kind"] or "board", language)
    how = f"{escape(row['loser'])}: {escape(cause)}" + (f' <span class="small">— {reason}</span>' if reason else "")
    return escape(gettext("{player} won").format(player=row["winner"])), how


def gamesPage(
    title: str,
    rows: Sequence[Mapping[str, Any]],
    player: str | None,
    watch: Callable[[Mapping[str, Any]], tuple[str, str] | None],
    running: bool,
    language: i18n.Language | None = None,
) -> str:
    """``/games``: the games finished or being played (rows of ``Store.games``), those of ``player`` if named,
    the ones being played first, then the latest finished; ``watch(row)`` is a game's page on this site
    and what to call it (``replay``, ``watch``: translated here), None while its log is not read yet."""
    texts = _language(language)
    gettext = texts.gettext
    shown = [row for row in rows if player is None or player in (row["a"], row["b"])]
    shown.sort(key=lambda row: (row["state"] != "scheduled", -(row["finished"] or 0.0), -row["id"]))
    lines = []
    for row in shown:
        result, how = _outcome(row, texts)
        link = watch(row)
        href = f'<a href="{escape(link[0])}">{escape(gettext(link[1]))}</a>' if link is not None else ""
        seconds = "" if row["seconds"] is None else f"{row['seconds']:.1f}"
        lines.append(
            f'<tr class="{"playing" if row["state"] == "scheduled" else escape(row["state"])}" data-game="{row["id"]}">'
            f'<td class="n">{row["id"]}</td><td>{_player(row["a"], row["a_version"])} – '
            f'{_player(row["b"], row["b_version"])}</td><td>{result}</td><td class="why">{how}</td>'
            f'<td class="n">{row["moves"] if row["moves"] is not None else ""}</td>'
            f'<td class="n wide">{seconds}</td><td>{href}</td></tr>'
        )
    whose = (
        gettext("{league}: the games of {player}").format(league=title, player=player)
        if player is not None
        else gettext("{league}: the games").format(league=title)
    )
    header = _headings(
        [
            "#",
            gettext("players"),
            gettext("result"),
            gettext("how it ended"),
            gettext("moves"),
            gettext("seconds"),
            gettext("page"),
        ],
        (5,),
    )
    count = texts.ngettext("{n} game", "{n} games", len(shown)).format(n=len(shown))
    everyone = escape(gettext("every player's"))
    every = f' · <a href="{gamesHref()}">{everyone}</a>' if player is not None else ""
    body = [
        f"<h1>{escape(whose)}</h1>",
        _nav(running, "/games" if player is None else "", texts),
        f'<p class="summary">{escape(count)}{every}</p>',
        f'<div class="scroll"><table id="games"><thead>{header}</thead><tbody>{"".join(lines)}</tbody></table></div>',
    ]
    return _page(whose, running, body, texts)
