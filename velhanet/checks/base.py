"""What every conformance check shares: the target, rules with a place in the docs, verdicts.

A check is a trial test method whose docstring's first line is the rule it
checks; ``@rule("gambit-join-unknown")`` ties it to the paragraph of
``docs/<family>.md`` that states the rule (anchor ``#gambit-join-unknown``), so
a student can read what was expected.

Verdicts, and how a check reaches them:

- PASS: the test method returned;
- FAIL: ``require`` failed (the message says what was expected and what came);
- WARN: ``deviation``: behaviour that breaks velhanet's reading of an
  ambiguous text but is known from the original programs; never a pass, and a
  FAIL with ``--strict``;
- SKIP: ``skipTest``: the check does not apply to this run (e.g. ``--destructive``
  not given);
- NOT RUN: ``precondition``: the target is not in the state the check needs
  (its previous answers broke the rule the precondition names, or the target
  stopped answering); the runner also gives it to every check after the
  target has died. A NOT RUN is never the program's grade for that rule.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, TypeVar

from twisted.trial.unittest import SkipTest, SynchronousTestCase

from velhanet.checks import exchange, sightings
from velhanet.i18n import _

WARNING_PREFIX = "WARN: "
NOT_RUN_PREFIX = "NOT RUN: "

PASS, FAIL, WARN, SKIP, NOT_RUN = "PASS", "FAIL", "WARN", "SKIP", "NOT RUN"
VERDICTS = (PASS, FAIL, WARN, SKIP, NOT_RUN)


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
    timeScale: float = 1.0
    """``--time-scale``: every wait of the checks that honour it, the rules' limits too, times this."""
    extra: dict[str, Any] = field(default_factory=dict)

    def seconds(self, nominal: float) -> float:
        """``nominal`` seconds on this run's clock (``--time-scale``)."""
        return nominal * self.timeScale

    def limit(self, nominal: float) -> str:
        """A limit as a report names it: ``15 s``, or ``15 s (3 s at --time-scale 0.2)``."""
        if self.timeScale == 1.0:
            return f"{nominal:g} s"
        return _("{nominal:g} s ({scaled:g} s at --time-scale {scale:g})").format(
            nominal=nominal, scaled=self.seconds(nominal), scale=self.timeScale
        )

    def describe(self) -> str:
        if self.family == "gobang":
            return _("gobang server pid {pid} in {folder}").format(pid=self.pid, folder=self.fifoDir)
        if self.family == "socha-player":
            return _("player command {command!r}").format(command=self.command)
        if self.family == "velha":
            return _("JogoVelha peer at {host}:{port}").format(host=self.host, port=self.port)
        return _("{family} server at {host}:{port}").format(family=self.family, host=self.host, port=self.port)


_current: Target | None = None


def setTarget(target: Target | None) -> None:
    global _current
    _current = target


def target() -> Target:
    if _current is None:
        raise SkipTest(_("no target configured: run the suite with velhanet-check"))
    return _current


class NotRun(SkipTest):
    """The check's precondition does not hold; ``dependsOn`` names the rule whose failure explains it.

    trial hands a skip on as its text only, so the text carries both:
    ``NOT RUN: <dependsOn>|<reason>``.
    """

    def __init__(self, reason: str, dependsOn: str = "") -> None:
        super().__init__(f"{NOT_RUN_PREFIX}{dependsOn}|{reason}")


def parseNotRun(text: str) -> tuple[str, str] | None:
    """(dependsOn, reason) from a NotRun's text, or None for another skip."""
    if not text.startswith(NOT_RUN_PREFIX):
        return None
    dependsOn, _, reason = text[len(NOT_RUN_PREFIX) :].partition("|")
    return dependsOn, reason


def rule(
    anchor: str, *, last: bool = False, stopsTarget: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Tie a check to its rule in ``docs/<family>.md#anchor``.

    ``last``: the check may stop a fragile target (a crash the rule is
    about), so the runner runs it after every other check. ``stopsTarget``:
    stopping the target is what the check asks for (Kill); it runs last and
    the target's end afterwards is no failure.
    """

    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        method.ruleAnchor = anchor  # type: ignore[attr-defined]
        method.runsLast = last or stopsTarget  # type: ignore[attr-defined]
        method.stopsTarget = stopsTarget  # type: ignore[attr-defined]
        return method

    return mark


Item = TypeVar("Item")


class StreamClient(Generic[Item]):
    """A blocking TCP client that decodes what arrives; ``receive`` waits at most ``timeout`` seconds.

    Everything it does goes into the running check's exchange (L{exchange}): the connection, each write
    with its meaning (L{describeSent}), each read with what it decoded to (L{describe}) or why it did not
    decode (what L{decode} put in ``undecoded``), a wait that ran out, the target's close or reset.
    """

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.channel = exchange.newChannel("tcp")
        try:
            self.socket = socket.create_connection((host, port), timeout=timeout)
        except OSError as error:
            failed = _("no connection to {host}:{port}: {error}").format(
                host=host, port=port, error=error.strerror or error
            )
            exchange.current().event(self.channel, failed)
            raise
        local = self.socket.getsockname()
        connected = _("connected to {host}:{port} (from port {local})").format(host=host, port=port, local=local[1])
        exchange.current().event(self.channel, connected)
        self.timeout = timeout
        self.pending: list[Item] = []
        self.undecoded: list[str] = []
        """Why bytes just read did not decode (a decoder appends; the exchange shows it with them)."""
        self.closedByPeer = False

    def decode(self, data: bytes) -> list[Item]:
        raise NotImplementedError  # each protocol's client says how its bytes become messages

    def describe(self, item: Item) -> str:
        """What a decoded message means, for the exchange (each protocol's client says better)."""
        return str(item)

    def describeSent(self, data: bytes) -> str:
        """What bytes we send mean, for the exchange."""
        return ""

    def sendBytes(self, data: bytes) -> None:
        exchange.current().sent(self.channel, data, self.describeSent(data))
        try:
            self.socket.sendall(data)
        except OSError as error:
            exchange.current().event(self.channel, _("could not send: {error}").format(error=error.strerror or error))
            raise

    def receive(self, timeout: float | None = None) -> Item | None:
        waited = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + waited
        while not self.pending:
            remaining = deadline - time.monotonic()
            if self.closedByPeer:
                return None
            if remaining <= 0:
                exchange.current().event(
                    self.channel, _("waited {waited:g} s: nothing more came").format(waited=waited)
                )
                return None
            self.socket.settimeout(remaining)
            try:
                data = self.socket.recv(65536)
            except TimeoutError:
                exchange.current().event(
                    self.channel, _("waited {waited:g} s: nothing more came").format(waited=waited)
                )
                return None
            except ConnectionResetError:
                exchange.current().event(self.channel, _("the target reset the connection"))
                data = b""
            except OSError as error:
                failed = _("the connection failed: {error}").format(error=error.strerror or error)
                exchange.current().event(self.channel, failed)
                data = b""
            if not data:
                if not self.closedByPeer:
                    exchange.current().event(self.channel, _("the target closed the connection"))
                self.closedByPeer = True
                return None
            decoded = self.decode(data)
            meanings = [self.describe(item) for item in decoded] + self.undecoded
            self.undecoded = []
            exchange.current().received(self.channel, data, "; ".join(meanings) or _("(part of a message)"))
            self.pending += decoded
        return self.pending.pop(0)

    def close(self) -> None:
        if self.socket.fileno() != -1 and not self.closedByPeer:
            exchange.current().event(self.channel, _("we closed the connection"))
        self.socket.close()


def tcpReachable(host: str, port: int, timeout: float = 3.0) -> str | None:
    """None if a TCP connection to host:port can be made, else why not."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        why = error.strerror or error
        exchange.current().event(
            "probe", _("a new connection to {host}:{port}: {error}").format(host=host, port=port, error=why)
        )
        return _("no TCP connection to {host}:{port}: {error}").format(host=host, port=port, error=why)
    accepted = _("a new connection to {host}:{port}: accepted (it still serves)").format(host=host, port=port)
    exchange.current().event("probe", accepted)
    return None


class ConformanceCase(SynchronousTestCase):
    """A check against the configured target; failures name the rule they check."""

    family = ""

    def setUp(self) -> None:
        self.target = target()
        if self.target.family != self.family:
            raise SkipTest(_("the target is a {family} implementation").format(family=self.target.family))

    def require(self, condition: object, message: str) -> None:
        """Fail with ``message`` (which names the rule) unless ``condition``."""
        if not condition:
            self.fail(message)

    def precondition(self, condition: object, message: str, dependsOn: str = "", seen: str = "") -> None:
        """Stop the check as NOT RUN unless ``condition``: the target is not where the check starts.

        ``dependsOn`` is the anchor of the rule whose breach explains it, so a
        report names one root cause once; what the set-up saw of that rule,
        kept or broken, is evidence for it (``tally``: ``seen`` names it in a
        word, ``JOIN``), and the runner tries a set-up that failed once more
        on fresh connections before the check is NOT RUN.
        """
        if dependsOn:
            sightings.sighted(dependsOn, bool(condition), seen, message)
        if not condition:
            raise NotRun(message, dependsOn)

    def deviation(self, message: str) -> NoReturn:
        """A known deviation where the text is ambiguous: a warning, or a failure with --strict."""
        if self.target.strict:
            self.fail(message)
        raise SkipTest(WARNING_PREFIX + message)
