"""JogoVelha peer conformance: discovery, invitations, a whole series, refusal when busy, robustness.

The target is a peer at an IP address, listening on UDP port 20181 (or
``--port``). The checker binds its own UDP port on ``--local`` (and a second
address, ``--local2``, for the busy check), so on one machine the target and
the checker need different loopback addresses, e.g. the target on
127.0.0.2 and the checker on 127.0.0.1. The series are played by velhanet's
own match machine (the reference side) with a perfect bot
(``velhanet.checks.velha.player``).

For the series with the target as inviter, start the target so that it
invites ``vinvite`` when it first sees it (``--invite vinvite`` for a
velhanet peer): the checker sends nothing as ``vinvite`` before that check,
whatever the order. Each rule is stated in ``docs/velha.md`` (the anchor
given with ``@rule``).
"""

from __future__ import annotations

import socket
import time

from velhanet.checks import exchange
from velhanet.checks.base import NotRun, rule
from velhanet.checks.velha.case import INVITE_WAIT, INVITED_NICK, OTHER_NICK, VelhaCase
from velhanet.checks.velha.player import Udp, receiveStart, streamMeaning, whyMalformed
from velhanet.checks.velha.probe import DEAF_WAIT
from velhanet.checks.velha.probe import canTest as canTest  # the runner asks the family's module
from velhanet.checks.velha.probe import probe as probe
from velhanet.i18n import _
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
                _("MSG02 must answer MSG01 within {limit}, sent to our IP at port 20181; got {came}{another}").format(
                    limit=self.target.limit(15), came=came, another=self.answeredAnother()
                ),
            )

    @rule("velha-malformed-datagrams", last=True)
    def test_malformedDatagramsDoNotStopTheListener(self) -> None:
        """Malformed datagrams are dropped and the UDP listener keeps answering."""
        self.precondition(
            self.hello() is not None,
            _("needs a peer that answers MSG01; got {came}").format(came=self.nothingOr()),
            dependsOn="velha-hello",
            seen="MSG01",
        )
        for junk in (b"0101pyBot", b"\xff" * 1000, b"01009Bo", b"99005"):  # each, then MSG01: which one hurt
            self.udp.send(self.peer, junk)
            if self.hello() is None:
                came, why = self.nothingOr(), whyMalformed(junk)
                self.require(
                    False,
                    _(
                        "after the malformed datagram {junk!r} ({why}) MSG01 must still be answered"
                        " by MSG02; got {came}{another}"
                    ).format(junk=junk[:12], why=why, came=came, another=self.answeredAnother()),
                )

    # -- invitation ----------------------------------------------------------------------------

    @rule("velha-invite")
    def test_inviteAnsweredAndMatchStarts(self) -> None:
        """MSG04 gets MSG05; after MSG06 and the TCP connection the invitee sends MSG07."""
        self.hello()
        answer = self.inviteAnswer()
        self.require(
            answer is not None,
            _("MSG05 must answer MSG04 within {limit}; got {came}").format(
                limit=self.target.limit(INVITE_WAIT), came=self.nothingOr()
            ),
        )
        assert isinstance(answer, wire.InviteAnswer)
        for _attempt in range(2):  # a peer still closing the last check's match: twice more, 5 s apart
            if answer is None or answer.accepted:
                break
            self.refused(answer)
            time.sleep(self.target.seconds(5))
            answer = self.inviteAnswer()
        came = (
            self.nothingOr()
            if answer is None
            else _("{answer!r} three times, 5 s apart").format(answer=wire.encode(answer))
        )
        self.require(
            answer is not None and answer.accepted,
            _(
                "a peer not in a match (started to accept invitations, the checker's last match ended with MSG10"
                " and closed) must accept MSG04 with a port; got {came}{since}"
            ).format(came=came, since=self.refusingSince()),
        )
        assert answer is not None
        connection = self.connect(answer)
        data = receiveStart(connection, self.target.seconds(self.target.timeout))
        self.giveUp(connection)
        self.require(
            data,
            _("the invitee must send MSG07 once connected and acknowledged; got nothing in {limit}").format(
                limit=self.target.limit(self.target.timeout)
            ),
        )

    @rule("velha-answer-nick")
    def test_answerCarriesOwnNick(self) -> None:
        """MSG05 carries the nick of the peer that answers."""
        hello = self.hello()
        self.precondition(
            hello is not None, _("needs the peer's own nick from MSG02"), dependsOn="velha-hello", seen="MSG01"
        )
        assert hello is not None
        answer = self.invite()
        connection = self.connect(answer)
        self.giveUp(connection)
        self.require(
            answer.nick.casefold() == hello.nick.casefold(),
            _("MSG05 must carry the answering peer's nick {nick!r}; it carries {carried!r}").format(
                nick=hello.nick, carried=answer.nick
            ),
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
            withoutAck or withAck,
            _("needs a peer that sends MSG07 at all (after MSG06 too, none came)"),
            "velha-invite",
            "MSG07",
        )
        if not withoutAck:
            self.deviation(_("without MSG06 the invitee never sent MSG07 (the original program needs both)"))

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
            cannot = _("cannot bind {nick}'s UDP port on {address} (--local3): {error}")
            self.precondition(False, cannot.format(nick=INVITED_NICK, address=address, error=error))
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
            why = _(
                "the target did not invite {nick} (announced from {address}) within {limit};"
                " start it with --invite {nick}"
            ).format(nick=INVITED_NICK, address=address, limit=self.target.limit(10))
            if self.target.extra.get("expectInvite"):
                self.fail(
                    _("the program must invite {nick} (required of it by this run); got nothing: {why}").format(
                        nick=INVITED_NICK, why=why
                    )
                )
            self.skipTest(why)
        # As velhanet's invitee: no answer sooner than 0.5 s after the MSG04
        # (the original starts waiting for it only after its send returns, and
        # drops an earlier one), and again every 2 s until the connection comes.
        time.sleep(self.target.seconds(ANSWER_DELAY))
        answer = wire.encode(wire.InviteAnswer(INVITED_NICK, listener.getsockname()[1]))
        connection = None
        for _resend in range(round(30 / ANSWER_RESEND)):
            invited.send(self.peer, answer)
            listener.settimeout(self.target.seconds(ANSWER_RESEND))
            try:
                connection, _address = listener.accept()
                break
            except TimeoutError:
                continue
        if connection is None:
            self.fail(
                _("after MSG05 with a port, the inviter must connect; it did not within {limit}").format(
                    limit=self.target.limit(30)
                )
            )
        connected = _("the target connected to {nick}'s port {port}")
        exchange.current().event("tcp", connected.format(nick=INVITED_NICK, port=listener.getsockname()[1]))
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
                    _(
                        "a refusal received during {check}, {answer!r}, carries the inviter's nick instead of its own"
                    ).format(check=check or _("another check"), answer=wire.encode(answer))
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
            answer is not None,
            _("a busy peer must answer MSG04 at once; got nothing in {limit}").format(limit=self.target.limit(5)),
        )
        assert isinstance(answer, wire.InviteAnswer)
        self.require(
            answer.port == 0, _("a busy peer must refuse with port 0; got port {port}").format(port=answer.port)
        )
        if answer.nick == OTHER_NICK:
            self.deviation(_("the refusal carries the inviter's nick instead of its own (as the original program)"))

    @rule("velha-malformed-frame", last=True)
    def test_malformedFrameDoesNotBreakTheMatch(self) -> None:
        """A malformed TCP frame is dropped; the match goes on."""
        connection = self.connect(self.invite())
        data = receiveStart(connection, self.target.seconds(self.target.timeout))
        if not data:
            self.giveUp(connection)
        self.precondition(data, _("needs a match that starts with MSG07"), dependsOn="velha-invite", seen="MSG07")
        start = [item for _raw, item in wire.StreamDecoder().feed(data)]
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
            exchange.current().event("tcp", _("waited {waited:g} s: nothing more came").format(waited=10))
            reply = []
        self.giveUp(connection)
        self.require(
            reply and isinstance(reply[0], wire.Move),
            _("after a malformed frame (and our move) the target must still play; got {reply}").format(reply=reply),
        )
