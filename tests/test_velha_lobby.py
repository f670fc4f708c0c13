"""Discovery, roster and every invitation handshake path, on an in-memory LAN."""

from __future__ import annotations

import random

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer
from zope.interface.verify import verifyObject

from tests.velha_harness import matchProtocolFor
from velhanet.velha import wire
from velhanet.velha.interfaces import IDatagramReceiver, IDatagramSender, IMatchHost, IMatchLink, IPresenceListener
from velhanet.velha.presence import ANNOUNCE_EVERY, ANSWER_WINDOW, Presence, PresenceCore, PresenceMachine
from velhanet.velha.protocol import VelhaDatagramProtocol
from velhanet.velha.roster import MAX_PLAYERS, NICKS_PER_ADDRESS, Roster

from .velha_harness import BotRecorder, Datagram, FakeLan, Recorder

A, B, C = "198.18.0.1", "198.18.0.2", "198.18.0.3"
HANDSHAKE_KINDS = (wire.Invite, wire.InviteAnswer, wire.InviteAck)


def isKind(datagram: Datagram, kind: type[object]) -> bool:
    return isinstance(wire.decode(datagram[2]), kind)


class RosterTests(SynchronousTestCase):
    def test_addRefreshExpireRemove(self) -> None:
        roster = Roster()
        self.assertTrue(roster.seen("Bo", "198.18.0.2", 0))
        self.assertFalse(roster.seen("bo", "198.18.0.9", 10))
        entry = roster.get("BO")
        assert entry is not None
        self.assertEqual((entry.address, entry.lastSeen), ("198.18.0.9", 10))
        roster.seen("Ana", "198.18.0.1", 5)
        self.assertEqual([e.nick for e in roster.expire(silentSince=8)], ["Ana"])
        self.assertIn("Bo", roster)
        self.assertEqual(roster.remove("bO").nick, "bo")  # type: ignore[union-attr]
        self.assertEqual(len(roster), 0)

    def test_theLimitsForgetTheLeastRecentlySeen(self) -> None:
        roster = Roster()
        nicks = [f"p{n}" for n in range(NICKS_PER_ADDRESS + 1)]
        for time, nick in enumerate(nicks):
            roster.seen(nick, "198.18.0.5", time)
        roster.seen("p0", "198.18.0.5", 10)  # seen again: now the most recent
        self.assertEqual([e.nick for e in roster.trim("198.18.0.5")], ["p1"])
        self.assertEqual([e.nick for e in roster.byAddress("198.18.0.5")], [*nicks[2:], "p0"])
        roster.seen("p2", "198.18.0.6", 11)  # moved to another address
        self.assertEqual([e.nick for e in roster.byAddress("198.18.0.6")], ["p2"])
        self.assertNotIn("p2", [e.nick for e in roster.byAddress("198.18.0.5")])
        for n in range(MAX_PLAYERS):
            roster.seen(f"q{n}", f"198.18.0.{10 + n % 240}", 20 + n)
        gone = roster.trim("198.18.0.10")  # five there: q0 goes; then the oldest three, wherever they are
        self.assertEqual([e.nick for e in gone], ["q0", "p3", "p4", "p0"])
        self.assertEqual(len(roster), MAX_PLAYERS)
        self.assertIsNone(roster.remove("p3"))
        self.assertEqual([e.nick for e in roster.expire(silentSince=20)], ["p2"])
        self.assertEqual(roster.byAddress("198.18.0.6"), [])
        self.assertEqual(len(roster.expire(silentSince=10**6)), MAX_PLAYERS - 1)
        self.assertEqual(len(roster), 0)


class DiscoveryTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.lan = FakeLan()
        self.ana, self.bo = Recorder(), Recorder()
        self.a = self.lan.addPeer("Ana", A, self.ana, announceTargets=[B])
        self.b = self.lan.addPeer("Bo", B, self.bo, announceTargets=[A])

    def test_helloAndReply(self) -> None:
        self.a.start()
        self.lan.run(0.1)
        self.assertEqual(self.bo.events, [("online", "Ana", A)])
        self.assertEqual(self.ana.events, [("online", "Bo", B)])
        self.assertEqual(self.lan.sent(B, wire.HelloReply), [wire.HelloReply("Bo")])

    def test_repliesGoToProtocolPort(self) -> None:
        sent: list[tuple[str, int]] = []
        self.b.datagrams.write = lambda raw, addr: sent.append(addr)
        self.b.datagramReceived(b"01008Ana", A)
        self.assertEqual(sent, [(A, 20181)])

    def test_announcePeriodAndExpiry(self) -> None:
        self.a.start()
        self.b.start()
        self.lan.run(1)
        self.lan.filter = lambda d: 0 if d[0] == B else 1  # Bo falls silent without MSG03
        self.lan.run(179)
        self.assertIn("Bo", self.a.roster)
        self.lan.run(16)
        self.assertNotIn("Bo", self.a.roster)
        self.assertIn(("offline", "Bo", "did not answer MSG01 within 15 s"), self.ana.events)
        self.assertEqual(len(self.lan.sent(A, wire.Hello)), 2)

    def test_goodbyeRemoves(self) -> None:
        self.a.start()
        self.b.start()
        self.lan.run(0.1)
        self.b.stop()
        self.lan.run(0.1)
        self.assertNotIn("Bo", self.a.roster)
        self.assertIn(("offline", "Bo", "left (MSG03)"), self.ana.events)

    def test_ownEchoIgnored(self) -> None:
        self.a.datagramReceived(b"01008Ana", A)
        self.assertEqual(len(self.a.roster), 0)
        self.assertEqual(self.lan.log, [])

    def test_malformedDatagramsDropped(self) -> None:
        for junk in (b"0101pyBot", b"01009Bo", b"99005", b"\xff" * 1000, b"01008B|o"):
            self.b.datagramReceived(junk, A)
        self.assertEqual(self.lan.log, [])
        self.b.datagramReceived(b"01008Ana", A)  # and the listener still works
        self.assertEqual(self.lan.sent(B, wire.HelloReply), [wire.HelloReply("Bo")])

    def test_stopLeavesNoTimer(self) -> None:
        self.a.start()
        self.lan.run(1)
        self.a.stop()
        self.lan.run(1)
        self.assertEqual(self.lan.clock.getDelayedCalls(), [])


class HandshakeTests(SynchronousTestCase):
    """Ana invites Bo; Bo answers by policy or by its recorder."""

    def setUp(self) -> None:
        self.lan = FakeLan()
        self.ana = BotRecorder(self.lan.clock, seed=1)
        self.bo: Recorder = BotRecorder(self.lan.clock, seed=2)
        self.a = self.lan.addPeer("Ana", A, self.ana, announceTargets=[B])
        self.b = self.lan.addPeer("Bo", B, self.bo, announceTargets=[A], acceptPolicy="always")
        self.a.datagramReceived(b"02007Bo", B)  # Ana knows Bo

    def finishAndCheckClean(self) -> None:
        """Run long enough for every window and linger to pass: nothing may stay behind."""
        self.lan.run(120, step=0.05)
        self.assertEqual(self.lan.clock.getDelayedCalls(), [])
        self.assertEqual(self.lan.openListeners(), [])
        self.assertEqual(self.a.inviters, {})
        self.assertEqual(self.b.invitees, {})
        self.assertIsNone(self.a.matchProtocol)
        self.assertIsNone(self.b.matchProtocol)

    def matchCount(self, recorder: Recorder) -> int:
        return recorder.kinds().count("match")

    def test_acceptPlaysSeriesAndCleansUp(self) -> None:
        self.assertIsNone(self.a.invite("Bo"))
        self.lan.run(60, step=0.05)
        self.assertEqual(self.matchCount(self.ana), 1)
        self.assertEqual(self.matchCount(self.bo), 1)
        self.assertEqual(self.ana.kinds().count("seriesOver"), 1)
        self.assertEqual(self.bo.kinds().count("seriesOver"), 1)
        self.assertEqual(len(self.lan.pumps), 1)
        self.finishAndCheckClean()
        # Back in the peer: Bo can be invited again.
        self.assertIsNone(self.a.invite("Bo"))
        self.lan.run(60, step=0.05)
        self.assertEqual(self.matchCount(self.bo), 2)

    def test_decline(self) -> None:
        self.b.acceptPolicy = "never"
        self.a.invite("Bo")
        self.lan.run(1)
        self.assertIn(("invite", "Bo", "declined"), self.ana.events)
        self.assertEqual(self.lan.sent(B, wire.InviteAnswer), [wire.InviteAnswer("Bo", 0)])
        self.assertEqual(self.matchCount(self.ana), 0)
        self.finishAndCheckClean()

    def askTheUser(self) -> None:
        self.b.acceptPolicy = "ask"
        self.bo = Recorder()
        self.b.frontEnd = self.bo

    def test_askedUserAnswers(self) -> None:
        self.askTheUser()
        self.a.invite("Bo")
        self.lan.run(1)
        self.assertIn(("invited", "Ana"), self.bo.events)
        self.assertIsNone(self.b.answer(True))
        self.lan.run(1)
        self.assertEqual(self.matchCount(self.ana), 1)

    def test_unansweredQuestionExpires(self) -> None:
        self.askTheUser()
        self.a.invite("Bo")
        self.lan.run(31)
        self.assertIn(("invite", "Bo", "timeout"), self.ana.events)
        self.assertIn(("invite", "Ana", "expired"), self.bo.events)
        self.assertEqual(self.b.answer(True), "nobody has invited you")
        self.finishAndCheckClean()

    def test_busyRefusesAtOnce(self) -> None:
        self.a.invite("Bo")
        self.lan.run(1)
        carla = Recorder()
        c = self.lan.addPeer("Carla", C, carla, announceTargets=[B])
        c.datagramReceived(b"02007Bo", B)
        c.invite("Bo")
        self.lan.run(0.4)
        self.assertNotIn(("invite", "Bo", "declined"), carla.events)  # never an instant answer
        self.lan.run(0.2)
        self.assertIn(("invite", "Bo", "declined"), carla.events)
        self.assertEqual(self.lan.sent(B, wire.InviteAnswer)[-1], wire.InviteAnswer("Bo", 0))
        self.assertEqual(self.matchCount(self.bo), 1)

    def test_noAnswer(self) -> None:
        """Every MSG04 lost, Bo's listener reading: a copy after every answered probe, then the timeout."""
        self.lan.filter = lambda d: 0 if isKind(d, wire.Invite) else 1
        self.a.invite("Bo")
        self.lan.run(31)
        self.assertIn(("invite", "Bo", "timeout"), self.ana.events)
        self.assertEqual(len(self.lan.sent(A, wire.Invite)), 15)  # at 0, ~2, ~4, ... ~28 s
        self.finishAndCheckClean()

    def test_noAnswerFromASilentListener(self) -> None:
        """Nothing reaches Bo (a dialog could hold its listener): MSG04 at 0 and 15 s only, then the timeout."""
        self.lan.filter = lambda d: 0 if d[1] == B else 1
        self.a.invite("Bo")
        self.lan.run(31)
        self.assertIn(("invite", "Bo", "timeout"), self.ana.events)
        self.assertEqual(len(self.lan.sent(A, wire.Invite)), 2)  # at 0 and 15 s
        self.assertGreaterEqual(len(self.lan.sent(A, wire.Hello)), 10)  # the unanswered probes
        self.finishAndCheckClean()

    def lose(self, kind: type[object], times: int = 1) -> None:
        lost = [0]

        def dropFirst(datagram: Datagram) -> int:
            if isKind(datagram, kind) and lost[0] < times:
                lost[0] += 1
                return 0
            return 1

        self.lan.filter = dropFirst

    def test_msg04LostOnce(self) -> None:
        """Bo answers the probe 2 s after the lost MSG04: the copy goes then, not at 15 s."""
        self.lose(wire.Invite)
        self.a.invite("Bo")
        self.lan.run(1.9)
        self.assertEqual(self.matchCount(self.ana), 0)
        self.lan.run(1)
        self.assertEqual(self.matchCount(self.ana), 1)
        self.assertEqual(len(self.lan.sent(A, wire.Invite)), 2)

    def test_msg05LostOnce(self) -> None:
        self.lose(wire.InviteAnswer)
        self.a.invite("Bo")
        self.lan.run(3)
        self.assertEqual(self.matchCount(self.ana), 1)
        self.assertEqual(len(self.lan.sent(B, wire.InviteAnswer)), 2)

    def test_msg06LostOnce(self) -> None:
        """The TCP connection alone completes the handshake; resending stops."""
        self.lose(wire.InviteAck)
        self.a.invite("Bo")
        self.lan.run(10)
        self.assertEqual(self.matchCount(self.bo), 1)
        self.assertEqual(len(self.lan.sent(B, wire.InviteAnswer)), 1)

    def test_everythingDuplicated(self) -> None:
        self.lan.filter = lambda d: 2
        self.a.invite("Bo")
        self.lan.run(60, step=0.05)
        self.assertEqual(self.matchCount(self.ana), 1)
        self.assertEqual(self.matchCount(self.bo), 1)
        self.assertEqual(len(self.lan.pumps), 1)
        self.assertEqual(self.ana.kinds().count("seriesOver"), 1)
        self.finishAndCheckClean()

    def test_eachKindDuplicated(self) -> None:
        for kind in (wire.Invite, wire.InviteAnswer, wire.InviteAck):
            self.setUp()
            self.lan.filter = lambda d, kind=kind: 2 if isKind(d, kind) else 1
            self.a.invite("Bo")
            self.lan.run(3)
            self.assertEqual((self.matchCount(self.ana), self.matchCount(self.bo), len(self.lan.pumps)), (1, 1, 1))

    def test_lostDuplicatedAndReordered(self) -> None:
        """Random loss, duplication and reordering: exactly one match whenever Bo heard an invitation.

        Never two matches, never a port left open; and at most one side
        without the other: if any copy of MSG04 reached Bo, both play (MSG05
        is resent for 30 s, so the handshake outlives the loss); if none did,
        Ana says the invitation timed out.
        """
        matches = 0
        for seed in range(20):
            self.setUp()
            chaos = random.Random(seed)
            invitesDelivered = [0]

            def lossy(datagram: Datagram, chaos: random.Random = chaos, delivered: list[int] = invitesDelivered) -> int:
                copies = chaos.choice((0, 1, 1, 2, 3))
                if isKind(datagram, wire.Invite):
                    delivered[0] += copies
                return copies

            self.lan.jitter = chaos
            self.lan.filter = lossy
            self.a.invite("Bo")
            self.lan.run(40, step=0.05)
            self.assertLessEqual(len(self.lan.pumps), 1, seed)
            self.assertEqual(self.matchCount(self.ana), self.matchCount(self.bo), seed)
            if invitesDelivered[0]:
                self.assertEqual(self.matchCount(self.ana), 1, seed)
            else:
                self.assertEqual(self.matchCount(self.ana), 0, seed)
                self.assertIn(("invite", "Bo", "timeout"), self.ana.events, seed)
            matches += self.matchCount(self.ana)
            self.a.stop()
            self.b.stop()
            self.finishAndCheckClean()
        self.assertGreaterEqual(matches, 15)  # the chaos did not simply stop every handshake

    def test_handshakesSurviveLossOfInvitationDatagrams(self) -> None:
        """Two automatic peers, 30 % and then 50 % of every MSG04, MSG05 and MSG06 lost on the way.

        The field test of issue 23: 30 of 30 matches begin within 30 s at
        30 % loss, 20 of 20 within 60 s at 50 %; never two matches, nothing
        stuck. With only two copies of MSG04 (0 and 15 s), about one
        invitation in eleven lost both at 30 %, and nothing tried again.
        """
        for loss, invitations, limit in ((0.3, 30, 30.0), (0.5, 20, 60.0)):
            late = []
            for seed in range(invitations):
                self.setUp()
                chaos = random.Random(f"{loss}-{seed}")

                def lossy(datagram: Datagram, chaos: random.Random = chaos, loss: float = loss) -> int:
                    kind = type(wire.decode(datagram[2]))
                    return 0 if kind in HANDSHAKE_KINDS and chaos.random() < loss else 1

                self.lan.filter = lossy
                self.a.invite("Bo")
                began = None
                while self.lan.clock.seconds() < limit and began is None:
                    self.lan.run(0.05)
                    if self.matchCount(self.ana):
                        began = self.lan.clock.seconds()
                if began is None:
                    late.append(seed)
                    continue
                self.lan.run(1)
                self.assertEqual((self.matchCount(self.ana), self.matchCount(self.bo)), (1, 1), seed)
                self.assertEqual(len(self.lan.pumps), 1, seed)
                self.a.quitMatch()
                self.finishAndCheckClean()
                self.assertEqual((self.matchCount(self.ana), self.matchCount(self.bo)), (1, 1), seed)
            self.assertEqual(late, [], f"{loss:.0%} loss: these invitations began no match within {limit:g} s")

    def test_lateMsg05AfterCompletion(self) -> None:
        self.a.invite("Bo")
        self.lan.run(1)
        port = self.lan.sent(B, wire.InviteAnswer)[0].port  # type: ignore[attr-defined]
        acks = len(self.lan.sent(A, wire.InviteAck))
        self.a.datagramReceived(wire.encode(wire.InviteAnswer("Bo", port)), B)
        self.assertEqual(len(self.lan.sent(A, wire.InviteAck)), acks + 1)
        self.assertEqual(len(self.lan.pumps), 1)
        self.lan.run(60, step=0.05)
        self.a.datagramReceived(wire.encode(wire.InviteAnswer("Bo", port)), B)  # after the linger
        self.assertEqual(len(self.lan.sent(A, wire.InviteAck)), acks + 1)
        self.assertEqual(self.matchCount(self.ana), 1)
        self.finishAndCheckClean()

    def test_inviterNeverConnects(self) -> None:
        """Ana crashes after MSG04: Bo resends MSG05, then closes its port after 30 s."""
        self.a.invite("Bo")
        del self.lan.peers[A]
        self.lan.filter = lambda d: 0 if d[0] == A else 1
        self.lan.run(1)
        self.assertEqual(len(self.lan.openListeners()), 1)
        self.lan.run(30)
        self.assertIn(("invite", "Ana", "timeout"), self.bo.events)
        self.assertEqual(self.lan.openListeners(), [])
        self.assertGreaterEqual(len(self.lan.sent(B, wire.InviteAnswer)), 14)

    def test_inviteUnknownNick(self) -> None:
        self.assertEqual(self.a.invite("Zed"), "Zed is not online (type 'who' to see who is)")

    def test_autoInviteWhenSeen(self) -> None:
        carla = BotRecorder(self.lan.clock, seed=3)
        c = self.lan.addPeer("Carla", C, carla, announceTargets=[B], autoInvite="bo")
        c.start()
        self.lan.run(2)
        self.assertEqual(self.matchCount(carla), 1)

    def test_stopDuringHandshakeAndMatch(self) -> None:
        self.a.invite("Bo")
        self.lan.run(1.5)
        self.assertIsNotNone(self.b.matchProtocol)
        self.b.stop()
        self.lan.run(1)
        # Ana hears MSG10 on TCP or MSG03 by UDP first (the in-memory LAN delivers datagrams
        # before it pumps TCP); either ends her match.
        ended = [str(e[1]) for e in self.ana.events if e[0] == "ended"]
        self.assertEqual(len(ended), 1)
        self.assertTrue("gave up (MSG10)" in ended[0] or "left (MSG03)" in ended[0], ended)
        self.assertIn(wire.Goodbye("Bo"), self.lan.sent(B, wire.Goodbye))
        self.a.stop()
        self.finishAndCheckClean()


@implementer(IDatagramSender)
class DatagramRecorder:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.sent: list[tuple[float, object, str]] = []

    def send(self, message: wire.DatagramMessage, host: str) -> None:
        self.sent.append((self.clock.seconds(), message, host))


@implementer(IPresenceListener)
class PresenceRecorder(Recorder):
    """The front end recorder, which also hears of the players who said goodbye."""

    def peerLeft(self, nick: str) -> None:
        self.events.append(("left", nick))


class PresenceAloneTests(SynchronousTestCase):
    """The discovery machine with a recording sender and listener, and a Clock."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.datagrams, self.listener = DatagramRecorder(self.clock), PresenceRecorder()
        verifyObject(IDatagramSender, self.datagrams)
        verifyObject(IPresenceListener, self.listener)
        self.core = PresenceCore("Ana", self.clock, self.datagrams, self.listener, ["255.255.255.255"])
        self.presence: Presence = PresenceMachine(self.core)

    def hellos(self) -> list[tuple[float, str]]:
        return [(when, host) for when, message, host in self.datagrams.sent if isinstance(message, wire.Hello)]

    def test_announcesNowAndEveryPeriodToTargetsAndKnownPlayers(self) -> None:
        self.presence.start()
        self.presence.heard("Bo", B)
        self.clock.advance(ANNOUNCE_EVERY - 1)
        self.presence.heard("Bo", B)  # answered in time: Bo stays
        self.clock.advance(1)
        self.assertEqual(
            self.hellos(), [(0, "255.255.255.255"), (ANNOUNCE_EVERY, "255.255.255.255"), (ANNOUNCE_EVERY, B)]
        )

    def test_silentPlayerExpiresAfterTheAnswerWindow(self) -> None:
        self.presence.start()
        self.presence.heard("Bo", B)
        self.presence.heard("Cy", C)
        self.clock.advance(ANNOUNCE_EVERY)
        self.presence.heard("Cy", C)  # Cy answers the second MSG01, Bo does not
        self.clock.advance(ANSWER_WINDOW - 0.01)
        self.assertIn("Bo", self.core.roster)
        self.clock.advance(0.01)
        self.assertEqual(self.listener.events[-1], ("offline", "Bo", "did not answer MSG01 within 15 s"))
        self.assertEqual([e.nick for e in self.core.roster], ["Cy"])

    def test_helloIsAnsweredAndReportedOnce(self) -> None:
        self.presence.hello("Bo", B)
        self.presence.hello("bo", B)
        self.assertEqual([(m, h) for _, m, h in self.datagrams.sent], [(wire.HelloReply("Ana"), B)] * 2)
        self.assertEqual(self.listener.events, [("online", "Bo", B)])

    def test_goodbyeForgetsAndAlwaysReportsTheLeaving(self) -> None:
        self.presence.heard("Bo", B)
        self.presence.goodbye("BO")
        self.presence.goodbye("Zed")  # unknown, but a handshake with it may still be open
        self.assertEqual(self.listener.events[1:], [("offline", "BO", "left (MSG03)"), ("left", "BO"), ("left", "Zed")])

    def test_tooManyNicksFromOneAddress(self) -> None:
        for n in range(NICKS_PER_ADDRESS + 1):
            self.clock.advance(1)
            self.presence.heard(f"N{n}", C)
        self.assertIn(("offline", "N0", f"replaced: too many nicks from {C}"), self.listener.events)

    def test_stopSaysGoodbyeAndLeavesNoTimer(self) -> None:
        self.presence.stop()  # never started: still says goodbye
        self.presence.start()
        self.clock.advance(1)
        self.presence.stop()
        goodbyes = [(when, h) for when, m, h in self.datagrams.sent if m == wire.Goodbye("Ana")]
        self.assertEqual(goodbyes, [(0, "255.255.255.255"), (1, "255.255.255.255")])
        self.assertEqual(self.clock.getDelayedCalls(), [])


@implementer(IDatagramReceiver)
class ReceiverRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def hello(self, nick: str, host: str) -> None:
        self.calls.append(("hello", nick, host))

    def helloReply(self, nick: str, host: str) -> None:
        self.calls.append(("helloReply", nick, host))

    def goodbye(self, nick: str) -> None:
        self.calls.append(("goodbye", nick))

    def invited(self, nick: str, host: str) -> None:
        self.calls.append(("invited", nick, host))

    def answered(self, message: wire.InviteAnswer, host: str) -> None:
        self.calls.append(("answered", message, host))

    def acknowledged(self, host: str) -> None:
        self.calls.append(("acknowledged", host))


class DatagramProtocolTests(SynchronousTestCase):
    """The UDP protocol alone: it decodes, drops what it must, and makes one call per message."""

    def setUp(self) -> None:
        self.receiver = ReceiverRecorder()
        self.written: list[tuple[bytes, tuple[str, int]]] = []
        self.traced: list[tuple[object, ...]] = []
        verifyObject(IDatagramReceiver, self.receiver)
        self.protocol = VelhaDatagramProtocol(
            "Bo", self.receiver, Clock(), write=lambda raw, addr: self.written.append((raw, addr))
        )
        self.protocol.trace = lambda *event: self.traced.append(event)
        verifyObject(IDatagramSender, self.protocol)

    def test_eachMessageIsOneCall(self) -> None:
        for raw in (b"01008Ana", b"02008Ana", b"03008Ana", b"04008Ana", b"05013Ana|4242", b"06007Ok"):
            self.protocol.datagramReceived(raw, (A, 20181))
        self.assertEqual(
            self.receiver.calls,
            [
                ("hello", "Ana", A),
                ("helloReply", "Ana", A),
                ("goodbye", "Ana"),
                ("invited", "Ana", A),
                ("answered", wire.InviteAnswer("Ana", 4242), A),
                ("acknowledged", A),
            ],
        )
        self.assertEqual(self.traced[0][:3], ("in", A, b"01008Ana"))

    def test_ownEchoMalformedAndOversizeNeverReachTheReceiver(self) -> None:
        for raw in (b"01007Bo", b"03007Bo", b"01009Bo", b"0" * 3000):
            self.protocol.datagramReceived(raw, (A, 20181))
        self.assertEqual(self.receiver.calls, [])
        self.assertEqual(len(self.traced), 1)  # the malformed one is traced with its error

    def test_sendEncodesTracesAndWritesToTheProtocolPort(self) -> None:
        self.protocol.send(wire.Invite("Bo"), B)
        self.assertEqual(self.written, [(b"04007Bo", (B, 20181))])
        self.assertEqual(self.traced, [("out", B, b"04007Bo", wire.Invite("Bo"))])


class WiringTests(SynchronousTestCase):
    def test_partsProvideTheirInterfaces(self) -> None:
        lan = FakeLan()
        peer = lan.addPeer("Ana", A, Recorder())
        for interface in (IDatagramReceiver, IPresenceListener, IMatchHost):
            verifyObject(interface, peer)
        verifyObject(IDatagramSender, peer.datagrams)
        protocol = matchProtocolFor(peer, "Bo", isInvitee=False)
        verifyObject(IMatchLink, protocol)
