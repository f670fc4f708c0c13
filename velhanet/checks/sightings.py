"""The sightings of the checks' set-ups: each time a set-up saw a rule kept or broken (``tally`` weighs them).

``ConformanceCase.precondition(…, dependsOn=RULE)`` calls L{sighted}; the
runner takes what was recorded after each run of a check (L{takeSightings})
and says where it was made (L{SetUpSighting}). Apart from ``base`` and
``tally`` so that the check's side needs nothing of the outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from velhanet.checks import exchange
from velhanet.checks.exchange import Exchange


@dataclass(frozen=True)
class Sighting:
    """One time a check's set-up saw the behaviour a rule is about: kept, or broken with why and the exchange."""

    rule: str
    kept: bool
    seen: str
    """What was seen, in a word or two (``JOIN``), for the count: "JOIN went as the rule says 12 of 13 times"."""
    message: str
    exchange: Exchange | None = None


@dataclass(frozen=True)
class SetUpSighting:
    """A L{Sighting} and where it was made: the check (its rule's text and anchor) and which run of it."""

    sighting: Sighting
    check: str
    anchor: str
    run: int
    runs: int


_sightings: list[Sighting] = []


def sighted(rule: str, kept: bool, seen: str, message: str) -> None:
    """A set-up saw ``rule`` kept or broken (``message``: what it saw); broken, the exchange so far goes with it."""
    snapshot = None if kept else exchange.current().snapshot()
    _sightings.append(Sighting(rule, kept, seen, message, snapshot))


def takeSightings() -> list[Sighting]:
    """Every sighting since the last call (the runner's, after each run of a check)."""
    taken = list(_sightings)
    _sightings.clear()
    return taken
