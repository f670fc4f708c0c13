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

Position = Callable[[], object]
"""The game's position now, as its engine holds it (None before there is one)."""


class WatchedGame(typing.Protocol):
    """One game as its room reports it."""

    def moved(self, text: str) -> None:
        """A move was played (``text`` as the family writes it); the position is now after it."""

    def ended(self, result: str) -> None:
        """The game is over; ``result`` says how (who won, or why it stopped)."""


class GameWatcher(typing.Protocol):
    """Where rooms report the games they start."""

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        """A game started; ``position()`` is its engine's state whenever it is called."""


class _Unwatched:
    def moved(self, text: str) -> None:
        pass

    def ended(self, result: str) -> None:
        pass


class _NoWatcher:
    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        return UNWATCHED


UNWATCHED: WatchedGame = _Unwatched()
NO_WATCHER: GameWatcher = _NoWatcher()
"""The watcher of a server run without ``--web``: every report costs one call that does nothing."""
