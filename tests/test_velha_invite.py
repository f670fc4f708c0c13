"""The two handshake machines alone: recording links, a Clock, no peer and no network.

Each test drives a machine through its inputs only, and checks what it
asked its link to do, when (the Clock's time), and that no timer is left.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer
from zope.interface.verify import verifyObject

from velhanet.velha.interfaces import IInviteeLink, IInviterLink
from velhanet.velha.invite import (
    ANSWER_DELAY,
    ANSWER_RESEND,
    CONNECT_DELAY,
    INVITE_RESEND,
    INVITE_WINDOW,
    LINGER,
    PROBE_AFTER,
)
from velhanet.velha.invitee import Invitee, InviteeCore, InviteeMachine
from velhanet.velha.inviter import Inviter, InviterCore, InviterMachine


def run(clock: Clock, seconds: float) -> None:
    """Advance timer by timer, so each fires at its own time (one big advance runs all of them at the end)."""
    end = clock.seconds() + seconds
    while (due := [call.getTime() for call in clock.getDelayedCalls() if call.getTime() <= end]) != []:
        clock.advance(min(due) - clock.seconds())
    clock.advance(end - clock.seconds())


class LinkRecorder:
    """What both recording links share: a log of (time, what, detail), and the reports."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.log: list[tuple[float, str, object]] = []

    def record(self, what: str, detail: object = None) -> None:
        self.log.append((self.clock.seconds(), what, detail))

    def what(self) -> list[str]:
        return [entry[1] for entry in self.log]

    def report(self, outcome: str, detail: str) -> None:
        self.record(outcome, detail)

    def finished(self) -> None:
        self.record("finished")


@implementer(IInviterLink)
class InviterLinkRecorder(LinkRecorder):
    """Connection attempts wait for the test to fire them."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.attempts: list[Deferred[object]] = []

    def sendInvite(self) -> None:
        self.record("MSG04")

    def sendAck(self) -> None:
        self.record("MSG06")

    def sendProbe(self) -> None:
        self.record("MSG01")

    def connect(self, port: int) -> Deferred[object]:
        self.record("connect", port)
        attempt: Deferred[object] = Deferred()
        self.attempts.append(attempt)
        return attempt


class FakePort:
    portNumber = 4242
    closed = False

    def close(self) -> None:
        self.closed = True


@implementer(IInviteeLink)
class InviteeLinkRecorder(LinkRecorder):
    """Its port is a L{FakePort}."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.port = FakePort()

    def answers(self) -> list[tuple[float, object]]:
        return [(when, port) for when, what, port in self.log if what == "MSG05"]

    def ask(self) -> None:
        self.record("ask")

    def sendAnswer(self, port: int) -> None:
        self.record("MSG05", port)

    def listen(self) -> FakePort:
        self.record("listen")
        return self.port


class AloneTests(SynchronousTestCase):
    clock: Clock
    link: LinkRecorder

    def assertNothingLeft(self) -> None:
        """No timer left, and the machine said once, last, that it is finished."""
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(self.link.what()[-1], "finished")
        self.assertEqual(self.link.what().count("finished"), 1)


class InviterAloneTests(AloneTests):
    link: InviterLinkRecorder

    def setUp(self) -> None:
        self.clock = Clock()
        self.link = InviterLinkRecorder(self.clock)
        verifyObject(IInviterLink, self.link)
        self.machine: Inviter = InviterMachine(InviterCore(self.clock, self.link))

    def invitations(self) -> list[float]:
        return [when for when, what, _ in self.link.log if what == "MSG04"]

    def test_noAnswerSendsTwoCopiesThenTimesOut(self) -> None:
        """A listener that never answers our MSG01 (a dialog may hold it): MSG04 at 0 and 15 s only."""
        self.machine.start()
        run(self.clock, INVITE_WINDOW)
        self.assertEqual(
            [(when, what) for when, what, _ in self.link.log if what != "MSG01"],
            [(0, "MSG04"), (INVITE_RESEND, "MSG04"), (INVITE_WINDOW, "timeout"), (INVITE_WINDOW, "finished")],
        )
        probes = [when for when, what, _ in self.link.log if what == "MSG01"]
        self.assertEqual(probes[:2], [PROBE_AFTER, 2 * PROBE_AFTER])
        self.assertNothingLeft()

    def test_aReadingListenerGetsACopyAtOnce(self) -> None:
        """MSG02 to a probe sent after the last copy: that copy was lost, the next goes now."""
        self.machine.start()
        run(self.clock, PROBE_AFTER)
        self.assertEqual(self.link.what(), ["MSG04", "MSG01"])
        run(self.clock, 0.01)
        self.machine.listenerAnswered()
        self.assertEqual(self.invitations(), [0, PROBE_AFTER + 0.01])
        # A second MSG02 (to the same probe) proves nothing about the new copy.
        self.machine.listenerAnswered()
        self.assertEqual(len(self.invitations()), 2)
        # The silent copy now counts from the newest copy.
        run(self.clock, INVITE_RESEND - 0.02)
        self.assertEqual(len(self.invitations()), 2)
        run(self.clock, 0.02)
        self.assertEqual(self.invitations()[-1], PROBE_AFTER + 0.01 + INVITE_RESEND)
        self.machine.cancel()
        self.assertNothingLeft()

    def test_answerBeforeAnyProbeCountsForNothing(self) -> None:
        """A MSG02 between our MSG04 and our first probe answers something older (our announcement)."""
        self.machine.start()
        run(self.clock, PROBE_AFTER / 2)
        self.machine.listenerAnswered()
        self.assertEqual(self.invitations(), [0])
        self.machine.accepted(7777)
        self.machine.listenerAnswered()  # connecting: nothing to copy
        self.assertEqual(self.invitations(), [0])
        self.machine.cancel()
        self.assertNothingLeft()

    def test_aListenerThatFallsSilentGetsOneCopyMore(self) -> None:
        """The first copy was lost; the second opened a dialog: from then on only the 15 s copy."""
        self.machine.start()
        run(self.clock, PROBE_AFTER)
        self.machine.listenerAnswered()
        run(self.clock, INVITE_WINDOW - PROBE_AFTER)
        self.assertEqual(self.invitations(), [0, PROBE_AFTER, PROBE_AFTER + INVITE_RESEND])
        self.assertIn("timeout", self.link.what())
        self.assertNothingLeft()

    def test_acceptedAcksThenConnectsAfterThePause(self) -> None:
        self.machine.start()
        self.clock.advance(1)
        self.machine.accepted(5000)
        self.assertEqual(self.link.what(), ["MSG04", "MSG06"])  # not connected yet: the original needs a moment
        self.clock.advance(CONNECT_DELAY)
        self.assertEqual(self.link.log[-1], (1 + CONNECT_DELAY, "connect", 5000))
        self.link.attempts[0].callback(None)
        self.assertEqual(self.link.what()[-1], "connected")
        run(self.clock, LINGER)
        self.assertNothingLeft()

    def test_repeatedAnswerAckedButConnectedOnceUnlessNewPort(self) -> None:
        self.machine.start()
        self.machine.accepted(5000)
        self.machine.accepted(5000)
        self.clock.advance(CONNECT_DELAY)
        self.assertEqual(self.link.what(), ["MSG04", "MSG06", "MSG06", "connect"])
        self.link.attempts[0].callback(None)
        self.machine.accepted(5000)  # while lingering: MSG06 again, no second connection
        self.machine.accepted(6000)  # a new port (the original's second dialog): connect there
        self.clock.advance(CONNECT_DELAY)
        self.assertEqual(self.link.what()[-4:], ["MSG06", "MSG06", "reconnecting", "connect"])
        self.assertEqual(self.link.log[-1][2], 6000)
        self.machine.declined()  # the original's busy reply to our second MSG04: ignored
        run(self.clock, LINGER)
        self.assertNothingLeft()

    def test_declinedIsAcknowledged(self) -> None:
        self.machine.start()
        self.machine.declined()
        self.assertEqual(self.link.what(), ["MSG04", "MSG06", "declined", "finished"])
        self.machine.accepted(5000)  # late and stray: absorbed
        self.assertNothingLeft()

    def test_connectionRefused(self) -> None:
        self.machine.start()
        self.machine.accepted(5000)
        self.clock.advance(CONNECT_DELAY)
        self.link.attempts[0].errback(ConnectionRefusedError("no"))
        self.assertEqual(self.link.what()[-2:], ["failed", "finished"])
        self.assertNothingLeft()

    def test_cancelWhileConnectingCancelsTheAttempt(self) -> None:
        self.machine.start()
        self.machine.accepted(5000)
        self.clock.advance(CONNECT_DELAY)
        self.machine.cancel()
        self.assertTrue(self.link.attempts[0].called)  # cancelled: its failure is absorbed in 'done'
        self.assertEqual(self.link.what()[-1], "finished")
        self.assertNotIn("failed", self.link.what())
        self.assertNothingLeft()

    def test_cancelWhileWaitingLeavesNothing(self) -> None:
        self.machine.start()
        self.clock.advance(16)
        self.machine.cancel()
        self.machine.cancel()
        self.assertEqual([w for w in self.link.what() if w != "MSG01"], ["MSG04", "MSG04", "cancelled", "finished"])
        self.assertNothingLeft()


class InviteeAloneTests(AloneTests):
    link: InviteeLinkRecorder

    def setUp(self) -> None:
        self.clock = Clock()
        self.link = InviteeLinkRecorder(self.clock)
        verifyObject(IInviteeLink, self.link)
        self.machine: Invitee = InviteeMachine(InviteeCore(self.clock, self.link))

    def test_acceptResendsUntilAckThenConnected(self) -> None:
        self.machine.invited()
        self.assertEqual(self.link.what(), ["ask"])
        self.machine.accept()
        self.clock.advance(ANSWER_RESEND)
        self.clock.advance(ANSWER_RESEND)
        self.machine.acknowledged()
        run(self.clock, 10)
        self.assertEqual(self.link.answers(), [(0, 4242), (ANSWER_RESEND, 4242), (2 * ANSWER_RESEND, 4242)])
        self.machine.connected()
        self.assertTrue(self.link.port.closed)
        self.assertEqual(self.link.what()[-2:], ["connected", "finished"])
        self.assertNothingLeft()

    def test_declineSendsThreeRefusalsNeverAtOnce(self) -> None:
        self.machine.invited()
        self.machine.decline()
        run(self.clock, LINGER)
        self.assertEqual(
            self.link.answers(),
            [(ANSWER_DELAY, 0), (ANSWER_DELAY + ANSWER_RESEND, 0), (ANSWER_DELAY + 2 * ANSWER_RESEND, 0)],
        )
        self.assertIn("declined", self.link.what())
        self.assertNothingLeft()

    def test_unansweredQuestionExpires(self) -> None:
        self.machine.invited()
        run(self.clock, INVITE_WINDOW)
        self.assertEqual(self.link.what(), ["ask", "expired", "finished"])
        self.machine.accept()  # too late: absorbed
        self.assertNothingLeft()

    def test_inviterNeverConnects(self) -> None:
        self.machine.invited()
        self.machine.accept()
        run(self.clock, INVITE_WINDOW)
        self.assertTrue(self.link.port.closed)
        self.assertEqual(len(self.link.answers()), int(INVITE_WINDOW / ANSWER_RESEND))  # at 0, 2, ... 28 s
        self.assertEqual(self.link.what()[-2:], ["timeout", "finished"])
        self.assertNothingLeft()

    def test_busyRefusalStopsOnceAcknowledged(self) -> None:
        self.machine.invitedWhileBusy()
        self.machine.acknowledged()  # before any copy went out: not our refusal's MSG06
        self.clock.advance(ANSWER_DELAY)
        self.machine.acknowledged()
        run(self.clock, LINGER)
        self.assertEqual(self.link.answers(), [(ANSWER_DELAY, 0)])
        self.assertEqual(self.link.what()[0], "busy")
        self.assertNothingLeft()

    def test_matchElsewhereWhileAskingOrListening(self) -> None:
        self.machine.invited()
        self.machine.matchElsewhere()
        self.assertEqual(self.link.what()[-1], "busy")
        other = InviteeLinkRecorder(self.clock)
        listening = InviteeMachine(InviteeCore(self.clock, other))
        listening.invited()
        listening.accept()
        listening.matchElsewhere()
        self.assertTrue(other.port.closed)
        self.assertEqual(other.what()[-2:], ["cancelled", "finished"])
        run(self.clock, LINGER)
        self.assertNothingLeft()

    def test_repeatedInvitationNeverGetsAnInstantRefusal(self) -> None:
        """A MSG04 that comes just before a pending refusal copy is due: that copy waits 0.5 s after it."""
        self.machine.invitedWhileBusy()
        self.clock.advance(ANSWER_DELAY)  # first copy
        self.clock.advance(ANSWER_RESEND - 0.003)  # the second is due in 3 ms
        self.machine.repeatInvite()
        repeatedAt = self.clock.seconds()
        for _ in range(100):
            self.clock.advance(0.1)
        after = [when for when, port in self.link.answers() if when > repeatedAt]
        self.assertGreaterEqual(after[0] - repeatedAt, ANSWER_DELAY - 1e-9)
        self.assertEqual(len(after), 3)  # the repeated invitation gets its own three copies
