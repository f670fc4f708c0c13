"""A clock on which every protocol timer runs ``scale`` times as long: ``--time-scale``.

A service handed ``ScaledClock(reactor, 0.25)`` instead of the reactor keeps
its own numbers (a 30 s window, a 0.5 s answer delay) and meets them four
times as fast: ``callLater(d)`` fires after ``d * scale`` real seconds, and
``seconds()`` counts the same scaled seconds, so that every duration the
service measures agrees with the timers it set. For velhanet's own tests
and for quick runs; at 1 nothing is wrapped (L{scaledClock}).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from zope.interface import implementer


@implementer(IDelayedCall)
class _ScaledCall:
    """A delayed call of the real clock, seen in scaled seconds."""

    def __init__(self, call: IDelayedCall, scale: float) -> None:
        self.call, self.scale = call, scale

    def getTime(self) -> float:
        return float(self.call.getTime()) / self.scale

    def cancel(self) -> None:
        self.call.cancel()

    def delay(self, secondsLater: float) -> None:
        self.call.delay(secondsLater * self.scale)

    def reset(self, secondsFromNow: float) -> None:
        self.call.reset(secondsFromNow * self.scale)

    def active(self) -> bool:
        return bool(self.call.active())


@implementer(IReactorTime)
class ScaledClock:
    """``clock`` with every delay times ``scale`` and its seconds divided by it."""

    def __init__(self, clock: IReactorTime, scale: float) -> None:
        if scale <= 0:
            raise ValueError(f"a time scale must be more than 0, not {scale:g}")
        self.clock, self.scale = clock, scale

    def seconds(self) -> float:
        return self.clock.seconds() / self.scale

    def callLater(self, delay: float, callable: Callable[..., Any], *args: object, **kw: object) -> IDelayedCall:
        return _ScaledCall(self.clock.callLater(delay * self.scale, callable, *args, **kw), self.scale)

    def getDelayedCalls(self) -> Sequence[IDelayedCall]:
        return [_ScaledCall(call, self.scale) for call in self.clock.getDelayedCalls()]


def scaledClock(clock: IReactorTime, scale: float) -> IReactorTime:
    """``clock`` itself at scale 1, else a L{ScaledClock}."""
    return clock if scale == 1 else ScaledClock(clock, scale)
