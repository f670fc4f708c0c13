"""Pure game rules: no Twisted, no sockets, no clocks.

Every engine provides L{IGameRules} and L{IGameState}, and refuses bad input
with L{IllegalMove} only.
"""

from velhanet.games.interfaces import IGameRules, IGameState, IllegalMove, Outcome

__all__ = ["IGameRules", "IGameState", "IllegalMove", "Outcome"]
