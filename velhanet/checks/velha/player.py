"""The checker's own JogoVelha side: its UDP port, and a series played over a TCP socket by
velhanet's match machine (the reference side) with a perfect bot.

The checks in ``velhanet.checks.velha.rules`` use these with blocking sockets
and the wall clock, as a student's program would be met on a LAN: the match
machine's ``Clock`` is advanced by the wall clock as the series runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import select
import socket
import time

from twisted.internet.task import Clock

from velhanet.bots.tictactoe import PerfectBot
from velhanet.checks import exchange
from velhanet.games.kinarow import KInARowState
from velhanet.i18n import N_, _, ngettext
from velhanet.velha import wire
from velhanet.velha.room import MatchCore, MatchMachine, MatchSettings, deliver, placeToPosition
from velhanet.velha.said import said


def meaning(message: object) -> str:
    """``MSG05 nick=Bo port=0``: a decoded JogoVelha message in the exchange's words."""
    fields = ", ".join(f"{name}={value}" for name, value in fieldsOf(message).items())
    return f"MSG{message.ID:02d} {fields}".strip()  # type: ignore[attr-defined]


def fieldsOf(message: object) -> dict[str, object]:
    if not dataclasses.is_dataclass(message):
        return {}
    return {field.name: getattr(message, field.name) for field in dataclasses.fields(message)}


def datagramMeaning(data: bytes) -> str:
    """What a datagram means, or why it is malformed (``malformed: header says 5 characters but …``)."""
    try:
        return meaning(wire.decodeDatagram(data))
    except wire.MalformedMessage as error:
        return malformed(error)


def whyMalformed(data: bytes) -> str:
    """Why a datagram does not decode (``header says 5 characters but …``); empty if it does."""
    try:
        wire.decodeDatagram(data)
    except wire.MalformedMessage as error:
        return str(error)
    return ""


def malformed(error: object) -> str:
    """``malformed: header says 5 characters but …``: bytes that do not decode, in the exchange's words."""
    return _("malformed: {error}").format(error=error)


class Udp:
    """Our UDP port: send to the target at the protocol port, receive decoded datagrams.

    Every datagram sent, and every one received from the target (whatever its kind, malformed ones
    with why), goes into the running check's exchange.
    """

    def __init__(self, local: str, port: int) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((local, port))
        self.socket.setblocking(False)  # read only when select says a datagram is there
        self.port = port
        self.channel = f"udp {local}"
        self.malformed: list[tuple[bytes, str]] = []
        """Datagrams from the target that did not decode, with why: evidence, never "nothing"."""

    def send(self, host: str, data: bytes) -> None:
        sentTo = _("to {host}:{port}: {meaning}").format(host=host, port=self.port, meaning=datagramMeaning(data))
        exchange.current().sent(self.channel, data, sentTo)
        self.socket.sendto(data, (host, self.port))

    def receive(self, kind: type, sender: str, timeout: float, unless: socket.socket | None = None) -> object | None:
        """The next datagram of ``kind`` from ``sender`` within ``timeout`` seconds.

        ``unless``: a socket whose news ends the wait at once (None): the
        connected socket that sent our datagram, on which an ICMP "port
        unreachable" arrives when nothing listens any more.
        """
        deadline = time.monotonic() + timeout
        watched = [self.socket] if unless is None else [self.socket, unless]
        wanted = f"MSG{kind.ID:02d}" if hasattr(kind, "ID") else kind.__name__
        noneCame = _("waited {timeout:g} s for {wanted} from {sender}: none came")
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                exchange.current().event(self.channel, noneCame.format(timeout=timeout, wanted=wanted, sender=sender))
                return None
            ready, _writable, _failed = select.select(watched, [], [], remaining)
            if not ready:
                exchange.current().event(self.channel, noneCame.format(timeout=timeout, wanted=wanted, sender=sender))
                return None
            if self.socket not in ready:
                return None  # news on ``unless``: its reader says what it is
            try:
                data, (host, port) = self.socket.recvfrom(2048)
            except (TimeoutError, BlockingIOError):
                continue
            if host != sender:
                continue
            try:
                message = wire.decodeDatagram(data)
            except wire.MalformedMessage as error:
                self.malformed.append((data, str(error)))
                came = _("from {host}:{port}: malformed: {error}").format(host=host, port=port, error=error)
                exchange.current().received(self.channel, data, came)
                continue
            came = _("from {host}:{port}: {meaning}").format(host=host, port=port, meaning=meaning(message))
            exchange.current().received(self.channel, data, came)
            if isinstance(message, kind):
                return message

    def instead(self) -> str:
        """What came from the target since the last call instead of an answer: "nothing", or the malformed
        datagrams it sent, each with why (evidence, never "nothing" when something came)."""
        came, self.malformed = self.malformed, []
        if not came:
            return _("nothing")
        received = _("received {raw!r}: {why}")
        shown = "; ".join(received.format(raw=raw.decode("latin-1"), why=why) for raw, why in came[:3])
        if len(came) > 3:
            more = len(came) - 3
            return ngettext(
                "only malformed datagrams: {shown} (and {n} more)",
                "only malformed datagrams: {shown} (and {n} more)",
                more,
            ).format(shown=shown, n=more)
        return _("only malformed datagrams: {shown}").format(shown=shown)

    def close(self) -> None:
        self.socket.close()


def helloRoundTrip(
    udp: Udp, local: str, host: str, port: int, nick: str, wait: float, anyMore: bool = False
) -> tuple[str | None, bool]:
    """Send MSG01; (why the peer at host:port cannot be reached, or None; whether MSG02 came within ``wait``).

    ``anyMore``: the peer was reached before (the probe after a check), and the reason says it is not any more.

    MSG02 goes to our address at the protocol port, where ``udp`` listens,
    from whatever port the peer likes (the original program answers from a
    new one), so it is received there. The MSG01 leaves from a second, connected
    socket bound on ``local``: the kernel reports an ICMP "port unreachable"
    only on a connected socket, and the wait ends as soon as either comes.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        try:
            sender.bind((local, 0))
            sender.connect((host, port))
            hello = wire.encode(wire.Hello(nick))
            probe = _("to {host}:{port}, a probe: {meaning}").format(
                host=host, port=port, meaning=datagramMeaning(hello)
            )
            exchange.current().sent(f"udp {local}", hello, probe)
            sender.send(hello)
            answered = udp.receive(wire.HelloReply, host, wait, unless=sender) is not None
            sender.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sender.recv(64)  # raises the ICMP error, if one came
        except ConnectionRefusedError:
            unreachable = _("ICMP port unreachable: nothing listens on UDP {host}:{port}")
            exchange.current().event(f"udp {local}", unreachable.format(host=host, port=port))
            if anyMore:
                return _("nothing listens on UDP {host}:{port} any more").format(host=host, port=port), False
            return _("nothing listens on UDP {host}:{port}").format(host=host, port=port), False
        except OSError as error:
            why = error.strerror or error
            if anyMore:
                return _("cannot reach {host}:{port}: {error} any more").format(host=host, port=port, error=why), False
            return _("cannot reach {host}:{port}: {error}").format(host=host, port=port, error=why), False
    return None, answered


class Recorder:
    """The match observer of the reference side: remembers events; asks the driver to move."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []
        self.turn: KInARowState | None = None

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.events.append(("game", (gameNumber, iStart)))

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        self.events.append(("moved", (position, byMe)))

    def yourTurn(self, board: KInARowState) -> None:
        self.turn = board

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        self.events.append(("gameOver", (result, score)))

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self.events.append(("seriesOver", (result, score)))

    def matchEnded(self, reason: str) -> None:
        self.events.append(("ended", reason))

    def notice(self, text: str) -> None:
        self.events.append(("notice", text))

    def of(self, kind: str) -> list[object]:
        return [value for k, value in self.events if k == kind]


class SeriesDriver:
    """Play one series over a connected TCP socket with velhanet's match machine and a perfect bot."""

    def __init__(self, connection: socket.socket, isInvitee: bool, moveDelay: float = 0.3) -> None:
        self.connection = connection
        self.channel = exchange.newChannel("tcp")
        self.recorder = Recorder()
        self.decoder = wire.StreamDecoder()
        self.malformed: list[str] = []
        self.afterTheEnd: list[str] = []
        """What the target sent after the series was decided (a game it started after a third win)."""
        self.closeWanted = False
        self.peerClosed = False
        self.bot = PerfectBot(seed=1)
        self.moveDelay = moveDelay
        self.clock = Clock()
        """The match machine's clock, advanced by the wall clock as the driver runs."""
        self.started = time.monotonic()
        self.settings = MatchSettings()
        self.machine = MatchMachine(
            MatchCore(
                isInvitee=isInvitee,
                send=self._send,
                close=self._wantClose,
                observer=self.recorder,
                peerNick="target",
                clock=self.clock,
                settings=self.settings,
                random=random.Random(3),
            )
        )

    def _send(self, message: wire.StreamMessage) -> None:
        data = wire.encodeStream(message)
        exchange.current().sent(self.channel, data, meaning(message))
        with contextlib.suppress(OSError):  # the peer has gone: the next read says so
            self.connection.sendall(data)

    def _wantClose(self) -> None:
        self.closeWanted = True

    def run(self, timeout: float) -> None:
        """Play until the series ends (or ``timeout``); then give the peer 3 s to close first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.closeWanted and not self.peerClosed:
            self.clock.advance(time.monotonic() - self.started - self.clock.seconds())
            if self.recorder.turn is not None:
                board, self.recorder.turn = self.recorder.turn, None
                time.sleep(self.moveDelay)  # the reference program mishandles instant replies
                self.machine.localMove(placeToPosition(self.bot.chooseMove(board)))
                continue
            self._read(min(1.0, self._untilNextTimer(), max(0.01, deadline - time.monotonic())))
        if self.closeWanted and not self.peerClosed:
            closeBy = time.monotonic() + 3
            while not self.peerClosed and time.monotonic() < closeBy:
                self._read(closeBy - time.monotonic())

    def _untilNextTimer(self) -> float:
        """Wall seconds until the match machine's next timer is due: a read waits no longer."""
        due = [call.getTime() for call in self.clock.getDelayedCalls()]
        if not due:
            return 1.0
        return min(due) - (time.monotonic() - self.started)

    def _read(self, timeout: float) -> None:
        self.connection.settimeout(max(timeout, 0.01))
        try:
            data = self.connection.recv(4096)
        except TimeoutError:
            return
        except OSError as error:
            failed = _("the connection failed: {error}").format(error=error.strerror or error)
            exchange.current().event(self.channel, failed)
            data = b""
        if not data:
            exchange.current().event(self.channel, _("the target closed the connection"))
            self.peerClosed = True
            self.machine.connectionLost(said(N_("closed by the target")))
            return
        meanings, messages = [], []
        for raw, item in self.decoder.feed(data):
            if isinstance(item, wire.MalformedMessage):
                self.malformed.append(f"{raw!r}: {item}")
                meanings.append(malformed(item))
            else:
                meanings.append(meaning(item))
                messages.append(item)
        exchange.current().received(self.channel, data, "; ".join(meanings) or _("(part of a message)"))
        if self.recorder.of("seriesOver"):  # the series is decided: anything more is the target playing on
            self.afterTheEnd += [meaning(message) for message in messages]
        for message in messages:  # after the record of what came: the answers come after it too
            deliver(self.machine, message)


def receiveStart(connection: socket.socket, timeout: float) -> bytes:
    """The first bytes of the match if they are a MSG07 within ``timeout``, else empty."""
    connection.settimeout(timeout)
    try:
        data = connection.recv(64)
    except TimeoutError:
        exchange.current().event("tcp", _("waited {timeout:g} s for MSG07: none came").format(timeout=timeout))
        return b""
    except OSError as error:
        exchange.current().event("tcp", _("the connection failed: {error}").format(error=error.strerror or error))
        return b""
    if not data:
        exchange.current().event("tcp", _("the target closed the connection before MSG07"))
        return b""
    exchange.current().received("tcp", data, streamMeaning(data))
    return data if data.startswith(b"07") else b""


def streamMeaning(data: bytes) -> str:
    """What bytes of a match connection mean (each message, or why it is malformed)."""
    meanings = []
    for _raw, item in wire.StreamDecoder().feed(data):
        meanings.append(malformed(item) if isinstance(item, wire.MalformedMessage) else meaning(item))
    return "; ".join(meanings) or _("(part of a message)")
