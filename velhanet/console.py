"""The terminal side of every client: lines typed (or piped) in, one callback per line."""

from __future__ import annotations

from collections.abc import Callable

from twisted.protocols.basic import LineReceiver
from twisted.python.failure import Failure


class LineConsole(LineReceiver):
    """Standard input as lines of text, for ``twisted.internet.stdio.StandardIO``.

    Bytes that are not UTF-8 are replaced rather than refused: a person who
    typed a stray accent still gets an answer to the line. ``onClose`` runs
    when standard input ends (Ctrl-D, or the end of a piped file).
    """

    delimiter = b"\n"

    def __init__(self, onLine: Callable[[str], None], onClose: Callable[[], None]) -> None:
        self.onLine, self.onClose = onLine, onClose

    def lineReceived(self, line: bytes) -> None:
        self.onLine(line.decode("utf-8", "replace").rstrip("\r"))

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.onClose()
