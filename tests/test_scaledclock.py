"""``velhanet.scaledclock``: protocol timers on a faster clock (``--time-scale``), measured as they were set."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.scaledclock import ScaledClock, scaledClock


class ScaledClockTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.real = Clock()
        self.clock = ScaledClock(self.real, 0.25)

    def test_aDelayRunsScaled(self) -> None:
        fired: list[float] = []
        self.clock.callLater(30, lambda: fired.append(self.clock.seconds()))
        self.real.advance(7.4)
        self.assertEqual(fired, [])
        self.real.advance(0.1)
        self.assertEqual(fired, [30.0])  # 7.5 real seconds are 30 on the scaled clock

    def test_theCallSpeaksScaledSeconds(self) -> None:
        fired: list[str] = []
        call = self.clock.callLater(2, fired.append, "resend")
        self.assertEqual(call.getTime(), 2.0)
        call.reset(4)  # from now: 1 real second
        self.assertEqual(call.getTime(), 4.0)
        call.delay(4)
        self.assertEqual([c.getTime() for c in self.clock.getDelayedCalls()], [8.0])
        self.real.advance(1.9)
        self.assertTrue(call.active())
        self.real.advance(0.1)
        self.assertEqual(fired, ["resend"])
        self.assertFalse(call.active())

    def test_cancel(self) -> None:
        call = self.clock.callLater(1, self.fail, "cancelled")
        call.cancel()
        self.real.advance(10)
        self.assertEqual(self.real.getDelayedCalls(), [])

    def test_atOneNothingIsWrapped(self) -> None:
        self.assertIs(scaledClock(self.real, 1), self.real)
        self.assertIsInstance(scaledClock(self.real, 0.5), ScaledClock)

    def test_aScaleMustBePositive(self) -> None:
        self.assertRaises(ValueError, ScaledClock, self.real, 0)
