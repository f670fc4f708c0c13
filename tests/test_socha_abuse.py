"""Hostile clients against the Software-Challenge server (issue 13): output that is never read,
messages that never end, the size cap across reads, password guessing, undecodable encodings,
and a real player killed mid-game."""

from __future__ import annotations

import signal
from pathlib import Path
from unittest import mock

from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import Clock, deferLater
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.socha import lobby as lobbyModule
from velhanet.socha import protocol as protocolModule
from velhanet.socha.lobby import SochaLimits
from velhanet.socha.protocol import SochaFactory
from velhanet.socha.room import PACKET_GAP
from velhanet.socha.wire import XmlError, XmlStreamReader

from .processes import Child, freePort, python
from .test_socha import Peer, exited, moveXml, position, serve, sochaPlayers


def peerFrom(lobby: SochaFactory, host: str) -> Peer:
    """A L{Peer} whose connection comes from ``host``."""
    peer = Peer.__new__(Peer)
    peer.protocol = lobby.buildProtocol(None)
    peer.transport = StringTransport(peerAddress=IPv4Address("TCP", host, 40000))
    peer.protocol.makeConnection(peer.transport)
    peer.reader = XmlStreamReader()
    peer.sentProtocol = False
    return peer


class SizeCapTests(SynchronousTestCase):
    def test_unfinishedStartTagIsCapped(self) -> None:
        """59 MiB inside ``<join gameType="…`` once grew the server by 59-129 MB."""
        for opening in (b'<join gameType="', b"<", b"<?pi ", b"<!-- ", b"<join a='1' "):
            reader = XmlStreamReader(maxMessage=1000)
            reader.feed(b"<protocol>" + opening)
            fed = 0
            with self.assertRaises(XmlError):
                for _ in range(100):
                    reader.feed(b"x" * 500)
                    fed += 500
            self.assertLessEqual(fed, 1500, opening)

    def test_smallMessagesAcrossReadsAreNotTooLong(self) -> None:
        """8 KB messages sent 4 at a time, read in any slices: never refused as too long."""
        message = b'<room roomId="r"><data class="move">' + b"<from x='1' y='2'/>" * 425 + b"</data></room>"
        self.assertLess(len(message), 8 * 1024)
        stream = b"<protocol>" + message * 300
        for read in (4 * len(message) + 3000, 65536, 3 * len(message) // 2, 60000):
            reader = XmlStreamReader()
            count = sum(len(reader.feed(stream[at : at + read])) for at in range(0, len(stream), read))
            self.assertEqual(count, 300, read)

    def test_oneLongMessageIsStillRefused(self) -> None:
        reader = XmlStreamReader(maxMessage=1000)
        reader.feed(b"<protocol><room>" + b"<a/>" * 200)
        self.assertIn("longer than 1000", str(self.assertRaises(XmlError, reader.feed, b"<a/>" * 100)))

    def test_unknownEncodingIsAnXmlError(self) -> None:
        """``encoding='ebcdic'`` once escaped as a LookupError (a traceback, the client dropped unanswered)."""
        error = self.assertRaises(
            XmlError, XmlStreamReader().feed, b"<?xml version='1.0' encoding='ebcdic'?><protocol>"
        )
        self.assertIn("encoding", str(error))


class ServerAbuseTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.lobby = SochaFactory(self.clock, password="secret", limits=SochaLimits(maxUnsent=20_000))

    def gaps(self, count: int) -> None:
        for _ in range(count):
            self.clock.advance(PACKET_GAP)

    def test_unknownEncodingAnsweredAndClosed(self) -> None:
        peer = Peer(self.lobby)
        peer.protocol.dataReceived(b"<?xml version='1.0' encoding='ebcdic'?><protocol><join/>")
        self.assertIn(b"unsupported encoding", peer.transport.value())
        self.assertTrue(peer.transport.disconnecting)

    def test_clientThatDoesNotReadStopsBeingRead(self) -> None:
        peer = Peer(self.lobby)
        peer.send("<join/>")
        peer.protocol.pauseProducing()  # its socket buffer is full: it does not read
        self.assertEqual(peer.transport.producerState, "paused")  # so we stop reading it
        peer.protocol.resumeProducing()
        self.assertEqual(peer.transport.producerState, "producing")

    def test_observerThatDoesNotReadIsDropped(self) -> None:
        """Output for a client that does not read is bounded; the game it watches goes on."""
        one, two = Peer(self.lobby), Peer(self.lobby)
        one.send("<join/>")
        roomId = one.messages()[0].get("roomId", "")
        admin = Peer(self.lobby)
        admin.send(f'<authenticate password="secret"/><observe roomId="{roomId}"/>')
        admin.protocol.pauseProducing()
        two.send("<join/>")
        self.gaps(3)
        core = self.lobby.lobby.rooms[roomId].core
        players: dict[object, Peer] = {
            slot.client: peer for slot in core.slots for peer in (one, two) if peer.protocol is slot.client
        }
        for _ in range(30):
            if roomId not in self.lobby.lobby.rooms or admin.transport.disconnected:
                break
            mover = players[core.slots[position(self.lobby, roomId).turn % 2].client]
            mover.send(moveXml(roomId, position(self.lobby, roomId).legalMoves()[0]))
            self.gaps(2)
        self.assertTrue(admin.transport.disconnected)  # aborted, not waiting for it to read
        self.assertFalse(one.transport.disconnecting or two.transport.disconnecting)
        self.assertNotIn(admin.protocol, self.lobby.lobby.observers.get(roomId, []))

    def test_errorsInARowClose(self) -> None:
        peer = Peer(self.lobby)
        peer.send("<nonsense/>" * SochaLimits.errorsInRow)
        self.assertFalse(peer.transport.disconnecting)
        peer.send("<join/>")  # a request that is no error starts the count again
        peer.send("<nonsense/>" * SochaLimits.errorsInRow)
        self.assertFalse(peer.transport.disconnecting)
        peer.send("<nonsense/>")
        self.assertTrue(peer.transport.disconnecting)
        self.assertIn(b"requests in a row were errors", peer.transport.value())

    def test_wrongPasswordsCloseTheConnection(self) -> None:
        peer = Peer(self.lobby)
        for _ in range(SochaLimits.wrongPasswords - 1):
            peer.send('<authenticate password="guess"/>')
        self.assertFalse(peer.transport.disconnecting)
        peer.send('<authenticate password="guess"/>')
        self.assertTrue(peer.transport.disconnecting)
        self.assertFalse(peer.protocol.admin)

    def test_passwordGuessingFromOneAddressMustWait(self) -> None:
        """20,000 guesses on one connection once took 0.59 s; now an address gets 10, then 5 a minute."""
        guesses = 0
        for _ in range(100):
            peer = peerFrom(self.lobby, "198.18.0.101")
            while not peer.transport.disconnecting:
                peer.send('<authenticate password="guess"/>')
                guesses += 1
        self.assertLessEqual(guesses, SochaLimits.wrongPasswordsPerAddress + 100)
        late = peerFrom(self.lobby, "198.18.0.101")
        late.send('<authenticate password="secret"/>')  # even the right one waits
        self.assertFalse(late.protocol.admin)
        self.assertIn(b"wait", late.transport.value())
        other = peerFrom(self.lobby, "198.18.0.102")
        other.send('<authenticate password="secret"/>')
        self.assertTrue(other.protocol.admin)
        self.clock.advance(60)
        again = peerFrom(self.lobby, "198.18.0.101")
        again.send('<authenticate password="secret"/>')
        self.assertTrue(again.protocol.admin)

    def test_passwordComparedInConstantTime(self) -> None:
        with mock.patch.object(lobbyModule.hmac, "compare_digest", wraps=lobbyModule.hmac.compare_digest) as compare:
            Peer(self.lobby).send('<authenticate password="secret"/>')
        compare.assert_called_once_with(b"secret", b"secret")


class KilledPlayerTests(TestCase):
    """A real ``socha`` player killed with SIGKILL mid-game: its opponent gets the result and ends."""

    timeout = 120

    @inlineCallbacks
    def test_opponentOfAKilledPlayerFinishes(self):
        factory, port = serve(self)
        players = sochaPlayers(self, port, (3, 4), "--think", "0.3")
        for _ in range(300):  # until the game has gone a few moves
            rooms = list(factory.lobby.rooms.values())
            if rooms and rooms[0].core.game is not None and position(factory, rooms[0].core.roomId).turn >= 3:
                break
            yield deferLater(reactor, 0.05, lambda: None)
        else:
            self.fail("the game never started")
        players[0].process.send_signal(signal.SIGKILL)
        [output] = yield exited(players[1:], 10)
        self.assertEqual(players[1].process.returncode, 0, output)
        self.assertIn("RESULT", output)
        self.assertEqual(factory.lobby.rooms, {})


class ShutdownTests(SynchronousTestCase):
    """A stopping server ends every game with a result and ``<left/>``: real players end on that."""

    def test_gamesEndAndConnectionsClose(self) -> None:
        clock = Clock()
        lobby = SochaFactory(clock)
        one, two = Peer(lobby), Peer(lobby)
        one.send("<join/>")
        two.send("<join/>")
        for _ in range(3):
            clock.advance(PACKET_GAP)
        one.messages(), two.messages()
        stopped = lobby.shutdown()
        for peer in (one, two):
            [result, left] = peer.messages()
            self.assertEqual(result.find("data/winner").get("reason"), "Der Server wird beendet.")  # type: ignore[union-attr]
            self.assertEqual(left.tag, "left")
            self.assertTrue(peer.transport.disconnecting)
        self.assertNoResult(stopped)
        one.protocol.connectionLost()
        self.assertNoResult(stopped)
        two.protocol.connectionLost()
        self.successResultOf(stopped)
        self.assertEqual(lobby.lobby.rooms, {})

    def test_clientsThatDoNotCloseAreAbortedAfterTheGrace(self) -> None:
        clock = Clock()
        lobby = SochaFactory(clock)
        peer = Peer(lobby)
        peer.send("<join/>")
        stopped = lobby.shutdown()
        clock.advance(protocolModule.SHUTDOWN_GRACE)
        self.assertTrue(peer.transport.disconnected)
        self.successResultOf(stopped)


class RealRestartTests(TestCase):
    """``twistd socha-server`` stopped with SIGTERM mid-game: two real ``socha`` players get a result and exit.

    (Killed with SIGKILL instead, the server cannot say anything, and the
    ``socha`` 4.3.9 library never notices the closed connection: its players
    wait forever. docs/socha.md says so.)
    """

    timeout = 60

    @inlineCallbacks
    def test_stoppedServerEndsTheGame(self):
        port = freePort()
        log = Path(self.mktemp()).resolve()
        server = Child(
            self, python("-m", "twisted", "socha-server", "--listen", f"tcp:{port}:interface=127.0.0.1"), log.open("w")
        )
        server.waitForPort(port)
        players = sochaPlayers(self, str(port), (5, 6), "--think", "0.3")
        yield deferLater(reactor, 4.0, lambda: None)
        self.assertEqual([p.process.poll() for p in players], [None, None])  # mid-game
        server.process.send_signal(signal.SIGTERM)
        outputs = yield exited(players, 10)
        self.assertEqual([p.process.returncode for p in players], [0, 0], outputs)
        for output in outputs:
            self.assertIn("RESULT None False Der Server wird beendet.", output)


class FillingTransport(StringTransport):
    """A socket whose send buffer fills after ``capacity`` bytes: it pauses its producer, as TCP does."""

    capacity = 10_000

    def write(self, data: bytes) -> None:
        super().write(data)
        if len(self.value()) > self.capacity and self.producer is not None and not getattr(self, "full", False):
            self.full = True
            self.producer.pauseProducing()


class UnreadAnswersTests(SynchronousTestCase):
    """S1 of the campaign: a client interleaving good requests with bad ones, never reading.

    Before: one 64 KiB read was handled whole, ~2 MB of errorpackets per read, and the memory
    stayed after it left. Now handling stops as soon as the client's socket is full."""

    def test_handlingStopsWhenTheClientDoesNotRead(self) -> None:
        clock = Clock()
        lobby = SochaFactory(clock, password="p")
        protocol = lobby.buildProtocol(None)
        transport = FillingTransport()
        transport.capacity = 2_000  # full before one turn's answers are written
        protocol.makeConnection(transport)
        burst = (b'<authenticate password="p"/>' + b"<x/>" * 16) * 600  # 48 KiB, 9,600 errorpackets
        protocol.dataReceived(b"<protocol>" + burst)
        before = transport.value()
        self.assertLess(len(before), transport.capacity + 200_000)  # one 4 KiB piece's answers at most
        self.assertEqual(transport.producerState, "paused")  # and the client is not read meanwhile
        self.assertTrue(protocol._writesPaused)
        transport.clear()
        transport.full = False
        transport.capacity = 10**9
        protocol.resumeProducing()  # it reads again: the rest is handled, nothing lost
        self.assertLessEqual(transport.value().count(b"<errorpacket"), lobby.limits.perTurn)  # a turn
        clock.advance(0)  # (a Clock runs the turns scheduled meanwhile too)
        reader = XmlStreamReader(maxMessage=1 << 20)
        answers = reader.feed(before) + reader.feed(transport.value())
        self.assertEqual([a.tag for a in answers], ["errorpacket"] * 9600)
        self.assertFalse(transport.disconnecting)


class TurnTests(SynchronousTestCase):
    """A client that reads everything but sends thousands of requests in one read."""

    def test_othersAreHandledBetweenTurns(self) -> None:
        clock = Clock()
        lobby = SochaFactory(clock, password="p")
        flooder, other = lobby.buildProtocol(None), lobby.buildProtocol(None)
        flooderTransport, otherTransport = StringTransport(), StringTransport()
        flooder.makeConnection(flooderTransport)
        other.makeConnection(otherTransport)
        flooder.dataReceived(b"<protocol>" + (b'<authenticate password="p"/>' + b"<x/>" * 16) * 60)
        handled = flooderTransport.value().count(b"<errorpacket")
        self.assertEqual(handled, 60)  # the first 64 messages (4 authentications), then the others' turn
        self.assertEqual(flooderTransport.producerState, "paused")
        other.dataReceived(b"<protocol><x/>")
        self.assertEqual(otherTransport.value().count(b"<errorpacket"), 1)  # answered at once
        while clock.getDelayedCalls():
            clock.advance(0)
        self.assertEqual(flooderTransport.value().count(b"<errorpacket"), 960)  # nothing lost
        self.assertEqual(flooderTransport.producerState, "producing")
