"""JogoVelha peer conformance: discovery, invitations, a whole series, refusal when busy, robustness.

The target is a peer at an IP address, listening on UDP port 20181 (or
``--port``). The checker binds its own UDP port on ``--local`` (and a second
address, ``--local2``, for the busy check), so on one machine the target and
the checker need different loopback addresses, e.g. the target on
127.0.0.2 and the checker on 127.0.0.1. The series are played by velhanet's
own match machine (the reference side) with a perfect bot
(``velhanet.conformance.velhaplayer``).

For the series with the target as inviter, start the target so that it
invites ``vinvite`` when it first sees it (``--invite vinvite`` for a
velhanet peer): the checker sends nothing as ``vinvite`` before that check,
whatever the order. Each rule is stated in ``docs/velha.md`` (the anchor
given with ``@rule``).
"""

from __future__ import annotations

import socket
import time

from velhanet.conformance import exchange
from velhanet.conformance.base import NotRun, rule
from velhanet.conformance.velhacase import INVITE_WAIT, INVITED_NICK, OTHER_NICK, VelhaCase
from velhanet.conformance.velhaplayer import Udp, datagramMeaning, receiveStart, streamMeaning
from velhanet.conformance.velhaprobe import DEAF_WAIT
from velhanet.conformance.velhaprobe import canTest as canTest  # the runner asks the family's module
from velhanet.conformance.velhaprobe import probe as probe
from velhanet.velha import wire
from velhanet.velha.invite import ANSWER_DELAY, ANSWER_RESEND


class VelhaConformance(VelhaCase):
    # -- discovery ------------------------------------------------------------------------------

    @rule("velha-hello")
    def test_helloIsAnswered(self) -> None:
        """MSG01 is answered by MSG02 to the sender's IP at port 20181 within 15 s."""
        answer = self.hello(15)
        if answer is None:
            came = self.nothingOr()
            self.require(
                False,
                f"MSG02 must answer MSG01 within {self.target.limit(15)}, sent to our IP at port"
                f" 20181; got {came}{self.answeredAnother()}",
            )

    @rule("velha-malformed-datagrams", last=True)
    def test_malformedDatagramsDoNotStopTheListener(self) -> None:
        """Malformed datagrams are dropped and the UDP listener keeps answering."""
        self.precondition(
            self.hello() is not None,
            f"needs a peer that answers MSG01; got {self.nothingOr()}",
            dependsOn="velha-hello",
        )
        for junk in (b"0101pyBot", b"\xff" * 1000, b"01009Bo", b"99005"):  # each, then MSG01: which one hurt
            self.udp.send(self.peer, junk)
            if self.hello() is None:
                came, why = self.nothingOr(), datagramMeaning(junk).removeprefix("malformed: ")
                self.require(
                    False,
                    f"after the malformed datagram {junk[:12]!r} ({why}) MSG01 must still be answered"
                    f" by MSG02; got {came}{self.answeredAnother()}",
                )

    # -- invitation ----------------------------------------------------------------------------

    @rule("velha-invite")
    def test_inviteAnsweredAndMatchStarts(self) -> None:
        """MSG04 gets MSG05; after MSG06 and the TCP connection the invitee sends MSG07."""
        self.hello()
        answer = self.inviteAnswer()
        self.require(
            answer is not None,
            f"MSG05 must answer MSG04 within {self.target.limit(INVITE_WAIT)}; got {self.nothingOr()}",
        )
        assert isinstance(answer, wire.InviteAnswer)
        for _attempt in range(2):  # a peer still closing the last check's match: twice more, 5 s apart
            if answer is None or answer.accepted:
                break
            self.refused(answer)
            time.sleep(self.target.seconds(5))
            answer = self.inviteAnswer()
        self.require(
            answer is not None and answer.accepted,
            "a peer not in a match (started to accept invitations, the checker's last match ended with MSG10"
            " and closed) must accept MSG04 with a port; got "
            + (self.nothingOr() if answer is None else f"{wire.encode(answer)!r} three times, 5 s apart")
            + self.refusingSince(),
        )
        assert answer is not None
        connection = self.connect(answer)
        data = receiveStart(connection, self.target.seconds(self.target.timeout))
        self.giveUp(connection)
        self.require(
            data,
            "the invitee must send MSG07 once connected and acknowledged;"
            f" got nothing in {self.target.limit(self.target.timeout)}",
        )

    @rule("velha-answer-nick")
    def test_answerCarriesOwnNick(self) -> None:
        """MSG05 carries the nick of the peer that answers."""
        hello = self.hello()
        self.precondition(hello is not None, "needs the peer's own nick from MSG02", dependsOn="velha-hello")
        assert hello is not None
        answer = self.invite()
        connection = self.connect(answer)
        self.giveUp(connection)
        self.require(
            answer.nick.casefold() == hello.nick.casefold(),
            f"MSG05 must carry the answering peer's nick {hello.nick!r}; it carries {answer.nick!r}",
        )

    @rule("velha-no-msg06")
    def test_connectionWithoutMsg06(self) -> None:
        """The TCP connection alone (MSG06 lost) still starts the match."""
        answer = self.invite()
        time.sleep(self.target.seconds(1))  # the peer has settled after its MSG05: no race decides this check
        connection = self.connect(answer, sendAck=False)
        withoutAck = receiveStart(connection, self.target.seconds(5))
        withAck = b""
        if not withoutAck:
            # Leave the peer as the protocol would: the late MSG06 completes the handshake.
            self.udp.send(self.peer, wire.encode(wire.InviteAck()))
            withAck = receiveStart(connection, self.target.seconds(5))
        self.giveUp(connection)
        self.precondition(
            withoutAck or withAck, "needs a peer that sends MSG07 at all (after MSG06 too, none came)", "velha-invite"
        )
        if not withoutAck:
            self.deviation("without MSG06 the invitee never sent MSG07 (the original program needs both)")

    # -- series --------------------------------------------------------------------------------

    @rule("velha-series-invitee")
    def test_fullSeriesAsInvitee(self) -> None:
        """A whole best-of-5 with the target as invitee follows MSG07–MSG09 and ends closed."""
        connection = self.connect(self.invite())
        self.checkSeries(self.playSeries(connection, isInvitee=False))

    @rule("velha-series-inviter")
    def test_fullSeriesAsInviter(self) -> None:
        """A whole best-of-5 with the target as inviter (start it to invite vinvite) ends closed."""
        # vinvite has an address of its own: a peer that lists players by address sees a player apart
        # from the checker's vcheck.
        address = self.target.extra.get("local3", "127.0.0.4")
        try:
            invited = Udp(address, self.target.port)
        except OSError as error:
            self.precondition(False, f"cannot bind {INVITED_NICK}'s UDP port on {address} (--local3): {error}")
            raise
        self.addCleanup(invited.close)
        listener = socket.socket()
        listener.bind((address, 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        # The target learns of us by our MSG01 or MSG02 (a peer deaf to one still hears the other).
        invited.send(self.peer, wire.encode(wire.Hello(INVITED_NICK)))
        invited.send(self.peer, wire.encode(wire.HelloReply(INVITED_NICK)))
        invitation = invited.receive(wire.Invite, self.peer, self.target.seconds(10))
        if invitation is None:
            why = (
                f"the target did not invite {INVITED_NICK} (announced from {address}) within"
                f" {self.target.limit(10)}; start it with --invite {INVITED_NICK}"
            )
            if self.target.extra.get("expectInvite"):
                self.fail(f"the program must invite {INVITED_NICK} (required of it by this run); got nothing: {why}")
            self.skipTest(why)
        # As velhanet's invitee: no answer sooner than 0.5 s after the MSG04
        # (the original starts waiting for it only after its send returns, and
        # drops an earlier one), and again every 2 s until the connection comes.
        time.sleep(self.target.seconds(ANSWER_DELAY))
        answer = wire.encode(wire.InviteAnswer(INVITED_NICK, listener.getsockname()[1]))
        connection = None
        for _ in range(round(30 / ANSWER_RESEND)):
            invited.send(self.peer, answer)
            listener.settimeout(self.target.seconds(ANSWER_RESEND))
            try:
                connection, _ = listener.accept()
                break
            except TimeoutError:
                continue
        if connection is None:
            self.fail(f"after MSG05 with a port, the inviter must connect; it did not within {self.target.limit(30)}")
        exchange.current().event("tcp", f"the target connected to {INVITED_NICK}'s port {listener.getsockname()[1]}")
        self.addCleanup(connection.close)
        self.checkSeries(self.playSeries(connection, isInvitee=True))

    @rule("velha-busy")
    def test_busyPeerRefusesAtOnce(self) -> None:
        """A peer in a match answers another MSG04 at once with MSG05 nick|0."""
        try:
            connection = self.connect(self.invite())
        except NotRun:
            foreign = [(check, a) for check, a in self.target.extra.get("refusals", []) if a.nick.startswith("vcheck")]
            if foreign:  # a refusal it sent in another check is graded here, by its own rule
                check, answer = foreign[0]
                self.deviation(
                    f"a refusal received during {check or 'another check'}, {wire.encode(answer)!r},"
                    " carries the inviter's nick instead of its own"
                )
            raise
        receiveStart(connection, self.target.seconds(5))
        other = Udp(self.target.extra.get("local2", "127.0.0.3"), self.target.port)
        self.addCleanup(other.close)
        other.send(self.peer, wire.encode(wire.Hello(OTHER_NICK)))
        deaf = self.target.extra.get("answersHello") is False  # then its MSG02 costs only the short wait
        other.receive(wire.HelloReply, self.peer, self.target.seconds(DEAF_WAIT if deaf else 5))
        other.send(self.peer, wire.encode(wire.Invite(OTHER_NICK)))
        answer = other.receive(wire.InviteAnswer, self.peer, self.target.seconds(5))
        self.giveUp(connection)
        self.require(
            answer is not None, f"a busy peer must answer MSG04 at once; got nothing in {self.target.limit(5)}"
        )
        assert isinstance(answer, wire.InviteAnswer)
        self.require(answer.port == 0, f"a busy peer must refuse with port 0; got port {answer.port}")
        if answer.nick == OTHER_NICK:
            self.deviation("the refusal carries the inviter's nick instead of its own (as the original program)")

    @rule("velha-malformed-frame", last=True)
    def test_malformedFrameDoesNotBreakTheMatch(self) -> None:
        """A malformed TCP frame is dropped; the match goes on."""
        connection = self.connect(self.invite())
        data = receiveStart(connection, self.target.seconds(self.target.timeout))
        if not data:
            self.giveUp(connection)
        self.precondition(data, "needs a match that starts with MSG07", dependsOn="velha-invite")
        start = [item for _, item in wire.StreamDecoder().feed(data)]
        assert isinstance(start[0], wire.MatchStart)
        weStart = start[0].who == wire.MatchStart.INVITER_STARTS
        exchange.current().sent("tcp", b"08x065\n", streamMeaning(b"08x065\n"))
        connection.sendall(b"08x065\n")
        try:
            if weStart:
                move = wire.encodeStream(wire.Move(5))
                exchange.current().sent("tcp", move, streamMeaning(move))
                connection.sendall(move)
                reply = self.streamReply(connection)
            else:
                reply = list(start[1:]) or self.streamReply(connection)
        except TimeoutError:
            exchange.current().event("tcp", "waited 10 s: nothing more came")
            reply = []
        self.giveUp(connection)
        self.require(
            reply and isinstance(reply[0], wire.Move),
            f"after a malformed frame (and our move) the target must still play; got {reply}",
        )
