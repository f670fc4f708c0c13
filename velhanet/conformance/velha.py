"""JogoVelha peer conformance: discovery, invitations, a whole series, refusal when busy, robustness.

The target is a peer at an IP address, listening on UDP port 20181 (or
``--port``). The checker binds its own UDP port on ``--local`` (and a second
address, ``--local2``, for the busy check), so on one machine the target and
the checker need different loopback addresses, e.g. the target on
127.0.0.2 and the checker on 127.0.0.1. The series are played by velhanet's
own match machine (the reference side) with a perfect bot.

For the series as invitee, start the target with ``--invite vcheck``: it
invites the checker when it first sees it, so that check runs first
(``test_00_…``).
"""

from __future__ import annotations

import random
import socket
import time

from twisted.internet.task import Clock

from velhanet.bots.tictactoe import PerfectBot
from velhanet.conformance.base import ConformanceCase
from velhanet.games.kinarow import KInARowState
from velhanet.velha import wire
from velhanet.velha.match import MatchCore, MatchMachine, placeToPosition

NICK = "vcheck"
OTHER_NICK = "vcheck2"


class Udp:
    """Our UDP port: send to the target at the protocol port, receive decoded datagrams."""

    def __init__(self, local: str, port: int) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((local, port))
        self.port = port

    def send(self, host: str, data: bytes) -> None:
        self.socket.sendto(data, (host, self.port))

    def receive(self, kind: type, sender: str, timeout: float) -> object | None:
        """The next datagram of ``kind`` from ``sender`` within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.socket.settimeout(remaining)
            try:
                data, (host, _) = self.socket.recvfrom(2048)
            except TimeoutError:
                return None
            if host != sender:
                continue
            try:
                message = wire.decodeDatagram(data)
            except wire.MalformedMessage:
                continue
            if isinstance(message, kind):
                return message

    def close(self) -> None:
        self.socket.close()


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
        self.recorder = Recorder()
        self.decoder = wire.StreamDecoder()
        self.malformed: list[str] = []
        self.closeWanted = False
        self.peerClosed = False
        self.bot = PerfectBot(seed=1)
        self.moveDelay = moveDelay
        self.clock = Clock()
        """The match machine's clock, advanced by the wall clock as the driver runs."""
        self.started = time.monotonic()
        self.machine = MatchMachine(
            MatchCore(
                isInvitee=isInvitee,
                send=lambda message: connection.sendall(wire.encodeStream(message)),
                close=self._wantClose,
                observer=self.recorder,  # type: ignore[arg-type]
                peerNick="target",
                clock=self.clock,
                random=random.Random(3),
            )
        )

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
            self._read(min(1.0, max(0.01, deadline - time.monotonic())))
        if self.closeWanted and not self.peerClosed:
            closeBy = time.monotonic() + 3
            while not self.peerClosed and time.monotonic() < closeBy:
                self._read(closeBy - time.monotonic())

    def _read(self, timeout: float) -> None:
        self.connection.settimeout(max(timeout, 0.01))
        try:
            data = self.connection.recv(4096)
        except TimeoutError:
            return
        except OSError:
            data = b""
        if not data:
            self.peerClosed = True
            self.machine.connectionLost("closed by the target")
            return
        for raw, item in self.decoder.feed(data):
            if isinstance(item, wire.MalformedMessage):
                self.malformed.append(f"{raw!r}: {item}")
            elif isinstance(item, wire.MatchStart):
                self.machine.startReceived(item.who)
            elif isinstance(item, wire.Move):
                self.machine.remoteMove(item.position)
            elif isinstance(item, wire.NewGame):
                self.machine.remoteNewGame()
            else:
                self.machine.remoteGiveUp()


class VelhaConformance(ConformanceCase):
    family = "velha"

    def setUp(self) -> None:
        super().setUp()
        self.peer = self.target.host
        self.udp = Udp(self.target.extra.get("local", "127.0.0.1"), self.target.port)
        self.addCleanup(self.udp.close)

    def hello(self) -> wire.HelloReply | None:
        self.udp.send(self.peer, wire.encode(wire.Hello(NICK)))
        return self.udp.receive(wire.HelloReply, self.peer, 15)  # type: ignore[return-value]

    def invite(self) -> wire.InviteAnswer:
        """Invite the target; a refusal is retried a few times (the last check's match may still be closing)."""
        self.hello()
        for attempt in range(4):
            self.udp.send(self.peer, wire.encode(wire.Invite(NICK)))
            answer = self.udp.receive(wire.InviteAnswer, self.peer, 30)
            self.require(answer is not None, "MSG05 must answer MSG04 within 30 s (text: MSG05); got nothing")
            assert isinstance(answer, wire.InviteAnswer)
            if answer.accepted or attempt == 3:
                return answer
            self.udp.send(self.peer, wire.encode(wire.InviteAck()))
            time.sleep(1)
        raise AssertionError("unreachable")

    def connect(self, answer: wire.InviteAnswer, sendAck: bool = True) -> socket.socket:
        self.require(
            answer.accepted,
            f"the target must accept invitations for this check (run it with --bot or "
            f"--accept always); it answered {wire.encode(answer)!r}",
        )
        if sendAck:
            self.udp.send(self.peer, wire.encode(wire.InviteAck()))
        connection = socket.create_connection((self.peer, answer.port), timeout=10)
        self.addCleanup(connection.close)
        return connection

    def playSeries(self, connection: socket.socket, isInvitee: bool) -> SeriesDriver:
        driver = SeriesDriver(connection, isInvitee)
        if isInvitee:
            driver.machine.begin()
        else:
            driver.machine.awaitStart()
        driver.run(timeout=180)
        return driver

    def checkSeries(self, driver: SeriesDriver) -> None:
        broken = [reason for reason in driver.recorder.of("ended") if "broke a rule" in str(reason)]
        self.require(
            not broken, f"the target broke a rule of the match (text MSG08/MSG09): {broken[0] if broken else ''}"
        )
        self.require(not driver.malformed, f"the target sent malformed TCP frames: {driver.malformed[:2]}")
        over = driver.recorder.of("seriesOver")
        self.require(
            over,
            f"the series must end at a third win or after the fifth game (text MSG09); "
            f"events: {driver.recorder.events[-3:]}",
        )
        self.require(
            driver.peerClosed,
            "after the series the connection is closed automatically "
            "(text MSG09: 'a conexão será automaticamente encerrada'); it stayed open",
        )
        notices = [str(n) for n in driver.recorder.of("notice") if "text MSG" in str(n)]
        if notices:
            self.deviation(f"the target deviates from the text but the game stayed well defined: {notices[0]}")

    # -- discovery ------------------------------------------------------------------------------

    def test_helloIsAnswered(self) -> None:
        """MSG01 is answered by MSG02 to the sender's IP at port 20181 within 15 s (text: MSG02)."""
        answer = self.hello()
        self.require(
            answer is not None,
            "MSG02 must answer MSG01 within 15 s, sent to our IP at port 20181 (text: MSG02); got nothing",
        )

    def test_malformedDatagramsDoNotStopTheListener(self) -> None:
        """Malformed datagrams are dropped and the UDP listener keeps answering (robustness)."""
        for junk in (b"0101pyBot", b"\xff" * 1000, b"01009Bo", b"99005"):
            self.udp.send(self.peer, junk)
        self.require(self.hello() is not None, "after malformed datagrams MSG01 must still be answered by MSG02")

    # -- invitation ----------------------------------------------------------------------------

    def test_inviteAnsweredAndMatchStarts(self) -> None:
        """MSG04 gets MSG05; after MSG06 and the TCP connection the invitee sends MSG07 (text: MSG05–MSG07)."""
        connection = self.connect(self.invite())
        connection.settimeout(30)
        data = connection.recv(64)
        items = [item for _, item in wire.StreamDecoder().feed(data)]
        self.require(
            items and isinstance(items[0], wire.MatchStart),
            f"the invitee must send MSG07 once connected (text: MSG07); got {data!r}",
        )
        connection.sendall(wire.encodeStream(wire.GiveUp()))

    def test_answerCarriesOwnNick(self) -> None:
        """MSG05 carries the nick of the peer that answers (text: MSG05 'Apelido … quem está enviando')."""
        hello = self.hello()
        answer = self.invite()
        if hello is not None and answer.nick.casefold() != hello.nick.casefold():
            self.deviation(f"MSG05 names {answer.nick!r}, but the peer calls itself {hello.nick!r}")
        if answer.accepted:
            self.udp.send(self.peer, wire.encode(wire.InviteAck()))
            connection = socket.create_connection((self.peer, answer.port), timeout=10)
            connection.sendall(wire.encodeStream(wire.GiveUp()))
            connection.close()

    def test_connectionWithoutMsg06(self) -> None:
        """The TCP connection alone (MSG06 lost) still starts the match (velhanet decision; the reference waits)."""
        connection = self.connect(self.invite(), sendAck=False)
        connection.settimeout(5)
        try:
            data = connection.recv(64)
        except TimeoutError:
            data = b""
        if not data.startswith(b"07"):
            self.deviation("without MSG06 the invitee never sent MSG07 (the reference program needs both)")
        connection.sendall(wire.encodeStream(wire.GiveUp()))

    # -- series --------------------------------------------------------------------------------

    def test_fullSeriesAsInviter(self) -> None:
        """A whole best-of-5 with the target as invitee follows MSG07–MSG09 and ends closed (text)."""
        connection = self.connect(self.invite())
        self.checkSeries(self.playSeries(connection, isInvitee=False))

    def test_00_fullSeriesAsInvitee(self) -> None:
        """A whole best-of-5 with the target as inviter (start it with --invite vcheck) (text MSG04–MSG09)."""
        listener = socket.socket()
        listener.bind((self.target.extra.get("local", "127.0.0.1"), 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        self.udp.send(self.peer, wire.encode(wire.HelloReply(NICK)))
        self.udp.send(self.peer, wire.encode(wire.Hello(NICK)))
        invitation = self.udp.receive(wire.Invite, self.peer, 10)
        if invitation is None:
            self.skipTest("the target did not invite us within 10 s: start it with --invite vcheck")
        self.udp.send(self.peer, wire.encode(wire.InviteAnswer(NICK, listener.getsockname()[1])))
        listener.settimeout(30)
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            self.fail("after MSG05 with a port, the inviter must connect (text: MSG06); it did not within 30 s")
        self.addCleanup(connection.close)
        self.checkSeries(self.playSeries(connection, isInvitee=True))

    def test_busyPeerRefusesAtOnce(self) -> None:
        """A peer in a match answers another MSG04 at once with MSG05 nick|0 (text: MSG05, automatic refusal)."""
        connection = self.connect(self.invite())
        connection.settimeout(5)
        connection.recv(64)  # MSG07
        other = Udp(self.target.extra.get("local2", "127.0.0.3"), self.target.port)
        self.addCleanup(other.close)
        other.send(self.peer, wire.encode(wire.Hello(OTHER_NICK)))
        other.receive(wire.HelloReply, self.peer, 5)
        other.send(self.peer, wire.encode(wire.Invite(OTHER_NICK)))
        answer = other.receive(wire.InviteAnswer, self.peer, 5)
        connection.sendall(wire.encodeStream(wire.GiveUp()))
        self.require(answer is not None, "a busy peer must answer MSG04 at once (text: MSG05); got nothing in 5 s")
        assert isinstance(answer, wire.InviteAnswer)
        self.require(answer.port == 0, f"a busy peer must refuse with port 0 (text: MSG05); got port {answer.port}")
        if answer.nick == OTHER_NICK:
            self.deviation("the refusal carries the inviter's nick instead of its own (as the reference program)")

    def test_malformedFrameDoesNotBreakTheMatch(self) -> None:
        """A malformed TCP frame is dropped; the match goes on (robustness; the reference's reader dies)."""
        connection = self.connect(self.invite())
        connection.settimeout(10)
        start = [item for _, item in wire.StreamDecoder().feed(connection.recv(64))]
        self.require(start and isinstance(start[0], wire.MatchStart), "MSG07 must come first")
        assert isinstance(start[0], wire.MatchStart)
        weStart = start[0].who == wire.MatchStart.INVITER_STARTS
        connection.sendall(b"08x065\n")
        if weStart:
            connection.sendall(wire.encodeStream(wire.Move(5)))
            reply = [item for _, item in wire.StreamDecoder().feed(connection.recv(64))]
            self.require(
                reply and isinstance(reply[0], wire.Move),
                f"after a malformed frame and our move, the target must answer with its move; got {reply}",
            )
        else:
            reply = start[1:] or [item for _, item in wire.StreamDecoder().feed(connection.recv(64))]
            self.require(reply and isinstance(reply[0], wire.Move), f"the target must still play; got {reply}")
        connection.sendall(wire.encodeStream(wire.GiveUp()))
