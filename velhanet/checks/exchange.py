"""What a check sent and received, in order, with time offsets: the evidence under its verdict.

Every client of the checks (TCP streams, UDP datagrams, FIFO words, the XML
of a player) writes into the exchange of the check that is running: each
datagram, frame, word or message sent or received (the raw bytes, escaped,
and what they mean decoded), and the events around them (a connection opened,
closed or reset by the target, a wait that ran out, a port unreachable).
The runner starts a new exchange before each check and hands it to the
report, which shows it under a FAIL or WARN, as JSON, as JUnit's
``<system-out>`` and as a table in the HTML page.

An exchange is bounded: a target that floods must not grow the report
without limit. It keeps the first L{HEAD} and the last L{TAIL} lines and
counts what it left out between them.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass

from velhanet.i18n import ngettext

SENT, RECEIVED, EVENT = "sent", "received", "event"

HEAD = 60
"""Lines kept from the start of a check's exchange."""

TAIL = 60
"""Lines kept from its end (the failure is usually there)."""

RAW_LIMIT = 600
"""Characters of one line's escaped bytes; a longer one ends with how many bytes it had."""


@dataclass(frozen=True)
class ExchangeLine:
    """One thing sent, received or seen, ``at`` milliseconds after the check began."""

    at: int
    kind: str
    """``sent``, ``received`` or ``event``."""
    channel: str
    """Which connection or socket: ``tcp#1``, ``udp 127.0.0.1:20181``, ``fifo gbs.00042``."""
    raw: str
    """The bytes, escaped (printable ASCII as is, the rest as ``\\n``, ``\\xNN``); empty for an event."""
    meaning: str
    """What they mean decoded (``MSG05 nick=Bo port=0``), why they do not decode, or the event."""

    def asDict(self) -> dict[str, object]:
        return asdict(self)

    def text(self) -> str:
        """One line as the console and JUnit show it: ``+12 ms  sent  tcp#1  {"Cmd":1}  CREATE user=…``."""
        arrow = {SENT: "->", RECEIVED: "<-", EVENT: "**"}[self.kind]
        shown = f"{self.raw}  = {self.meaning}" if self.raw else self.meaning
        return f"{self.at:>+7} ms {arrow} {self.channel:<10} {shown}"


def escape(data: bytes, limit: int = RAW_LIMIT) -> str:
    """The bytes as readable text: printable ASCII as is, ``\\n``/``\\r``/``\\t``, everything else ``\\xNN``."""
    out = []
    for byte in data:
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append({0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}.get(byte, f"\\x{byte:02x}"))
    text = "".join(out)
    if len(text) > limit:
        return f"{text[:limit]}… ({len(data)} bytes)"
    return text


class Exchange:
    """The lines of one check, bounded (L{HEAD} first, L{TAIL} last, a count of those left out)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, head: int = HEAD, tail: int = TAIL) -> None:
        self.clock = clock
        self.began = clock()
        self.head: list[ExchangeLine] = []
        self.tail: deque[ExchangeLine] = deque(maxlen=tail)
        self.headSize = head
        self.leftOut = 0
        """Lines dropped between the head and the tail."""

    @classmethod
    def restored(cls, lines: list[ExchangeLine], leftOut: int) -> Exchange:
        """An exchange as it was recorded elsewhere (a grading process, a history): its lines, in order."""
        exchange = cls(head=len(lines), tail=0)
        exchange.head = list(lines)
        exchange.leftOut = leftOut
        return exchange

    def _add(self, kind: str, channel: str, raw: bytes | None, meaning: str, at: float | None = None) -> None:
        """``at``: when it happened on the monotonic clock, if not now (a client process's own record)."""
        when = self.clock() if at is None else at
        self._keep(ExchangeLine(round((when - self.began) * 1000), kind, channel, escape(raw or b""), meaning))

    def _keep(self, line: ExchangeLine) -> None:
        if len(self.head) < self.headSize:
            self.head.append(line)
            return
        if len(self.tail) == self.tail.maxlen:
            self.leftOut += 1
        self.tail.append(line)

    def sent(self, channel: str, data: bytes, meaning: str, at: float | None = None) -> None:
        self._add(SENT, channel, data, meaning, at)

    def received(self, channel: str, data: bytes, meaning: str, at: float | None = None) -> None:
        self._add(RECEIVED, channel, data, meaning, at)

    def event(self, channel: str, what: str) -> None:
        self._add(EVENT, channel, None, what)

    def extend(self, other: Exchange) -> None:
        """Add another exchange's lines (a game several checks share), at their own times."""
        shift = round((other.began - self.began) * 1000)
        for line in other.lines:
            self._keep(dataclasses.replace(line, at=line.at + shift))
        self.leftOut += other.leftOut

    def snapshot(self) -> Exchange:
        """What is recorded so far, as a copy the check goes on without (a set-up's evidence, taken mid-check)."""
        copy = Exchange(self.clock, head=self.headSize, tail=self.tail.maxlen or 0)
        copy.began, copy.head, copy.leftOut = self.began, list(self.head), self.leftOut
        copy.tail.extend(self.tail)
        return copy

    @property
    def lines(self) -> list[ExchangeLine]:
        """Every line kept, in time order (the head, then the tail; a client process's lines come in late)."""
        return sorted(self.head, key=lambda line: line.at) + sorted(self.tail, key=lambda line: line.at)

    def textLines(self, last: int | None = None) -> list[str]:
        """The lines as text, all or the ``last`` ones, with a line saying what was left out."""
        lines = self.lines
        shown = [line.text() for line in lines]
        if self.leftOut:
            leftOut = ngettext("… {n} line left out …", "… {n} lines left out …", self.leftOut)
            shown.insert(len(self.head), "        " + leftOut.format(n=self.leftOut))
        if last is not None and len(shown) > last:
            hidden = len(shown) - last
            earlier = ngettext(
                "… {n} earlier line (--verbose, or the JSON and HTML reports, show it) …",
                "… {n} earlier lines (--verbose, or the JSON and HTML reports, show them) …",
                hidden,
            )
            shown = ["        " + earlier.format(n=hidden)]
            shown += [line.text() for line in lines[-last:]]
        return shown


_current: Exchange | None = None
_channels = 0


def begin(clock: Callable[[], float] = time.monotonic) -> Exchange:
    """A new exchange for the check about to run; the clients write into it."""
    global _current, _channels
    _current, _channels = Exchange(clock), 0
    return _current


def end() -> Exchange:
    """The exchange of the check that ran (empty if none was begun), no longer written to."""
    global _current
    finished, _current = _current or Exchange(), None
    return finished


def current() -> Exchange:
    """Where the clients write: the running check's exchange (a throw-away one outside any check)."""
    global _current
    if _current is None:
        _current = Exchange()
    return _current


def newChannel(kind: str) -> str:
    """A name for a new connection of this check: ``tcp#1``, ``tcp#2``…"""
    global _channels
    _channels += 1
    return f"{kind}#{_channels}"
