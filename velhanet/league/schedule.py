"""Which games a league plays: pairings, game pairs, sides and seeds. Pure and deterministic.

Every pairing is played as game pairs: both games of a pair have the same
seed, so the same start position (``<prepare seed>``), with the players'
sides swapped; the first player of a pairing (by name) is team ONE, and so
starts, in the pair's first game. A game is named by what it is — the two
players and their versions, the pair and the side — so a league file read
again schedules the very same games, and the database keeps each once.

- round robin: every pair of players, ``pairs`` game pairs each;
- gauntlet: the gauntlet player against each of the others;
- SPRT: the two players, pair after pair, until the test is decided
  (``sprtPairs`` gives the next ones).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from velhanet.league.config import League, Player

SEED_LIMIT = 10**17
"""``<prepare seed>`` takes at most 17 digits."""


@dataclass(frozen=True)
class Scheduled:
    """One game to play: ``a`` and ``b`` (a before b by name), pair ``pair``, ``side`` 0 when ``a`` is team ONE."""

    a: Player
    b: Player
    pair: int
    side: int
    seed: int

    @property
    def teams(self) -> tuple[Player, Player]:
        """(team ONE, team TWO): team ONE starts."""
        return (self.a, self.b) if self.side == 0 else (self.b, self.a)


def pairSeed(league: League, a: Player, b: Player, pair: int) -> int:
    """The start position of a pair: from the league's seed, the pairing and the pair, never from the versions.

    A new version of a player then meets the same positions as the old one did.
    """
    text = f"{league.seed}\0{a.name}\0{b.name}\0{pair}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % SEED_LIMIT


def pairings(league: League, players: Sequence[Player]) -> list[tuple[Player, Player]]:
    ordered = sorted(players, key=lambda player: player.name)
    if league.format == "gauntlet":
        champion = next(p for p in ordered if p.name == league.gauntlet)
        return [tuple(sorted((champion, other), key=lambda p: p.name)) for other in ordered if other is not champion]  # type: ignore[misc]
    return [(ordered[i], ordered[j]) for i in range(len(ordered)) for j in range(i + 1, len(ordered))]


def gamesOfPair(league: League, a: Player, b: Player, pair: int) -> list[Scheduled]:
    seed = pairSeed(league, a, b, pair)
    return [Scheduled(a, b, pair, side, seed) for side in (0, 1)]


def schedule(league: League, players: Sequence[Player]) -> list[Scheduled]:
    """Every game of a round robin or a gauntlet, pair by pair, the pairings interleaved.

    Interleaving (pair 0 of every pairing, then pair 1, …) lets standings that
    are read half way cover every pairing evenly.
    """
    pairs = pairings(league, players)
    return [game for index in range(league.pairs) for a, b in pairs for game in gamesOfPair(league, a, b, index)]


def sprtPairs(league: League, players: Sequence[Player], start: int, count: int) -> Iterator[Scheduled]:
    """Pairs ``start`` … ``start + count - 1`` of a sequential test (both games of each)."""
    ((a, b),) = pairings(league, players)
    for pair in range(start, start + count):
        yield from gamesOfPair(league, a, b, pair)
