"""What a room tells its spectators, and nothing of how they see it: the port between the games and the site.

A room reports one call per fact: a game started (L{GameWatcher.started}), a move was played, the game ended
(L{WatchedGame.moved}, L{WatchedGame.ended}). It hands over its position as the engine holds it (a
C{chess.Board}, a L{velhanet.games.kinarow.KInARowState}, a L{velhanet.games.piranhas.PiranhasState}), as a
callable that the watcher calls only when someone looks; the spectators' site (L{velhanet.web}) chooses the
drawing. So no family imports the site, and no room carries a drawing library for a board nobody watches.

A server run without ``--web`` gets L{NO_WATCHER}, whose calls do nothing.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

Position = Callable[[], object]
"""The game's position now, as its engine holds it (None before there is one)."""


@dataclass(frozen=True)
class Score:
    """How a game ended, in PGN's words where a family has them (chess): for a PGN file or a table.

    ``result`` is ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``; ``termination`` is PGN's
    ``normal`` (mate, a draw rule, an agreement, a resignation) or ``abandoned``.
    """

    result: str
    termination: str = "normal"


class WatchedGame(typing.Protocol):
    """One game as its room reports it."""

    def moved(self, text: str) -> None:
        """A move was played (``text`` as the family writes it); the position is now after it."""

    def ended(self, result: str, score: Score | None = None) -> None:
        """The game is over; ``result`` says how (who won, or why it stopped), ``score`` as PGN would."""


class GameWatcher(typing.Protocol):
    """Where rooms report the games they start."""

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        """A game started; ``position()`` is its engine's state whenever it is called."""


class _Unwatched:
    def moved(self, text: str) -> None:
        pass

    def ended(self, result: str, score: Score | None = None) -> None:
        pass


class _NoWatcher:
    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        return UNWATCHED


UNWATCHED: WatchedGame = _Unwatched()
NO_WATCHER: GameWatcher = _NoWatcher()
"""The watcher of a server run without ``--web``: every report costs one call that does nothing."""


class BothWatchers:
    """Two watchers as one: a server with ``--web`` and ``--pgn-dir`` reports each game to both."""

    def __init__(self, first: GameWatcher, second: GameWatcher) -> None:
        self.first, self.second = first, second

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        names = tuple(players)
        return _BothGames(
            self.first.started(family, gameType, names, position, hidden),
            self.second.started(family, gameType, names, position, hidden),
        )


class _BothGames:
    def __init__(self, first: WatchedGame, second: WatchedGame) -> None:
        self.first, self.second = first, second

    def moved(self, text: str) -> None:
        self.first.moved(text)
        self.second.moved(text)

    def ended(self, result: str, score: Score | None = None) -> None:
        self.first.ended(result, score)
        self.second.ended(result, score)


def bothWatchers(first: GameWatcher, second: GameWatcher) -> GameWatcher:
    """``first`` and ``second`` as one watcher; L{NO_WATCHER} on either side costs nothing."""
    if first is NO_WATCHER:
        return second
    if second is NO_WATCHER:
        return first
    return BothWatchers(first, second)
