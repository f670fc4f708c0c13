"""The contract every velhanet game engine fulfils.

Every engine provides them (checked with ``verifyObject`` in the tests), and
code that must work with any game uses nothing else: the random bot plays
any engine through ``legalMoves`` and ``apply``. Services do not: each family
holds its engine's own types on its hot path (JogoVelha, Gobang and the
Software-Challenge rooms call a state's ``apply`` and ``toMove`` directly; the
Gambit room calls the ``chess`` helpers), because a wire format is specific to
its game anyway and an interface lookup per move would cost time for nothing.
The Software-Challenge server hosts its games through its own typed
L{velhanet.socha.games.HostedGame}. Engines are pure Python: no Twisted, no
I/O, no clocks.

A game state is immutable: ``apply`` returns a new state and never changes
the old one, so a bot can search by applying moves freely and a service can
keep the previous position for an undo or a replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zope.interface import Attribute, Interface


class IllegalMove(ValueError):
    """A move or command that the rules do not allow.

    Every engine raises this one type for every kind of bad input (a move
    off the board, on an occupied cell, out of turn, after the end, a move
    the engine cannot parse). The message says what was wrong, in words a
    student can act on, e.g. ``"cell (3, 4) is already occupied"``.
    """


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended.

    ``winner`` is the index of the winning player (0 moves first), or
    ``None`` for a draw. ``reason`` is a short machine-friendly word
    (``"line"``, ``"resign"``, ``"passes"``, ``"blocked"``, ``"full"``, …)
    and ``line`` the cells of the winning row when there is one.
    """

    winner: int | None
    reason: str
    line: tuple[tuple[int, int], ...] = ()

    @property
    def isDraw(self) -> bool:
        return self.winner is None


class IGameState(Interface):
    """One position of a two-player, turn-based game."""

    toMove = Attribute("Index (0 or 1) of the player whose turn it is; None once the game is over.")
    outcome = Attribute("The Outcome once the game is over, else None.")
    moveCount = Attribute("Number of moves (including passes) applied since the start.")

    def legalMoves() -> list[Any]:
        """Every move the player to move may make now (empty once over)."""

    def apply(move: Any, player: int | None = None) -> IGameState:
        """Return the state after ``move``.

        ``player``, when given, is who claims to move; a claim out of turn
        raises L{IllegalMove}, as does any move the rules refuse.
        """


class IGameRules(Interface):
    """A kind of game: its name and how a new one starts."""

    name = Attribute("Short identifier, e.g. 'tictactoe', 'gobang', 'chess'.")

    def initial() -> IGameState:
        """A fresh game in its starting position."""
