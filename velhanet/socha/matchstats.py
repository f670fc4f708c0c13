"""The numbers of a match between two players: score, its 95 % confidence interval, Elo, significance.

Pure arithmetic, no I/O. The formulas are those of cutechess-cli and fastchess
(``Elo::Elo`` / ``Elo::diff`` / ``Elo::errorMargin``):

- ``n = W + L + D``, ``score = (W + D/2) / n``;
- the variance of one game's result under the trinomial model,
  ``var = w (1 - score)² + l (0 - score)² + d (½ - score)²`` with
  ``w, l, d`` the observed fractions of wins, losses and draws;
- the 95 % interval of the score by the normal approximation,
  ``score ± 1.959964 · sqrt(var / n)``;
- ``elo(s) = -400 · log10(1/s - 1)``, the Elo difference ``elo(score)`` and
  its margin ``(elo(high) - elo(low)) / 2``;
- the likelihood of superiority ``LOS = ½ (1 + erf((W - L) / sqrt(2 (W + L))))``.

The difference is *significant* at that ``n`` when the interval excludes ½.
When every game had the same result the interval is a single point, so then
the sign test decides instead (LOS above 97.5 % or below 2.5 %): 2 - 0 is not
significant, 6 - 0 is.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

from velhanet.i18n import N_, _, ngettext

Z95 = 1.959963984540054
"""The 97.5 % quantile of the standard normal distribution: a two-sided 95 % interval."""


def elo(score: float) -> float:
    """The Elo difference that predicts ``score`` (±infinity at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class MatchStats:
    """Wins, losses and draws of the first player against the second, and what they say."""

    wins: int
    losses: int
    draws: int

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        """The first player's points per game (a win 1, a draw ½); ½ with no game."""
        if self.games == 0:
            return 0.5
        return (self.wins + 0.5 * self.draws) / self.games

    @property
    def variance(self) -> float:
        """The variance of one game's result (trinomial, with the observed frequencies)."""
        n = self.games
        if n == 0:
            return 0.0
        s = self.score
        w, lo, d = self.wins / n, self.losses / n, self.draws / n
        return w * (1.0 - s) ** 2 + lo * (0.0 - s) ** 2 + d * (0.5 - s) ** 2

    @property
    def interval(self) -> tuple[float, float]:
        """The 95 % confidence interval of the score (not clipped; (0, 1) with no game)."""
        n = self.games
        if n == 0:
            return (0.0, 1.0)
        half = Z95 * math.sqrt(self.variance / n)
        return (self.score - half, self.score + half)

    @property
    def scoreMargin(self) -> float:
        low, high = self.interval
        return (high - low) / 2

    @property
    def elo(self) -> float:
        return elo(self.score)

    @property
    def eloMargin(self) -> float:
        """Half the width of the interval in Elo (infinite when a bound reaches 0 or 1)."""
        low, high = (elo(bound) for bound in self.interval)
        return math.inf if math.isinf(low) or math.isinf(high) else (high - low) / 2

    @property
    def los(self) -> float:
        """The likelihood that the first player is the stronger (½ without a decisive game)."""
        decisive = self.wins + self.losses
        if decisive == 0:
            return 0.5
        return 0.5 * (1.0 + math.erf((self.wins - self.losses) / math.sqrt(2.0 * decisive)))

    @property
    def significant(self) -> bool:
        """The interval excludes ½: at this number of games one player is stronger (95 %)."""
        if self.games == 0:
            return False
        if self.variance == 0.0:  # all wins, all losses or all draws: the interval is a point; a sign test
            return not 0.025 <= self.los <= 0.975
        low, high = self.interval
        return low > 0.5 or high < 0.5

    def verdict(self, first: str | None = None, second: str | None = None) -> str:
        """One sentence: which player is stronger, if the games say so (the players are "player 1" and "player 2"
        unless named)."""
        first, second = first or _("player 1"), second or _("player 2")
        n = self.games
        if n == 0:
            return _("no game was played")
        if not self.significant:
            return ngettext(
                "no significant difference after {n} game (0.5 lies in the interval at 95 %)",
                "no significant difference after {n} games (0.5 lies in the interval at 95 %)",
                n,
            ).format(n=n)
        better, worse = (first, second) if self.score > 0.5 else (second, first)
        return ngettext(
            "{better} is significantly stronger than {worse} (95 %, {n} game)",
            "{better} is significantly stronger than {worse} (95 %, {n} games)",
            n,
        ).format(better=better, worse=worse, n=n)

    def lines(self, first: str | None = None, second: str | None = None) -> list[str]:
        """The summary a person reads, cutechess style."""
        first, second = first or _("player 1"), second or _("player 2")
        low, high = self.interval
        return [
            _("Score of {first} vs {second}: {wins} - {losses} - {draws}  [{score:.3f}] {games}").format(
                first=first,
                second=second,
                wins=self.wins,
                losses=self.losses,
                draws=self.draws,
                score=self.score,
                games=self.games,
            ),
            _("Score: {score:.3f} ± {margin:.3f} (interval at 95 %: {low:.3f} .. {high:.3f})").format(
                score=self.score, margin=self.scoreMargin, low=max(low, 0), high=min(high, 1)
            ),
            _("Elo difference: {elo} +/- {margin}, LOS: {los:.1f} %, DrawRatio: {draws:.1f} %").format(
                elo=formatElo(self.elo),
                margin=formatElo(self.eloMargin, sign=False),
                los=100 * self.los,
                draws=100 * self.draws / max(self.games, 1),
            ),
            self.verdict(first, second),
        ]

    def asDict(self) -> dict[str, object]:
        low, high = self.interval
        return {
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "games": self.games,
            "score": self.score,
            "score_interval": [low, high],
            "elo": _finite(self.elo),
            "elo_margin": _finite(self.eloMargin),
            "los": self.los,
            "significant": self.significant,
        }


def formatElo(value: float, sign: bool = True) -> str:
    if math.isinf(value):
        return ("+inf" if value > 0 else "-inf") if sign else "inf"
    return f"{value + 0.0:.1f}" if round(value, 1) else "0.0"


def _finite(value: float) -> float | str:
    """JSON has no infinity: ``"inf"`` / ``"-inf"`` as strings."""
    return formatElo(value) if math.isinf(value) else value


# -- the games of a match (pure: velhanet.socha.match plays them) ---------------------------------

TEAMS = ("ONE", "TWO")


def sides(game: int) -> tuple[int, int]:
    """The players (0 or 1) of teams ONE and TWO in game ``game``: the start alternates."""
    return (0, 1) if game % 2 == 0 else (1, 0)


def gameSeed(seed: int, game: int) -> int:
    """Both games of a pair (2k, 2k+1) get the same seed, played from both sides."""
    return seed + game // 2


def pairedPositions(results: list[GameResult]) -> tuple[int, int]:
    """Of the pairs of games (2k, 2k+1) both played: how many shared their start position, how many did not."""
    positions = {r.game: r.position for r in results if r.position}
    same = different = 0
    for game, position in positions.items():
        if game % 2 == 0 and game + 1 in positions:
            if positions[game + 1] == position:
                same += 1
            else:
                different += 1
    return same, different


def commandLine(template: str, host: str, port: int, reservation: str, seed: int) -> list[str]:
    values = {"{host}": host, "{port}": str(port), "{reservation}": reservation, "{seed}": str(seed)}
    words = shlex.split(template)
    for placeholder, value in values.items():
        words = [word.replace(placeholder, value) for word in words]
    return words


@dataclass
class GameResult:
    """One game, from player 1's and player 2's point of view (players are 0 and 1)."""

    game: int
    teamOne: int
    winner: int | None = None
    """The player who won; None for a draw or a void game."""
    void: bool = False
    reason: str = ""
    lossKind: str = ""
    """``time``, ``rule``, ``limit`` (the sandbox stopped it), ``crash``, ``no-join``, ``deadline``,
    ``irregular`` or ``""`` (a regular end)."""
    moves: int = 0
    position: str = ""
    """The start position's fingerprint (the same for both games of a pair on a server that keeps seeds)."""
    answerTimes: list[list[float]] = field(default_factory=lambda: [[], []])
    notes: list[str] = field(default_factory=list)
    """What the sandbox saw that changes no result: ``p2: output cut at 1 MiB``, a process left running."""

    def pointsOf(self, player: int) -> float:
        return 0.5 if self.winner is None else float(self.winner == player)


def otherTeam(team: str) -> str:
    return TEAMS[1 - TEAMS.index(team)] if team in TEAMS else "TWO"


def statsOf(results: list[GameResult]) -> MatchStats:
    """Player 1's wins, losses and draws over the games that count."""
    counted = [r for r in results if not r.void]
    wins = sum(1 for r in counted if r.winner == 0)
    losses = sum(1 for r in counted if r.winner == 1)
    return MatchStats(wins, losses, len(counted) - wins - losses)


def summary(results: list[GameResult], commands: tuple[str, str], requested: int, interrupted: bool) -> dict[str, Any]:
    """The machine-readable summary (``summary.json``)."""
    stats = statsOf(results)
    players = []
    for player in (0, 1):
        games = [r for r in results if not r.void]
        times = [t for r in results for t in r.answerTimes[player]]
        losses: dict[str, int] = {}
        for r in games:
            if r.winner == 1 - player and r.lossKind:
                losses[r.lossKind] = losses.get(r.lossKind, 0) + 1
        players.append(
            {
                "command": commands[player],
                "as_team_one": _wld([r for r in games if r.teamOne == player], player),
                "as_team_two": _wld([r for r in games if r.teamOne != player], player),
                "irregular_losses": losses,
                "loss_reasons": sorted({r.reason for r in games if r.winner == 1 - player and r.lossKind}),
                "sandbox_notes": sorted({n[4:] for r in results for n in r.notes if n[:4] == f"p{player + 1}: "}),
                "average_answer_s": sum(times) / len(times) if times else None,
                "worst_answer_s": max(times) if times else None,
            }
        )
    return {
        "games_requested": requested,
        "games_played": len(results),
        "void_games": [{"game": r.game, "reason": r.reason} for r in results if r.void],
        "interrupted": interrupted,
        "stats_player1": stats.asDict(),
        "position_pairs": dict(zip(("same", "different"), pairedPositions(results), strict=True)),
        "players": players,
        "games": [asdict(r) for r in results],
    }


def _wld(results: list[GameResult], player: int) -> list[int]:
    wins = sum(1 for r in results if r.winner == player)
    losses = sum(1 for r in results if r.winner == 1 - player)
    return [wins, losses, len(results) - wins - losses]


LOSS_KINDS = {
    "time": N_("time"),
    "rule": N_("rule"),
    "limit": N_("limit"),
    "crash": N_("crash"),
    "no-join": N_("no-join"),
    "deadline": N_("deadline"),
    "irregular": N_("irregular"),
}
"""A ``lossKind`` as the report names it (``summary.json`` keeps the kind itself)."""


def report(data: dict[str, Any], results: list[GameResult]) -> list[str]:
    """What ``socha-match`` prints at the end: the match's numbers, each player's, the void games."""
    stats = statsOf(results)
    lines = ["", *stats.lines("p1", "p2")]
    for index, player in enumerate(data["players"]):
        one, two = player["as_team_one"], player["as_team_two"]
        lines.append(f"p{index + 1} ({player['command']}):")
        lines.append(
            _("  W/L/D starting (ONE) {one}, second (TWO) {two}").format(
                one="/".join(map(str, one)), two="/".join(map(str, two))
            )
        )
        kinds = ", ".join(
            f"{n} {_(LOSS_KINDS[kind]) if kind in LOSS_KINDS else kind}"
            for kind, n in sorted(player["irregular_losses"].items())
        )
        lines.append(_("  irregular losses: {kinds}").format(kinds=kinds or _("none")))
        lines.extend(_("    reason: {reason}").format(reason=reason) for reason in player["loss_reasons"])
        lines.extend(_("  sandbox: {note}").format(note=note) for note in player.get("sandbox_notes", []))
        if player["average_answer_s"] is not None:
            average, worst = player["average_answer_s"] * 1000, player["worst_answer_s"] * 1000
            lines.append(
                _("  answer time: average {average:.1f} ms, worst {worst:.1f} ms (as seen by an observer)").format(
                    average=average, worst=worst
                )
            )
    same, different = data["position_pairs"]["same"], data["position_pairs"]["different"]
    if different:
        lines.append(
            ngettext(
                "start positions: {different} of {pairs} pair of games had different ones "
                "(the server ignores <prepare seed>: sides were swapped, positions were not)",
                "start positions: {different} of {pairs} pairs of games had different ones "
                "(the server ignores <prepare seed>: sides were swapped, positions were not)",
                same + different,
            ).format(different=different, pairs=same + different)
        )
    elif same:
        lines.append(_("start positions: each of {same} played from both sides").format(same=same))
    lines.extend(
        _("game {game} void: {reason}").format(game=void["game"], reason=void["reason"]) for void in data["void_games"]
    )
    if data["interrupted"]:
        lines.append(
            ngettext(
                "interrupted: {played} of {requested} game",
                "interrupted: {played} of {requested} games",
                data["games_requested"],
            ).format(played=data["games_played"], requested=data["games_requested"])
        )
    return lines
