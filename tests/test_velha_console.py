"""The console front end: commands in, board and messages out, through its transport only."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.kinarow import TICTACTOE, Place
from velhanet.velha import wire
from velhanet.velha.frontends import ConsoleFrontEnd, renderBoard
from velhanet.velha.peer import Peer


class ConsoleTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.exits: list[bool] = []
        self.sent: list[bytes] = []
        self.clock = Clock()
        self.console = ConsoleFrontEnd(exit=lambda: self.exits.append(True))
        self.peer = Peer(
            "Bo",
            clock=self.clock,
            sendDatagram=lambda raw, addr: self.sent.append(raw),
            network=None,  # type: ignore[arg-type]
            frontEnd=self.console,
        )
        self.console.attach(self.peer)
        self.transport = StringTransport()
        self.console.makeConnection(self.transport)
        self.transport.clear()

    def type(self, line: str) -> str:
        self.console.dataReceived(line.encode() + b"\n")
        out = self.transport.value().decode()
        self.transport.clear()
        return out

    def test_help(self) -> None:
        self.assertIn("invite NICK", self.type("help"))

    def test_whoAndInvite(self) -> None:
        self.assertIn("nobody else is online", self.type("who"))
        self.peer.datagrams.datagramReceived(b"02008Ana", ("198.18.0.1", 20181))
        self.assertIn("* Ana is online (198.18.0.1)", self.transport.value().decode())
        self.transport.clear()
        self.assertIn("Ana (198.18.0.1)", self.type("who"))
        self.assertIn("inviting Ana", self.type("invite Ana"))
        self.assertIn(b"04007Bo", self.sent)
        self.assertIn("already playing or inviting", self.type("invite Ana"))

    def test_invitationAndAnswer(self) -> None:
        self.peer.datagrams.datagramReceived(b"04008Ana", ("198.18.0.1", 20181))
        self.assertIn("Ana invites you", self.transport.value().decode())
        self.assertIn("nobody has invited you", ConsoleTests._noInvite(self))
        out = self.type("no")
        self.assertIn("declined", out)
        self.clock.advance(0.5)
        self.assertIn(b"05009Bo|0", self.sent)

    def _noInvite(self) -> str:
        other = ConsoleFrontEnd(exit=lambda: None)
        peer = Peer("Cy", clock=Clock(), sendDatagram=lambda r, a: None, network=None, frontEnd=other)  # type: ignore[arg-type]
        other.attach(peer)
        transport = StringTransport()
        other.makeConnection(transport)
        other.dataReceived(b"yes\n")
        return transport.value().decode()

    def test_moveWithoutMatchAndUnknown(self) -> None:
        self.assertIn("no match is running", self.type("5"))
        self.assertIn("unknown command 'dance'", self.type("dance"))

    def test_exit(self) -> None:
        self.type("exit")
        self.assertEqual(self.exits, [True])

    def test_renderBoard(self) -> None:
        board = TICTACTOE.initial().apply(Place(0, 0)).apply(Place(1, 1))
        self.assertEqual(renderBoard(board), " X | 2 | 3\n---+---+---\n 4 | O | 6\n---+---+---\n 7 | 8 | 9")

    def test_traceLineAsBefore(self) -> None:
        self.console.tracer("udp")("out", "198.18.0.1", b"04007Bo", wire.Invite("Bo"))
        # Above the prompt, as every line the console says.
        self.assertIn(f"[udp -> 198.18.0.1] b'04007Bo'  {wire.Invite('Bo')}\n", self.transport.value().decode())
