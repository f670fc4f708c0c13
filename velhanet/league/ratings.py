"""A league's numbers: ratings from one maximum-likelihood fit of all games, and the sequential test.

Pure arithmetic, no I/O.

**Ratings** (as Ordo and BayesElo do for engine tournaments): the logistic
Elo model, ``P(i beats j) = 1 / (1 + 10^((Rj - Ri) / 400))``, a draw counted
as half a win and half a loss, fitted by maximum likelihood over every game at
once (Newton's method on the log-likelihood, the mean rating fixed at 0). At
the maximum each player's expected score equals its real score. The 95 %
interval of each rating is ``±1.96`` standard errors from the inverse of the
observed information (the curvature of the log-likelihood), with the same
constraint. A weak prior, one virtual draw of each player against an average
one (``PRIOR``; BayesElo's default is two), keeps the rating of a player who
won or lost every game finite; ``prior=0`` is the pure fit, in which such a
player has no finite maximum and is clipped at ±``CLIP``, and said to be.

**SPRT** on game pairs, as fishtest (``server/fishtest/stats/LLRcalc.py``,
``LLR_logistic``): the results are the pentanomial counts of pairs (0, ½, 1,
1½, 2 points of the first player in a pair of games from one start position),
zero counts regularised to 0.001, and the generalized log-likelihood ratio of
``elo1`` against ``elo0`` is ``N · Σ p̂ᵢ log(p₁ᵢ / p₀ᵢ)`` where ``p₀``, ``p₁`` are
the maximum-likelihood distributions with expected score ``L(elo0)``,
``L(elo1)`` (each from a secular equation, solved here by bisection). The test
stops at ``log(β/(1-α))`` (H0 accepted) or ``log((1-β)/α)`` (H1 accepted).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from velhanet.socha.matchstats import Z95

ELO_PER_NATURAL = 400.0 / math.log(10.0)
CLIP = 800.0
"""Ratings are kept within ±800 of the mean: a player who won (or lost) everything has no finite maximum."""


@dataclass(frozen=True)
class Game:
    """One game between two players (indexes), scored for the first: 1 a win, ½ a draw, 0 a loss."""

    first: int
    second: int
    score: float


@dataclass(frozen=True)
class Rating:
    elo: float
    margin: float
    """Half the 95 % interval (infinite for a player without a finite maximum)."""
    clipped: bool = False


def expected(difference: float) -> float:
    """The expected score of a player ``difference`` Elo above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-difference / 400.0))


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a few dozen players: no library needed)."""
    n = len(vector)
    rows = [[*row[:], value] for row, value in zip(matrix, vector, strict=True)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        if abs(rows[column][column]) < 1e-12:
            raise ZeroDivisionError("singular")
        for r in range(column + 1, n):
            factor = rows[r][column] / rows[column][column]
            for c in range(column, n + 1):
                rows[r][c] -= factor * rows[column][c]
    solution = [0.0] * n
    for r in range(n - 1, -1, -1):
        solution[r] = (rows[r][n] - sum(rows[r][c] * solution[c] for c in range(r + 1, n))) / rows[r][r]
    return solution


def _gradientAndInformation(
    games: Sequence[Game], thetas: list[float], prior: float
) -> tuple[list[float], list[list[float]]]:
    n = len(thetas)
    gradient = [0.0] * n
    information = [[0.0] * n for _ in range(n)]
    for player in range(n):  # ``prior`` virtual draws against an opponent rated 0
        q = 1.0 / (1.0 + math.exp(-thetas[player]))
        gradient[player] += prior * (0.5 - q)
        information[player][player] += prior * q * (1.0 - q)
    for game in games:
        i, j = game.first, game.second
        p = 1.0 / (1.0 + math.exp(thetas[j] - thetas[i]))
        gradient[i] += game.score - p
        gradient[j] -= game.score - p
        w = p * (1.0 - p)
        information[i][i] += w
        information[j][j] += w
        information[i][j] -= w
        information[j][i] -= w
    return gradient, information


PRIOR = 1.0
"""Virtual draws of each player against an average one (BayesElo's prior is two): a player that won or
lost every game then still has a finite rating, and two players who never met stay comparable."""


def fitRatings(players: int, games: Iterable[Game], prior: float = PRIOR) -> list[Rating]:
    """Elo ratings (mean 0) and their 95 % margins from all ``games`` at once (``prior=0``: the pure fit)."""
    games = list(games)
    if players == 0:
        return []
    played = [0] * players
    points = [0.0] * players
    for game in games:
        played[game.first] += 1
        played[game.second] += 1
        points[game.first] += game.score
        points[game.second] += 1.0 - game.score
    extreme = [prior == 0 and played[p] > 0 and points[p] in (0.0, float(played[p])) for p in range(players)]
    limit = CLIP / ELO_PER_NATURAL
    thetas = [0.0] * players
    for _ in range(100):
        gradient, information = _gradientAndInformation(games, thetas, prior)
        # The constraint Σθ = 0 as a Lagrange row/column: a bordered system.
        bordered = [[*row, 1.0] for row in information] + [[1.0] * players + [0.0]]
        try:
            step = _solve(bordered, [*gradient, 0.0])[:players]
        except ZeroDivisionError:
            break
        thetas = [max(-limit, min(limit, t + s)) for t, s in zip(thetas, step, strict=True)]
        mean = sum(thetas) / players
        thetas = [t - mean for t in thetas]
        if max(abs(s) for s in step) < 1e-10:
            break
    _, information = _gradientAndInformation(games, thetas, prior)
    variances = _constrainedVariances(information)
    ratings = []
    for p in range(players):
        clipped = extreme[p] or abs(thetas[p]) >= limit - 1e-9
        variance = variances[p] if variances is not None else math.inf
        margin = math.inf if clipped or not played[p] or variance <= 0 else Z95 * math.sqrt(variance) * ELO_PER_NATURAL
        ratings.append(Rating(thetas[p] * ELO_PER_NATURAL, margin, clipped))
    return ratings


def _constrainedVariances(information: list[list[float]]) -> list[float] | None:
    """The diagonal of the covariance of θ under Σθ = 0: the upper-left block of the bordered inverse."""
    n = len(information)
    bordered = [[*row, 1.0] for row in information] + [[1.0] * n + [0.0]]
    variances = []
    for p in range(n):
        unit = [0.0] * (n + 1)
        unit[p] = 1.0
        try:
            variances.append(_solve(bordered, unit)[p])
        except ZeroDivisionError:
            return None
    return variances


# -- the sequential test -----------------------------------------------------------------

PAIR_POINTS = (0.0, 0.5, 1.0, 1.5, 2.0)
REGULARIZE = 1e-3


def pentanomial(pairPoints: Iterable[float]) -> list[int]:
    """Counts of pairs with 0, ½, 1, 1½ and 2 points for the first player."""
    counts = [0] * 5
    for points in pairPoints:
        counts[round(points * 2)] += 1
    return counts


def _expectedDistribution(outcomes: Sequence[float], probabilities: Sequence[float], s: float) -> list[float]:
    """The maximum-likelihood distribution on ``outcomes`` with mean ``s`` (fishtest's ``MLE_expected``).

    ``pᵢ / (1 + x (aᵢ - s))`` for the root x of ``Σ pᵢ (aᵢ - s) / (1 + x (aᵢ - s)) = 0``,
    found by bisection on its interval of definition (the function decreases there).
    """
    shifted = [a - s for a in outcomes]
    low, high = -1.0 / max(shifted) + 1e-12, -1.0 / min(shifted) - 1e-12
    for _ in range(200):
        middle = (low + high) / 2
        value = sum(p * a / (1 + middle * a) for p, a in zip(probabilities, shifted, strict=True))
        if value > 0:
            low = middle
        else:
            high = middle
    x = (low + high) / 2
    return [p / (1 + x * a) for p, a in zip(probabilities, shifted, strict=True)]


def llrLogistic(elo0: float, elo1: float, counts: Sequence[int]) -> float:
    """The generalized log-likelihood ratio of ``elo1`` over ``elo0`` for pentanomial ``counts``."""
    regular = [c if c > 0 else REGULARIZE for c in counts]
    total = sum(regular)
    outcomes = [points / 2 for points in PAIR_POINTS]
    observed = [c / total for c in regular]
    s0, s1 = expected(elo0), expected(elo1)
    p0 = _expectedDistribution(outcomes, observed, s0)
    p1 = _expectedDistribution(outcomes, observed, s1)
    return total * sum(o * math.log(b / a) for o, a, b in zip(observed, p0, p1, strict=True))


@dataclass(frozen=True)
class SprtBounds:
    lower: float
    upper: float

    @classmethod
    def of(cls, alpha: float, beta: float) -> SprtBounds:
        return cls(math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))

    def decision(self, llr: float) -> str:
        """``H1`` (the first player is ``elo1`` stronger), ``H0`` (not), or ``""`` (go on)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return ""
