"""``--trace`` for every family: one tracer type, one way to print a message.

A protocol calls its tracer with each message it reads or writes, raw and
decoded, and never formats anything itself: with ``--trace`` off the tracer
is L{noTrace} and the hot path pays one call. The service picks the tracer
(L{logTracer} writes a log line; a console may print the same line).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from twisted.logger import Logger

IN, OUT = "in", "out"
"""Directions, as seen from velhanet: read from the peer, or written to it."""


class Tracer(typing.Protocol):
    def __call__(self, direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        """One message ``raw`` read from (``IN``) or written to (``OUT``) ``peer``, and what it means."""


def noTrace(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
    """The tracer when ``--trace`` is off: nothing."""


def arrow(direction: str) -> str:
    """``->`` for what velhanet wrote, ``<-`` for what it read."""
    return "->" if direction == OUT else "<-"


def asText(raw: bytes | str) -> str:
    """A message as a person reads it: text decoded, trailing line end dropped."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text.rstrip("\r\n")


def logTracer(
    namespace: str,
    format: str = "{arrow} {peer} {raw} {decoded}",
    showRaw: Callable[[bytes | str], str] = asText,
    describe: Callable[[object], str] = str,
) -> Tracer:
    """A tracer that writes each message as an info event in ``namespace``.

    ``format`` may use ``arrow``, ``peer``, ``raw`` and ``decoded``; the event
    keeps them as fields, so a log observer can filter on them too.
    """
    log = Logger(namespace=namespace)

    def trace(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        log.info(format, arrow=arrow(direction), peer=peer, raw=showRaw(raw), decoded=describe(decoded))

    return trace


def orGlobalReactor(reactor: Any) -> Any:
    """``reactor``, or the global one when a service is made without one (``twistd``)."""
    if reactor is None:
        from twisted.internet import reactor as globalReactor

        return globalReactor
    return reactor
