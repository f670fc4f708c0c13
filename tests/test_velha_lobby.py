"""Discovery, roster and every invitation handshake path, on an in-memory LAN."""

from __future__ import annotations

import random

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.velha import wire
from velhanet.velha.invite import InviteeCore, InviteeMachine, InviterCore, InviterMachine
from velhanet.velha.roster import Roster

from .velha_harness import BotRecorder, Datagram, FakeLan, Recorder

A, B, C = "10.0.0.1", "10.0.0.2", "10.0.0.3"


def isKind(datagram: Datagram, kind: type[object]) -> bool:
    return isinstance(wire.decode(datagram[2]), kind)


class RosterTests(SynchronousTestCase):
    def test_addRefreshExpireRemove(self) -> None:
        roster = Roster()
        self.assertTrue(roster.seen("Bo", "10.0.0.2", 0))
        self.assertFalse(roster.seen("bo", "10.0.0.9", 10))
        entry = roster.get("BO")
        assert entry is not None
        self.assertEqual((entry.address, entry.lastSeen), ("10.0.0.9", 10))
        roster.seen("Ana", "10.0.0.1", 5)
        self.assertEqual([e.nick for e in roster.expire(silentSince=8)], ["Ana"])
        self.assertIn("Bo", roster)
        self.assertEqual(roster.remove("bO").nick, "bo")  # type: ignore[union-attr]
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
        self.b._sendDatagram = lambda raw, addr: sent.append(addr)
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
        self.bo = BotRecorder(self.lan.clock, seed=2)
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
        # Back in the lobby: Bo can be invited again.
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
        self.b.frontEnd = self.bo  # type: ignore[assignment]

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
        self.lan.filter = lambda d: 0 if isKind(d, wire.Invite) else 1
        self.a.invite("Bo")
        self.lan.run(31)
        self.assertIn(("invite", "Bo", "timeout"), self.ana.events)
        self.assertEqual(len(self.lan.sent(A, wire.Invite)), 2)  # at 0 and 15 s
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
        self.lose(wire.Invite)
        self.a.invite("Bo")
        self.lan.run(14.9)
        self.assertEqual(self.matchCount(self.ana), 0)
        self.lan.run(2)
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
            self.lan.filter = lambda d, kind=kind: 2 if isKind(d, kind) else 1  # type: ignore[misc]
            self.a.invite("Bo")
            self.lan.run(3)
            self.assertEqual((self.matchCount(self.ana), self.matchCount(self.bo), len(self.lan.pumps)), (1, 1, 1))

    def test_lostDuplicatedAndReordered(self) -> None:
        """Random loss, duplication and reordering never make two matches nor leave a port open."""
        for seed in range(20):
            self.setUp()
            chaos = random.Random(seed)
            self.lan.jitter = chaos
            self.lan.filter = lambda d, chaos=chaos: chaos.choice((0, 1, 1, 2, 3))  # type: ignore[misc]
            self.a.invite("Bo")
            self.lan.run(40, step=0.05)
            self.assertLessEqual(len(self.lan.pumps), 1, seed)
            self.assertLessEqual(self.matchCount(self.ana), 1, seed)
            self.assertEqual(self.matchCount(self.ana), self.matchCount(self.bo), seed)
            self.a.stop()
            self.b.stop()
            self.finishAndCheckClean()

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
        del self.lan.lobbies[A]
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


class MachineAloneTests(SynchronousTestCase):
    """The two handshake machines with recording fakes and a Clock, no lobby."""

    def test_inviterCancelLeavesNothing(self) -> None:
        clock, log = Clock(), []
        machine = InviterMachine(
            InviterCore(
                clock,
                lambda: log.append("04"),
                lambda: log.append("06"),
                None,
                lambda o, d: log.append(o),  # type: ignore[arg-type]
                lambda: log.append("finished"),
            )
        )
        machine.start()
        clock.advance(16)
        machine.cancel()
        machine.cancel()
        self.assertEqual(log, ["04", "04", "cancelled", "finished"])
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_inviteeResendsUntilAck(self) -> None:
        clock, log = Clock(), []

        class Port:
            portNumber = 4242
            closed = False

            def close(self) -> None:
                self.closed = True

        port = Port()
        machine = InviteeMachine(
            InviteeCore(
                clock, lambda: None, log.append, lambda: port, lambda o, d: log.append(o), lambda: log.append("fin")
            )
        )
        machine.invited()
        machine.accept()
        clock.advance(2)
        clock.advance(2)
        machine.acknowledged()
        clock.advance(10)
        self.assertEqual(log, [4242, 4242, 4242])
        machine.connected()
        self.assertTrue(port.closed)
        self.assertEqual(log[-2:], ["connected", "fin"])
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_repeatedInvitationNeverGetsAnInstantRefusal(self) -> None:
        """A MSG04 that comes just before a pending refusal copy is due: that copy waits 0.5 s after it."""
        clock, sent = Clock(), []
        machine = InviteeMachine(
            InviteeCore(
                clock,
                lambda: None,
                lambda port: sent.append((clock.seconds(), port)),
                lambda: None,  # type: ignore[arg-type, return-value]
                lambda o, d: None,
                lambda: None,
            )
        )
        machine.invitedWhileBusy()
        clock.advance(0.5)  # first copy
        clock.advance(1.997)  # the second is due in 3 ms
        machine.repeatInvite()
        repeatedAt = clock.seconds()
        for _ in range(100):
            clock.advance(0.1)
        after = [when for when, port in sent if when > repeatedAt]
        self.assertGreaterEqual(after[0] - repeatedAt, 0.5 - 1e-9)
        self.assertEqual(len(after), 3)  # the repeated invitation gets its own three copies
