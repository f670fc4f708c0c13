"""What every conformance test shares: the target, rule-naming checks and deviations.

A *deviation* is behaviour that breaks velhanet's reading of an ambiguous
text but is known from the original programs (e.g. the original Gambit
server answering JOIN with White's name by ERROR *and* OK). By default it is
reported as a warning — never as a pass; with ``--strict`` it fails.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, TypeVar

from twisted.trial.unittest import SkipTest, SynchronousTestCase

WARNING_PREFIX = "WARN: "


@dataclass
class Target:
    family: str
    host: str = "127.0.0.1"
    port: int = 0
    pid: int = 0
    fifoDir: str = "/tmp"
    command: str = ""
    strict: bool = False
    timeout: float = 3.0
    extra: dict[str, Any] = field(default_factory=dict)


_current: Target | None = None


def setTarget(target: Target | None) -> None:
    global _current
    _current = target


def target() -> Target:
    if _current is None:
        raise SkipTest("no target configured: run the suite with velhanet-check")
    return _current


Item = TypeVar("Item")


class StreamClient(Generic[Item]):
    """A blocking TCP client that decodes what arrives; ``receive`` waits at most ``timeout`` seconds."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.socket = socket.create_connection((host, port), timeout=timeout)
        self.timeout = timeout
        self.pending: list[Item] = []
        self.closedByPeer = False

    def decode(self, data: bytes) -> list[Item]:
        raise NotImplementedError  # each protocol's client says how its bytes become messages

    def sendBytes(self, data: bytes) -> None:
        self.socket.sendall(data)

    def receive(self, timeout: float | None = None) -> Item | None:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.closedByPeer:
                return None
            self.socket.settimeout(remaining)
            try:
                data = self.socket.recv(65536)
            except TimeoutError:
                return None
            except OSError:
                data = b""
            if not data:
                self.closedByPeer = True
                return None
            self.pending += self.decode(data)
        return self.pending.pop(0)

    def close(self) -> None:
        self.socket.close()


class ConformanceCase(SynchronousTestCase):
    """A test against the configured target; failures name the rule they check."""

    family = ""

    def setUp(self) -> None:
        self.target = target()
        if self.target.family != self.family:
            raise SkipTest(f"the target is a {self.target.family} implementation")

    def require(self, condition: object, message: str) -> None:
        """Fail with ``message`` (which names the rule) unless ``condition``."""
        if not condition:
            self.fail(message)

    def deviation(self, message: str) -> NoReturn:
        """A known deviation where the text is ambiguous: a warning, or a failure with --strict."""
        if self.target.strict:
            self.fail(message)
        raise SkipTest(WARNING_PREFIX + message)
