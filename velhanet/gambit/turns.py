"""The data of the Gambit client's waiting states (L{velhanet.gambit.session}): each owns its timer.

Every transition out of such a state calls L{Timed.stop}, so no timer of a
state outlives it; ``playing`` (L{Turns}) also holds what stands between the
moves: the bot's move being chosen, a draw offer waiting for the server.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall


class Timed:
    """The data of a state that owns a timer: every transition out of the state calls L{stop}."""

    timer: IDelayedCall | None

    def stop(self) -> None:
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None


@dataclass
class Pending(Timed):
    """``joining`` and ``resigned``: only the timer."""

    timer: IDelayedCall | None


@dataclass
class Refusal(Timed):
    text: str
    timer: IDelayedCall | None


@dataclass
class Ending(Timed):
    verdict: str
    timer: IDelayedCall | None


@dataclass
class Turns(Timed):
    """``playing``: what stands between the moves, and the game's two timers."""

    timer: IDelayedCall | None = None
    """The bot's next move."""
    thinking: Deferred[None] | None = None
    """The bot's move being chosen (an engine thinks): cancelled when the game ends first."""
    drawAck: IDelayedCall | None = None
    """The server has this long to confirm our draw offer."""
    lastSent: chess.Move | None = None
    myOffer: bool = False
    theirOffer: bool = False

    def armBot(self, call: IDelayedCall) -> None:
        """One pending bot move at most: a repeated prompt replaces the pending one."""
        super().stop()
        self.timer = call

    def settleOffer(self) -> None:
        self.myOffer = False
        if self.drawAck is not None and self.drawAck.active():
            self.drawAck.cancel()
        self.drawAck = None

    def stop(self) -> None:
        super().stop()
        self.settleOffer()
        if self.thinking is not None:
            self.thinking.cancel()
