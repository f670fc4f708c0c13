"""Hostile hosts on the LAN against a JogoVelha peer (issue 13): MSG04 storms and connections
to a port opened for somebody else."""

from __future__ import annotations

from twisted.internet.address import IPv4Address
from twisted.internet.protocol import Protocol, ServerFactory
from twisted.trial.unittest import SynchronousTestCase

from velhanet.velha import wire
from velhanet.velha.lobby import INVITATIONS_PER_HOST, OPEN_INVITATIONS
from velhanet.velha.protocol import DATAGRAM_BURST, sameHost
from velhanet.velha.roster import MAX_PLAYERS, NICKS_PER_ADDRESS

from .velha_harness import BotRecorder, FakeLan

ANA, BO, EVE = "198.18.0.1", "198.18.0.2", "198.18.0.66"


class Storm(SynchronousTestCase):
    def setUp(self) -> None:
        self.lan = FakeLan()
        self.ana = BotRecorder(self.lan.clock, seed=1)
        self.bo = BotRecorder(self.lan.clock, seed=2)
        self.a = self.lan.addPeer("Ana", ANA, self.ana, announceTargets=[BO])
        self.b = self.lan.addPeer("Bo", BO, self.bo, announceTargets=[ANA], acceptPolicy="always")
        self.a.datagramReceived(b"02007Bo", BO)  # Ana knows Bo

    def storm(self, count: int, sources: list[str]) -> None:
        """``count`` MSG04 with made-up nicks, from the given source addresses in turn."""
        for number in range(count):
            self.lan.sendFrom(sources[number % len(sources)], wire.encode(wire.Invite(f"fake{number}")), BO)

    def test_stormDoesNotMakeAnAcceptingPeerRefuse(self) -> None:
        """Before: "busy: refusing Ana's invitation at once"."""
        self.storm(200, [EVE])
        self.lan.run(0.2)
        self.assertIsNone(self.a.invite("Bo"))
        self.lan.run(3)
        self.assertNotIn(("invite", "Bo", "declined"), self.ana.events)
        self.assertEqual(self.ana.kinds().count("match"), 1)
        self.assertEqual(self.b.matchProtocol.peerNick if self.b.matchProtocol else None, "Ana")

    def test_stormFromOneAddressIsBounded(self) -> None:
        self.storm(200, [EVE])
        self.lan.run(0.2)
        self.assertEqual(len([h for h in self.b.invitees.values() if h.active]), INVITATIONS_PER_HOST)
        self.storm(200, [f"127.0.1.{n}" for n in range(1, 101)])
        self.lan.run(0.2)
        self.assertEqual(len([h for h in self.b.invitees.values() if h.active]), OPEN_INVITATIONS)

    def test_rosterDoesNotGrowWithMadeUpNicks(self) -> None:
        """Before: 4,980 made-up nicks stayed in Bo's roster, and its memory did not come back."""
        self.b.datagramReceived(b"02008Ana", ANA)
        self.storm(5000, [EVE])
        self.lan.run(0.2)
        self.assertEqual(len(self.b.roster.byAddress(EVE)), NICKS_PER_ADDRESS)
        self.assertIn("Ana", self.b.roster)
        self.storm(5000, [f"127.1.{n // 250}.{n % 250}" for n in range(2500)])
        self.lan.run(0.2)
        self.assertLessEqual(len(self.b.roster), MAX_PLAYERS)

    def test_refusalsToAStormAreBounded(self) -> None:
        """While Bo plays, a storm's MSG04s are refused: at most three copies for each of a few of them."""
        self.a.invite("Bo")
        self.lan.run(3)
        self.assertIsNotNone(self.b.matchProtocol)
        self.storm(1000, [EVE])
        self.lan.run(10)
        refusals = [d for d in self.lan.log if d[0] == BO and d[1] == EVE]
        self.assertLessEqual(len(refusals), INVITATIONS_PER_HOST * 3)

    def test_otherInvitationsEndWhenTheMatchBegins(self) -> None:
        self.storm(2, [EVE])
        self.lan.run(1)  # accepted: Bo listens for both fakes
        self.assertEqual(len(self.lan.openListeners()), 2)
        self.a.invite("Bo")
        self.lan.run(3)
        self.assertEqual(self.ana.kinds().count("match"), 1)
        self.assertEqual(self.lan.openListeners(), [])  # the fakes' ports are closed
        self.assertIn(("invite", "fake0", "cancelled"), self.bo.events)
        self.assertEqual([h.nick for h in self.b.invitees.values() if h.active], [])


class FloodTests(SynchronousTestCase):
    """V3 of the campaign: 20,000 junk datagrams in 5 s from one host made Bo miss peers' MSG01."""

    def test_aFloodingHostIsDroppedOthersAreAnswered(self) -> None:
        lan = FakeLan()
        bo = lan.addPeer("Bo", BO, BotRecorder(lan.clock, seed=2), announceTargets=[ANA])
        decoded: list[object] = []
        bo.trace = lambda *event: decoded.append(event)
        for number in range(5000):
            bo.datagramReceived(b"99999" + bytes([number % 256]) * 100, EVE)
        self.assertEqual(len(decoded), DATAGRAM_BURST)  # the rest never reached the decoder
        bo.datagramReceived(b"01008Ana", ANA)
        lan.run(0.1)
        self.assertIn((BO, ANA), [(d[0], d[1]) for d in lan.log if d[2].startswith(b"02")])
        lan.run(10)  # slowed down: heard again
        bo.datagramReceived(b"01008Eve", EVE)
        self.assertIn("Eve", bo.roster)


class ThirdHostTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.lan = FakeLan(connectLatency=0.5)  # Ana's connection takes a while: Eve can be first
        self.ana = BotRecorder(self.lan.clock, seed=1)
        self.bo = BotRecorder(self.lan.clock, seed=2)
        self.a = self.lan.addPeer("Ana", ANA, self.ana, announceTargets=[BO])
        self.b = self.lan.addPeer("Bo", BO, self.bo, announceTargets=[ANA], acceptPolicy="always")
        self.a.datagramReceived(b"02007Bo", BO)

    def test_onlyTheInviterMayConnect(self) -> None:
        """Before: Eve connected first to the port Bo opened for Ana, and got the match."""
        self.a.invite("Bo")
        self.lan.run(0.6)  # Bo has answered Ana with its port
        [answer] = self.lan.sent(BO, wire.InviteAnswer)[-1:]
        port = answer.port  # type: ignore[attr-defined]
        self.assertGreater(port, 0)
        eve = self.lan.network(EVE)

        class Nothing(ServerFactory):
            protocol = Protocol

        attempt = eve.connect(BO, port, Nothing())  # type: ignore[arg-type]
        self.lan.run(0.5)
        self.assertIn("refused by the factory", str(self.failureResultOf(attempt).value))
        self.assertTrue(any("refused a connection from 198.18.0.66" in str(e) for e in self.bo.events), self.bo.events)
        self.lan.run(3)
        self.assertEqual(self.b.matchProtocol.peerNick if self.b.matchProtocol else None, "Ana")
        self.assertEqual(self.ana.kinds().count("match"), 1)


class SameHostTests(SynchronousTestCase):
    def test_onlyTheSameAddress(self) -> None:
        self.assertTrue(sameHost("198.18.0.1", "198.18.0.1"))
        self.assertFalse(sameHost("198.18.0.66", "198.18.0.1"))
        self.assertFalse(sameHost("127.0.0.1", "198.18.0.1"))
        # On loopback a program that binds only its UDP socket connects from 127.0.0.1...
        self.assertTrue(sameHost("127.0.0.1", "127.0.0.3"))
        # ...but another loopback address is another peer (the campaign's attacker at 127.0.0.66).
        self.assertFalse(sameHost("127.0.0.66", "127.0.0.3"))
        self.assertEqual(IPv4Address("TCP", "127.0.0.1", 1).host, "127.0.0.1")


class ClosedPortTests(SynchronousTestCase):
    """A MSG05 that names a port where nothing listens: the inviter reports it and is free again."""

    def test_answerWithAClosedPort(self) -> None:
        lan = FakeLan()
        ana = BotRecorder(lan.clock, seed=1)
        a = lan.addPeer("Ana", ANA, ana, announceTargets=[BO])
        a.datagramReceived(b"02007Bo", BO)

        class ClosedPortPeer:
            def datagramReceived(self, data: bytes, host: str) -> None:
                if isinstance(wire.decode(data), wire.Invite):
                    lan.sendFrom(BO, wire.encode(wire.InviteAnswer("Bo", 40999)), ANA)

        lan.peers[BO] = ClosedPortPeer()
        self.assertIsNone(a.invite("Bo"))
        lan.run(2)
        self.assertIn(("invite", "Bo", "failed"), ana.events)
        self.assertFalse(a.busy())
        self.assertIsNone(a.invite("Bo"))  # and it may invite again at once
        lan.run(120, step=0.05)
        self.assertEqual(lan.clock.getDelayedCalls(), [])
        self.assertEqual(a.inviters, {})
