"""The standings of a league, from its database: ratings, score, W/D/L, head to head, losses by cause.

Only the games of each player's current version count (a changed
submission starts afresh; its older versions are named with how many games
they played). The ratings are one maximum-likelihood fit of all those games
(``ratings.fitRatings``); the head-to-head matrix gives each pairing's score
and whether it is significant (``socha.matchstats.MatchStats``: the 95 %
interval excludes ½). Losses by cause: ``time``, ``rule`` (an illegal move),
``crash`` (exited before the end), ``limit`` (the sandbox stopped it),
``no-join``, ``deadline``, and ``board`` (lost on the board, regularly).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from velhanet import i18n
from velhanet.i18n import N_
from velhanet.league.config import Player
from velhanet.league.ratings import Game, Rating, fitRatings
from velhanet.league.store import Store, asDict
from velhanet.socha.matchstats import MatchStats

CAUSES = ("board", "time", "rule", "crash", "limit", "no-join", "deadline", "irregular")
CAUSE_TERMS = {
    "board": N_("board"),
    "time": N_("time"),
    "rule": N_("rule"),
    "crash": N_("crash"),
    "limit": N_("limit"),
    "no-join": N_("no-join"),
    "deadline": N_("deadline"),
    "irregular": N_("irregular"),
}
"""The loss kinds as the text table names them: the database's own words in English (docs/league.md), the
language's for a reader of another (the CSV and JSON keep the database's)."""


@dataclass
class Line:
    name: str
    version: str
    rating: Rating = field(default_factory=lambda: Rating(0.0, math.inf))
    wins: int = 0
    draws: int = 0
    losses: int = 0
    lossesBy: dict[str, int] = field(default_factory=dict)
    olderVersions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else 0.5


@dataclass
class Standings:
    lines: list[Line]
    headToHead: dict[tuple[str, str], MatchStats]
    games: int
    scheduled: int
    voids: int


def countedGames(store: Store, players: Sequence[Player]) -> list[dict[str, Any]]:
    """The finished games (not void) between the players' current versions."""
    current = {p.name: p.version for p in players}
    return [
        asDict(row)
        for row in store.games("done")
        if current.get(row["a"]) == row["a_version"] and current.get(row["b"]) == row["b_version"]
    ]


def standingsOf(store: Store, players: Sequence[Player]) -> Standings:
    index = {p.name: i for i, p in enumerate(players)}
    lines = [Line(p.name, p.version) for p in players]
    games = countedGames(store, players)
    pairings: dict[tuple[str, str], list[int]] = {}
    for game in games:
        a, b, score = game["a"], game["b"], game["score"]
        for name, points in ((a, score), (b, 1 - score)):
            line = lines[index[name]]
            if points == 1:
                line.wins += 1
            elif points == 0:
                line.losses += 1
                cause = game["loss_kind"] or "board"
                line.lossesBy[cause] = line.lossesBy.get(cause, 0) + 1
            else:
                line.draws += 1
        record = pairings.setdefault((a, b), [0, 0, 0])
        record[0 if score == 1 else 1 if score == 0 else 2] += 1
    ratings = fitRatings(len(players), (Game(index[g["a"]], index[g["b"]], g["score"]) for g in games))
    for line, rating in zip(lines, ratings, strict=True):
        line.rating = rating
    for name, versions in store.versions().items():
        if name in index:
            played = {v: 0 for v, _ in versions}
            for row in store.games("done"):
                for who, version in ((row["a"], row["a_version"]), (row["b"], row["b_version"])):
                    if who == name and version in played:
                        played[version] += 1
            lines[index[name]].olderVersions = [(v, n) for v, n in played.items() if v != lines[index[name]].version]
    counts = store.counts()
    lines.sort(key=lambda line: (-line.rating.elo, line.name))
    headToHead = {pair: MatchStats(won, lost, drawn) for pair, (won, lost, drawn) in pairings.items()}
    return Standings(lines, headToHead, len(games), counts.get("scheduled", 0), counts.get("void", 0))


def _margin(rating: Rating) -> str:
    return "±inf" if math.isinf(rating.margin) else f"±{rating.margin:.0f}"


def asText(standings: Standings, language: i18n.Language | None = None) -> str:
    """The standings as a table of text, in ``language`` (the process's by default)."""
    texts = language or i18n.current()
    gettext = texts.gettext
    header = ["#", gettext("player"), gettext("version"), "Elo", "95 %", gettext("games"), gettext("score")]
    rows = [[*header, gettext("W"), gettext("D"), gettext("L"), gettext("losses by cause")]]
    for rank, line in enumerate(standings.lines, 1):
        causes = ", ".join(
            f"{n} {gettext(CAUSE_TERMS.get(cause, cause))}" for cause, n in sorted(line.lossesBy.items())
        )
        elo = eloText(line.rating, texts)
        rows.append(
            [
                str(rank),
                line.name,
                line.version,
                elo,
                _margin(line.rating),
                str(line.games),
                f"{100 * line.score:.1f} %",
                str(line.wins),
                str(line.draws),
                str(line.losses),
                causes or "-",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in rows
    ]
    text.append("")
    text.append(gettext("head to head (row's score against column; * significant at 95 %):"))
    names = [line.name for line in standings.lines]
    cell = max(8, max(len(n) for n in names) + 1)
    text.append(" " * cell + "".join(n.rjust(cell) for n in names))
    for row in names:
        cells = []
        for column in names:
            stats = _between(standings, row, column)
            cells.append(
                "-".rjust(cell)
                if stats is None
                else f"{stats.score:.2f}{'*' if stats.significant else ' '}".rjust(cell)
            )
        text.append(row.ljust(cell) + "".join(cells))
    older = [olderVersionsText(line, texts, lambda version: version) for line in standings.lines if line.olderVersions]
    text += ["", *older] if older else []
    text.append("")
    text.append(summaryText(standings, texts))
    return "\n".join(text)


def olderVersionsText(line: Line, language: i18n.Language, shown: Callable[[str], str]) -> str:
    """``ana: 2 older versions not counted: 3f2a9c1d0e4b (12 games), …``; ``shown`` writes a version (the page
    marks it up)."""
    count = len(line.olderVersions)
    versions = ", ".join(
        language.ngettext("{version} ({n} game)", "{version} ({n} games)", games).format(
            version=shown(version), n=games
        )
        for version, games in line.olderVersions
    )
    return language.ngettext(
        "{name}: {n} older version not counted: {versions}", "{name}: {n} older versions not counted: {versions}", count
    ).format(name=line.name, n=count, versions=versions)


def summaryText(standings: Standings, language: i18n.Language) -> str:
    """``12 games counted, 0 still to play, 0 void``: the text table's last line, the page's first."""
    return language.ngettext(
        "{n} game counted, {scheduled} still to play, {voids} void",
        "{n} games counted, {scheduled} still to play, {voids} void",
        standings.games,
    ).format(n=standings.games, scheduled=standings.scheduled, voids=standings.voids)


def eloText(rating: Rating, language: i18n.Language | None = None) -> str:
    """A rating as the text table prints it (signed, whole, said when clipped): the web page says the same."""
    elo = f"{rating.elo:+.0f}"
    return (language or i18n.current()).gettext("{elo} (clipped)").format(elo=elo) if rating.clipped else elo


def intervalText(rating: Rating, language: i18n.Language | None = None) -> str:
    """The fit's 95 % interval, half-width then bounds (``±338 (+274 to +950)``): a reader compares two
    players by their bounds, and needs no arithmetic to do so. ``±inf`` when the fit has no finite one."""
    if math.isinf(rating.margin):
        return _margin(rating)
    return (
        (language or i18n.current())
        .gettext("{margin} ({low} to {high})")
        .format(
            margin=_margin(rating), low=f"{rating.elo - rating.margin:+.0f}", high=f"{rating.elo + rating.margin:+.0f}"
        )
    )


def scoreBetween(standings: Standings, row: str, column: str) -> MatchStats | None:
    """``row``'s record against ``column`` (None for a player against itself, or a pairing not played yet)."""
    return _between(standings, row, column)


def _between(standings: Standings, row: str, column: str) -> MatchStats | None:
    if row == column:
        return None
    if (row, column) in standings.headToHead:
        return standings.headToHead[(row, column)]
    if (column, row) in standings.headToHead:
        stats = standings.headToHead[(column, row)]
        return MatchStats(stats.losses, stats.wins, stats.draws)
    return None


def asCsv(standings: Standings) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "rank",
            "player",
            "version",
            "elo",
            "elo_95_margin",
            "games",
            "score",
            "wins",
            "draws",
            "losses",
            *(f"losses_{c}" for c in CAUSES),
        ]
    )
    for rank, line in enumerate(standings.lines, 1):
        margin = "" if math.isinf(line.rating.margin) else f"{line.rating.margin:.1f}"
        writer.writerow(
            [
                rank,
                line.name,
                line.version,
                f"{line.rating.elo:.1f}",
                margin,
                line.games,
                f"{line.score:.4f}",
                line.wins,
                line.draws,
                line.losses,
                *(line.lossesBy.get(c, 0) for c in CAUSES),
            ]
        )
    return out.getvalue()


def asJson(standings: Standings) -> str:
    return json.dumps(
        {
            "players": [
                {
                    "rank": rank,
                    "name": line.name,
                    "version": line.version,
                    "elo": line.rating.elo,
                    "elo_95_margin": None if math.isinf(line.rating.margin) else line.rating.margin,
                    "clipped": line.rating.clipped,
                    "games": line.games,
                    "score": line.score,
                    "wins": line.wins,
                    "draws": line.draws,
                    "losses": line.losses,
                    "losses_by_cause": line.lossesBy,
                    "older_versions": [{"version": v, "games": n} for v, n in line.olderVersions],
                }
                for rank, line in enumerate(standings.lines, 1)
            ],
            "head_to_head": [
                {"a": a, "b": b, **stats.asDict()} for (a, b), stats in sorted(standings.headToHead.items())
            ],
            "games": standings.games,
            "scheduled": standings.scheduled,
            "void": standings.voids,
        },
        indent=2,
    )
