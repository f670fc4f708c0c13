"""Hostile clients against the Gambit server: each attack of the abuse campaign (issue 13).

Every test here reproduces something a client did to the server before it
was bounded, and checks that the attacker pays and nobody else does.
"""

from __future__ import annotations

import json
from unittest import mock

from twisted.trial.unittest import SynchronousTestCase

from tests.test_gambit import FakeClient, ServerHarness
from velhanet.gambit import wire
from velhanet.gambit.protocol import GambitLimits
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message


def _move(args: str) -> bytes:
    return json.dumps({"cmd": 4, "user": "x", "args": args}).encode()


class LinearParsingTests(SynchronousTestCase):
    """64 KB of ``{`` once stalled the server for seconds: the decoder re-parsed what it had."""

    def test_openObjectIsNeverReparsed(self) -> None:
        decoder = JsonStreamDecoder()
        with mock.patch.object(wire._DECODER, "raw_decode", wraps=wire._DECODER.raw_decode) as loads:
            for _ in range(4000):
                self.assertEqual(decoder.feed(b"{"), [])
        self.assertEqual(loads.call_count, 0, "json ran on an object that was not complete")
        [(raw, error)] = decoder.feed(b"{" * 200)
        self.assertIsInstance(error, MalformedMessage)
        self.assertTrue(error.fatal)  # type: ignore[union-attr]

    def test_eachCompleteObjectIsDecodedOnce(self) -> None:
        decoder = JsonStreamDecoder()
        data = _move("e2e4") * 50
        with mock.patch.object(wire._DECODER, "raw_decode", wraps=wire._DECODER.raw_decode) as loads:
            for index in range(len(data)):
                decoder.feed(data[index : index + 1])
        self.assertEqual(loads.call_count, 50)

    def test_deepNestingAndHugeNumbersAreMalformed(self) -> None:
        decoder = JsonStreamDecoder(maxSize=10_000)  # an operator may allow longer messages
        deep = b'{"cmd":4,"args":' + b"[" * 999 + b"]" * 999 + b"}"
        huge = b'{"cmd":' + b"9" * 5000 + b"}"
        surrogate = b'{"cmd":2,"user":"\\ud800"}'
        results = decoder.feed(deep + huge + surrogate + _move("e2e4"))
        self.assertEqual(len(results), 4)
        for _, item in results[:3]:
            self.assertIsInstance(item, MalformedMessage)
            self.assertFalse(item.fatal)  # type: ignore[union-attr]
        self.assertEqual(results[3][1], Message(Cmd.MOVE, "x", "e2e4"))


class ServerAbuseTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.server = ServerHarness()

    def assertStillPlaying(self, white: FakeClient, black: FakeClient) -> None:
        """An honest pair can still play: a legal move goes through both ways."""
        white.received(), black.received()
        white.send(cmd=4, user="alice", args="e4")
        self.assertEqual(black.received(), [Message(Cmd.MOVE, "", "e4")])
        black.send(cmd=4, user="bob", args="e5")
        self.assertEqual(white.received(), [Message(Cmd.MOVE, "", "e5")])
        self.assertFalse(white.transport.disconnecting or black.transport.disconnecting)

    def test_loneSurrogateInJoinLeavesTheGameOpen(self) -> None:
        white = self.server.client()
        white.send(cmd=2, user="alice")
        gameId = white.received()[0].args
        attacker = self.server.client()
        attacker.protocol.dataReceived(b'{"cmd":3,"user":"\\ud800","args":"' + gameId.encode() + b'"}')
        [answer] = attacker.received()
        self.assertEqual(answer.cmd, Cmd.ERROR)
        self.assertIn("surrogate", answer.args)
        self.assertEqual(white.received(), [])
        black = self.server.client()
        black.send(cmd=3, user="bob", args=gameId)
        self.assertEqual(black.received(), [Message(Cmd.OK, "", "alice")])
        self.assertStillPlaying(white, black)

    def test_loneSurrogateInEndIsRefused(self) -> None:
        white, black, _ = self.server.game()
        black.protocol.dataReceived(b'{"cmd":5,"user":"bob","args":"\\udfff"}')
        self.assertEqual(black.received()[0].cmd, Cmd.ERROR)
        self.assertStillPlaying(white, black)

    def test_crashInputsGetAnAnswerAndKeepTheConnection(self) -> None:
        client = self.server.client()
        for bad in (
            b'{"cmd":2,"user":' + b"[" * 999 + b"]" * 999 + b"}",
            b'{"cmd":' + b"1" * 4000 + b"}",
            b'{"cmd":2,"user":"\\udc00abc"}',
        ):
            client.protocol.dataReceived(bad)
            [answer] = client.received()
            self.assertEqual(answer.cmd, Cmd.ERROR)
            self.assertFalse(client.transport.disconnecting)
        client.send(cmd=2, user="carol")
        self.assertEqual(client.received()[0].cmd, Cmd.OK)

    def test_drawFloodClosesTheFlooderNotItsOpponent(self) -> None:
        white, black, _ = self.server.game()
        white.protocol.pauseProducing()  # White is slow to read, as a real client may be
        black.protocol.dataReceived(json.dumps({"cmd": 6, "user": "bob"}).encode() * 70)
        self.server.clock.advance(0)  # the flood is handled over several reactor turns
        self.assertFalse(white.transport.disconnecting)
        self.assertTrue(black.transport.disconnecting)
        white.protocol.resumeProducing()
        said = [message.args for message in white.received()]
        self.assertEqual(said.count("bob offers a draw"), 1)

    def test_relayFloodClosesTheFlooder(self) -> None:
        server = ServerHarness(validate=False)
        white, black, _ = server.game()
        white.protocol.pauseProducing()
        black.protocol.dataReceived(_move("a1a2") * 70)
        self.assertTrue(black.transport.disconnecting)
        self.assertFalse(white.transport.disconnecting)
        black.protocol.connectionLost()
        white.protocol.resumeProducing()
        received = white.received()
        self.assertEqual(len([m for m in received if m.cmd == Cmd.MOVE]), GambitLimits.relayWindow)
        self.assertEqual(received[-1], Message(Cmd.END, "", "El jugador bob ha abandonado la partida"))
        self.assertFalse(white.transport.disconnecting)

    def test_atMostPerTurnMessagesThenTheOthers(self) -> None:
        white, black, _ = self.server.game()
        flooder = self.server.client()
        flooder.protocol.dataReceived(_move("e2e4") * 40)  # 40 MOVEs outside a game, 40 ERRORs
        self.assertEqual(flooder.transport.producerState, "paused")  # reading stops until its next turn
        self.assertEqual(len(flooder.protocol._queue), GambitLimits.perTurn - 1)  # one written at once
        white.send(cmd=4, user="alice", args="e4")  # another game goes on meanwhile
        self.assertEqual(black.received(), [Message(Cmd.MOVE, "", "e4")])
        self.assertEqual(flooder.transport.producerState, "producing")
        self.assertEqual(len(flooder.received()), 40)

    def test_perTurnBoundHandlesEverythingInTheEnd(self) -> None:
        client = self.server.client()
        client.protocol.dataReceived(json.dumps({"cmd": 4, "user": "x", "args": "e4"}).encode() * 40)
        self.assertEqual(client.transport.producerState, "paused")
        answers = client.received()
        self.assertEqual(len(answers), 40)
        self.assertTrue(all(answer.cmd == Cmd.ERROR for answer in answers))
        self.assertEqual(client.transport.producerState, "producing")

    def test_malformedInARowCloses(self) -> None:
        client = self.server.client()
        client.protocol.dataReceived(b"{}" * GambitLimits.malformedInRow)
        self.assertFalse(client.transport.disconnecting)
        client.send(cmd=2, user="dave")  # a good one in between starts the count again
        client.protocol.dataReceived(b"{}" * GambitLimits.malformedInRow)
        self.assertFalse(client.transport.disconnecting)
        client.protocol.dataReceived(b"{}")
        self.assertTrue(client.transport.disconnecting)
        self.assertIn("bad messages in a row", client.transport.value().decode())

    def test_failedJoinsCloseTheConnection(self) -> None:
        client = self.server.client()
        for number in range(GambitLimits.failedJoins):
            client.send(cmd=3, user="eve", args=f"{number:04x}")
        self.assertFalse(client.transport.disconnecting)
        client.send(cmd=3, user="eve", args="ffff")
        self.assertTrue(client.transport.disconnecting)

    def test_gameIdsCannotBeScanned(self) -> None:
        white = self.server.client()
        white.send(cmd=2, user="alice")
        gameId = white.received()[0].args
        candidates = [f"{number:04x}" for number in range(0x10000) if f"{number:04x}" != gameId]
        scanners = []
        for _ in range(64):  # 64 connections from one address, 40 ids each, 1 ms apart
            scanner = self.server.client()
            scanners.append(scanner)
            for _ in range(40):
                if not scanner.transport.disconnecting:
                    scanner.send(cmd=3, user="eve", args=candidates.pop())
                    self.server.clock.advance(0.001)
        answers = [message.args for scanner in scanners for message in scanner.received()]
        looked = [args for args in answers if "no open game" in args]
        self.assertLessEqual(len(looked), GambitLimits.failedJoinsPerAddress + 1)
        self.assertGreater(len([args for args in answers if "wait" in args]), 64)
        self.assertFalse(any(args == "alice" for args in answers))
        # another address is not affected, and the scanner's address recovers with time
        honest = self.server.client(host="198.18.0.7")
        honest.send(cmd=3, user="bob", args=gameId)
        self.assertEqual(honest.received()[0], Message(Cmd.OK, "", "alice"))

    def test_addressRecoversAfterAWhile(self) -> None:
        for _ in range(GambitLimits.failedJoinsPerAddress // GambitLimits.failedJoins):
            scanner = self.server.client()
            for number in range(GambitLimits.failedJoins):
                scanner.send(cmd=3, user="eve", args=f"{number:04x}")
        late = self.server.client()
        late.send(cmd=3, user="eve", args="0000")
        self.assertIn("wait", late.received()[0].args)
        self.server.clock.advance(60)
        late.send(cmd=3, user="eve", args="0000")
        self.assertIn("no open game", late.received()[0].args)
