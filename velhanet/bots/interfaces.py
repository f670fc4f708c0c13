"""What a bot is: something that, given a game state, returns a move."""

from __future__ import annotations

from typing import Any

from zope.interface import Interface


class IBot(Interface):
    """A computer player. Bots are seedable so tests and games replay exactly."""

    def chooseMove(state: Any) -> Any:
        """Return a legal move for C{state.toMove} in C{state}.

        The state is never changed (engines are immutable); the bot may
        explore by applying moves to it.
        """
