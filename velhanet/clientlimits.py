"""Limits a server puts on what one client may cost it, and how an operator changes them.

Every service keeps its limits in one frozen dataclass (``GambitLimits``,
``SochaLimits``, …) whose defaults are the values ``docs/security.md``
documents. ``twistd <service> --limit NAME=VALUE`` (repeatable) replaces one
of them; L{LimitOptions} is the mixin that parses it.

L{TokenBucket} and L{AddressBuckets} rate-limit failures (wrong game ids,
wrong passwords) per connection and per address, with an injected clock.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, ClassVar, TypeVar

from twisted.internet.interfaces import IReactorTime
from twisted.python import usage

from velhanet.i18n import _


class TokenBucket:
    """``capacity`` tokens, refilled at ``perMinute`` a minute; a failure takes one."""

    __slots__ = ("_stamp", "_tokens", "capacity", "clock", "perSecond")

    def __init__(self, capacity: int, perMinute: float, clock: IReactorTime) -> None:
        self.capacity = capacity
        self.perSecond = perMinute / 60.0
        self.clock = clock
        self._tokens = float(capacity)
        self._stamp = clock.seconds()

    def _refill(self) -> None:
        now = self.clock.seconds()
        self._tokens = min(float(self.capacity), self._tokens + (now - self._stamp) * self.perSecond)
        self._stamp = now

    def available(self) -> bool:
        """Is there a token left (without taking it)?"""
        self._refill()
        return self._tokens >= 1.0

    def take(self) -> None:
        self._refill()
        self._tokens = max(0.0, self._tokens - 1.0)

    def full(self) -> bool:
        self._refill()
        return self._tokens >= self.capacity

    def secondsUntilAvailable(self) -> float:
        self._refill()
        if self._tokens >= 1.0 or self.perSecond <= 0:
            return 0.0
        return (1.0 - self._tokens) / self.perSecond


class AddressBuckets:
    """One L{TokenBucket} per client address, for at most ``maxAddresses`` addresses.

    Only addresses that have failed get a bucket. When the table is full,
    the address that failed least recently is forgotten: an attacker with
    more addresses than that gains a fresh bucket for an old one, no more.
    """

    def __init__(self, capacity: int, perMinute: float, clock: IReactorTime, maxAddresses: int = 4096) -> None:
        self.capacity = capacity
        self.perMinute = perMinute
        self.clock = clock
        self.maxAddresses = maxAddresses
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def available(self, address: str) -> bool:
        bucket = self._buckets.get(address)
        if bucket is None:
            return True
        if bucket.full():
            del self._buckets[address]
            return True
        return bucket.available()

    def secondsUntilAvailable(self, address: str) -> float:
        bucket = self._buckets.get(address)
        return 0.0 if bucket is None else bucket.secondsUntilAvailable()

    def fail(self, address: str) -> None:
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = self._buckets[address] = TokenBucket(self.capacity, self.perMinute, self.clock)
            if len(self._buckets) > self.maxAddresses:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(address)
        bucket.take()


LimitsT = TypeVar("LimitsT")


def replaceLimit(limits: LimitsT, assignment: str) -> LimitsT:
    """``limits`` with one field replaced from ``NAME=VALUE`` (a L{usage.UsageError} if it is not one)."""
    name, sep, text = assignment.partition("=")
    name = name.strip()
    fields = {field.name: field for field in dataclasses.fields(limits)}  # type: ignore[arg-type]
    if not sep or name not in fields:
        known = ", ".join(sorted(fields))
        raise usage.UsageError(_("--limit takes NAME=VALUE, NAME one of: {names}").format(names=known))
    current = getattr(limits, name)
    try:
        value = type(current)(text.strip())
    except ValueError:
        kind = {int: _("a whole number"), float: _("a number")}.get(type(current), type(current).__name__)
        raise usage.UsageError(
            _("--limit {name}: {text!r} is not {kind}").format(name=name, text=text, kind=kind)
        ) from None
    if value < 0:
        raise usage.UsageError(_("--limit {name}: must not be negative").format(name=name))
    return dataclasses.replace(limits, **{name: value})  # type: ignore[type-var]


class LimitOptions(usage.Options):
    """Mixin for a service's options: ``--limit NAME=VALUE``, repeatable, into ``self["limits"]``."""

    limitsType: ClassVar[type[Any]]

    def __init__(self) -> None:
        super().__init__()
        self["limits"] = self.limitsType()

    def opt_limit(self, assignment: str) -> None:
        """change one limit, NAME=VALUE; repeatable [default: the values docs/security.md lists]"""
        self["limits"] = replaceLimit(self["limits"], assignment)
