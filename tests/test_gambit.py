"""Gambit: codec and framing, every server command path, bad input, validation,
a full game to mate, disconnects, isolation between games, and the client."""

from __future__ import annotations

import json
import random

import chess
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.test import iosim
from twisted.trial.unittest import SynchronousTestCase

from velhanet.bots.chess import chooseBotMove
from velhanet.clientlimits import AddressBuckets
from velhanet.gambit.client import GambitClientProtocol
from velhanet.gambit.lobby import Game, Lobby
from velhanet.gambit.protocol import GambitLimits, GambitServerFactory, GambitServerProtocol
from velhanet.gambit.room import Participant, Room, RoomCore, RoomMachine
from velhanet.gambit.session import ClientSession
from velhanet.gambit.texts import Texts
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message, encode
from velhanet.games.chessgame import ChessRules, gameOutcome, parseMove, playForgetting
from velhanet.games.interfaces import IllegalMove
from velhanet.watching import Score

from .gambit_original import OriginalServerFactory

FOOLS_MATE = ["f2f3", "e7e5", "g2g4", "d8h4"]


class WireTests(SynchronousTestCase):
    def decode(self, *chunks: bytes) -> list[object]:
        decoder = JsonStreamDecoder()
        out: list[object] = []
        for chunk in chunks:
            out += [item for _, item in decoder.feed(chunk)]
        return out

    def test_encodeLikeGo(self) -> None:
        self.assertEqual(encode(Message(1, "alice", "e215")), b'{"Cmd":1,"User":"alice","Args":"e215"}\n')
        self.assertEqual(encode(Message(0, "", "<a&b>")), b'{"Cmd":0,"User":"","Args":"\\u003ca\\u0026b\\u003e"}\n')
        self.assertEqual(encode(Message(1, "José", "")), '{"Cmd":1,"User":"José","Args":""}\n'.encode())
        # Go's encoding/json also escapes the two JavaScript line terminators and control characters.
        self.assertEqual(
            encode(Message(1, "a\u2028b\u2029", '\x01\n"')),
            b'{"Cmd":1,"User":"a\\u2028b\\u2029","Args":"\\u0001\\n\\""}\n',
        )

    def test_backToBackSplitAndWhitespace(self) -> None:
        data = b'{"Cmd":2,"User":"a","Args":""}  \n\t{"cmd":4,"user":"a","args":"ab12:e2e4"}{"CMD":5}'
        expected = [Message(2, "a", ""), Message(4, "a", "ab12:e2e4"), Message(5, "", "")]
        self.assertEqual(self.decode(data), expected)
        for cut in range(1, len(data)):
            self.assertEqual(self.decode(data[:cut], data[cut:]), expected, cut)

    def test_unicodeSplitInsideACharacter(self) -> None:
        raw = '{"Cmd":2,"User":"Müller ♞","Args":""}'.encode()
        cut = raw.index("♞".encode()) + 1
        self.assertEqual(self.decode(raw[:cut], raw[cut:]), [Message(2, "Müller ♞", "")])

    def test_literalsAndNumbersSplit(self) -> None:
        self.assertEqual(self.decode(b'{"Cmd":4,"x":tr', b'ue,"Args":"e4"}'), [Message(4, "", "e4")])
        self.assertEqual(self.decode(b'{"Cmd":', b"4}"), [Message(4, "", "")])

    def test_badInputThenRecovery(self) -> None:
        items = self.decode(b'nonsense\n{"Cmd":"2"}[1,2]\n{"Cmd":4,"User":7}{"Cmd":1,"Args":"ok"}')
        kinds = [type(i).__name__ for i in items]
        self.assertEqual(
            kinds, ["MalformedMessage", "MalformedMessage", "MalformedMessage", "MalformedMessage", "Message"]
        )
        self.assertIn("'cmd' must be an integer", str(items[1]))
        self.assertIn("'user' must be a string", str(items[3]))

    def test_invalidJson(self) -> None:
        items = self.decode(b'{"Cmd": 1 2}\n{"Cmd":1}')
        self.assertIn("invalid JSON", str(items[0]))
        self.assertEqual(items[1], Message(1))

    def test_cmdRange(self) -> None:
        self.assertIn("from 0 to 255", str(self.decode(b'{"Cmd":300}')[0]))
        self.assertIn("must be an integer", str(self.decode(b'{"Cmd":true}')[0]))

    def test_oversizeIsFatal(self) -> None:
        items = self.decode(b'{"Cmd":4,"Args":"' + b"x" * 5000)
        self.assertEqual(len(items), 1)
        assert isinstance(items[0], MalformedMessage)
        self.assertTrue(items[0].fatal)


class ChessParsingTests(SynchronousTestCase):
    def test_everyNotation(self) -> None:
        board = chess.Board()
        e4 = chess.Move.from_uci("e2e4")
        self.assertEqual(parseMove(board, "e215:e2e4", "e215"), e4)
        self.assertEqual(parseMove(board, "e2e4"), e4)
        self.assertEqual(parseMove(board, "e4"), e4)
        after = board.copy()
        after.push(e4)
        self.assertEqual(parseMove(board, after.fen()), e4)

    def test_refusals(self) -> None:
        board = chess.Board()
        for text, fragment in [
            ("e2e5", "not legal here"),
            ("e3e4", "no piece on e3"),
            ("e7e5", "is not White's"),
            ("Qh5", "not legal in this position"),
            ("zz", "is not a move"),
            ("ab12:e2e4", "this game is 'e215'"),
            ("", "empty"),
            ("8/8/8/8/8/8/8/8 w - - 0 1", "no legal move leads"),
        ]:
            error = self.assertRaises(IllegalMove, parseMove, board, text, "e215")
            self.assertIn(fragment, str(error), text)

    def test_engineInterface(self) -> None:
        state = ChessRules().initial()
        for move in FOOLS_MATE:
            state = state.apply(move)
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 1)
        self.assertEqual(state.outcome.reason, "Black wins by checkmate")
        self.assertRaises(IllegalMove, state.apply, "e2e4")
        self.assertRaises(IllegalMove, ChessRules().initial().apply, "e2e4", 1)


class OutcomeTests(SynchronousTestCase):
    """gameOutcome asks the library's questions in a cheaper order (issue 14): same answers."""

    @staticmethod
    def libraryOutcome(board: chess.Board) -> chess.Outcome | None:
        """The definition: python-chess's outcome, then threefold repetition and the 50-move rule now."""
        outcome = board.outcome(claim_draw=False)
        if outcome is None and board.is_repetition(3):
            outcome = chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None)
        if outcome is None and board.is_fifty_moves():
            outcome = chess.Outcome(chess.Termination.FIFTY_MOVES, None)
        return outcome

    def test_sameAsTheLibraryOnRandomGames(self) -> None:
        rng = random.Random(5)
        endings: set[chess.Termination] = set()
        for _ in range(40):
            board = chess.Board()
            while True:
                expected = self.libraryOutcome(board)
                if (outcome := gameOutcome(board)) != expected:  # the FEN only for the message: it is costly
                    self.fail(f"{outcome} != {expected} at {board.fen()}")
                if expected is not None:
                    endings.add(expected.termination)
                    break
                board.push(rng.choice(list(board.legal_moves)))
        self.assertGreaterEqual(len(endings), 3)  # the games reached several kinds of end

    def test_repetitionsAndMoveRules(self) -> None:
        board = chess.Board()
        shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
        for expected in (None, chess.Termination.THREEFOLD_REPETITION):
            for uci in shuffle:
                board.push_uci(uci)
            outcome = gameOutcome(board)
            self.assertEqual(outcome and outcome.termination, expected)
        for uci in shuffle * 2:
            board.push_uci(uci)
        self.assertEqual(gameOutcome(board), chess.Outcome(chess.Termination.FIVEFOLD_REPETITION, None))
        fifty = chess.Board("8/8/4k3/8/8/4K3/4R3/8 w - - 99 80")
        fifty.push_uci("e2d2")
        self.assertEqual(gameOutcome(fifty), chess.Outcome(chess.Termination.FIFTY_MOVES, None))
        seventyFive = chess.Board("8/8/4k3/8/8/4K3/4R3/8 w - - 149 100")
        seventyFive.push_uci("e2d2")
        self.assertEqual(gameOutcome(seventyFive), self.libraryOutcome(seventyFive))
        self.assertEqual(gameOutcome(seventyFive).termination, chess.Termination.SEVENTYFIVE_MOVES)  # type: ignore[union-attr]


def position(board: chess.Board) -> tuple[object, ...]:
    """What a FEN says, from the board's own fields (a FEN per ply was most of these tests' time).

    Stricter than the FEN: the en-passant square as set, legal capture or not.
    """
    pieces = (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, board.promoted)
    counters = (board.turn, board.castling_rights, board.ep_square, board.halfmove_clock, board.fullmove_number)
    return (*board.occupied_co, *pieces, *counters)


class ForgettingTests(SynchronousTestCase):
    """playForgetting drops the history after irreversible moves, and no rule notices."""

    def test_sameOutcomesWithoutTheHistory(self) -> None:
        rng = random.Random(11)
        longestKept = 0
        endings: set[chess.Termination] = set()
        for _ in range(40):
            remembering, forgetting = chess.Board(), chess.Board()
            while (expected := gameOutcome(remembering)) is None:
                if (early := gameOutcome(forgetting)) is not None:
                    self.fail(f"{early} without the history at {forgetting.fen()}")
                move = rng.choice(list(remembering.legal_moves))
                remembering.push(move)
                playForgetting(forgetting, move)
                if position(forgetting) != position(remembering):
                    self.assertEqual(forgetting.fen(), remembering.fen())  # says where, or the raw state differs
                    self.fail(f"the same FEN, another position: {position(forgetting)} != {position(remembering)}")
                longestKept = max(longestKept, len(forgetting.move_stack))
            self.assertEqual(gameOutcome(forgetting), expected, forgetting.fen())
            endings.add(expected.termination)
        self.assertGreaterEqual(len(endings), 3)
        self.assertLess(longestKept, 150)  # never the whole game: random games run to hundreds of plies

    def test_pawnMoveOrCaptureForgets(self) -> None:
        board = chess.Board()
        for uci in ("g1f3", "g8f6", "e2e4"):
            playForgetting(board, chess.Move.from_uci(uci))
        self.assertEqual(board.move_stack, [])
        shuffle = ["f6g8", "f3g1", "g8f6", "g1f3"] * 2
        for uci in shuffle:
            playForgetting(board, chess.Move.from_uci(uci))
        self.assertEqual(len(board.move_stack), 8)
        self.assertEqual(gameOutcome(board), chess.Outcome(chess.Termination.THREEFOLD_REPETITION, None))


class FakeClient:
    """One connection to the server on a StringTransport."""

    def __init__(self, server: ServerHarness, port: int, host: str = "127.0.0.1") -> None:
        self.harness = server
        self.protocol: GambitServerProtocol = server.factory.buildProtocol(None)
        self.transport = StringTransport(peerAddress=IPv4Address("TCP", host, port))
        self.protocol.makeConnection(self.transport)
        self.writes: list[bytes] = []

    def send(self, **fields: object) -> None:
        self.protocol.dataReceived(json.dumps(fields).encode())

    def received(self) -> list[Message]:
        """Let time pass (paced writes flush), then decode everything written so far."""
        for _ in range(GambitLimits.maxQueued + 2):
            self.harness.clock.advance(0.06)
        data = self.transport.value()
        self.transport.clear()
        return [item for _, item in JsonStreamDecoder().feed(data)]  # type: ignore[misc]


class ServerHarness:
    def __init__(self, validate: bool = True, language: str = "en") -> None:
        self.clock = Clock()
        self.factory = GambitServerFactory(self.clock, validate=validate, language=language)
        self.ports = iter(range(50000, 60000))

    def client(self, host: str = "127.0.0.1") -> FakeClient:
        return FakeClient(self, next(self.ports), host)

    def game(self) -> tuple[FakeClient, FakeClient, str]:
        white, black = self.client(), self.client()
        white.send(cmd=2, user="alice", args="")
        gameId = white.received()[0].args
        black.send(cmd=3, user="bob", args=gameId)
        white.received(), black.received()
        return white, black, gameId


class OriginalClientReads:
    """The original Go client's reader, as seen with it for real: one JSON object per read.

    Everything that arrived by the time the client gets to ``read()`` comes in
    one read, and the client decodes only the first object of it: the rest
    is lost. ``lateBy`` is how long after data arrives the client reads (a
    busy machine makes it later).
    """

    def __init__(self, client: FakeClient, lateBy: float) -> None:
        self.client, self.lateBy = client, lateBy
        self.seen: list[Message] = []
        self.lost: list[Message] = []

    def run(self, seconds: float, step: float = 0.001) -> None:
        clock = self.client.harness.clock
        arrived: float | None = None
        for _ in range(round(seconds / step)):
            clock.advance(step)
            if self.client.transport.value() and arrived is None:
                arrived = clock.seconds()
            if arrived is not None and clock.seconds() - arrived >= self.lateBy - 1e-9:
                data = self.client.transport.value()
                self.client.transport.clear()
                objects = [item for _, item in JsonStreamDecoder().feed(data) if isinstance(item, Message)]
                self.seen.append(objects[0])
                self.lost.extend(objects[1:])
                arrived = None


class OriginalClientPacingTests(SynchronousTestCase):
    """What the pacing buys the original client: the runs of issue 14 as a stand-in.

    A bot White moves the moment Black's JOIN is answered, so Black's OK and
    White's first move are two objects back to back to a client that has not
    answered. With the default 10 ms between them, a client reading within
    5 ms gets both; one 30 ms late (a loaded machine) loses the move and would
    wait forever; ``--spacing 0.05`` saves it (docs/gambit.md, *Pacing*).
    """

    def joinAgainstAFastBot(self, spacing: float, lateBy: float) -> OriginalClientReads:
        harness = ServerHarness()
        harness.factory = GambitServerFactory(harness.clock, spacing=spacing)
        white, black = harness.client(), harness.client()
        white.send(cmd=2, user="bot", args="")
        gameId = white.received()[0].args
        black.send(cmd=3, user="human", args=gameId)
        white.send(cmd=4, user="bot", args=f"{gameId}:e2e4")  # the bot answers the OK at once
        reader = OriginalClientReads(black, lateBy)
        reader.run(0.3)
        return reader

    def test_defaultSpacingAndAPromptReader(self) -> None:
        reader = self.joinAgainstAFastBot(0.01, lateBy=0.005)
        self.assertEqual([m.cmd for m in reader.seen], [Cmd.OK, Cmd.MOVE])
        self.assertEqual(reader.lost, [])

    def test_aLateReaderLosesTheMoveAtTheDefault(self) -> None:
        reader = self.joinAgainstAFastBot(0.01, lateBy=0.03)
        self.assertEqual([m.cmd for m in reader.seen], [Cmd.OK])
        self.assertEqual([m.cmd for m in reader.lost], [Cmd.MOVE])

    def test_widerSpacingSavesTheLateReader(self) -> None:
        reader = self.joinAgainstAFastBot(0.05, lateBy=0.03)
        self.assertEqual([m.cmd for m in reader.seen], [Cmd.OK, Cmd.MOVE])
        self.assertEqual(reader.lost, [])


class ServerTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.server = ServerHarness()

    def test_createAndJoin(self) -> None:
        white, black = self.server.client(), self.server.client()
        white.send(Cmd=2, User="alice", Args="ignored")
        [ok] = white.received()
        self.assertEqual((ok.cmd, ok.user), (Cmd.OK, ""))  # text §1: server messages carry no user
        self.assertRegex(ok.args, r"^[0-9a-f]{4}$")
        black.send(cmd=3, user="bob", args=ok.args.upper())
        self.assertEqual(black.received(), [Message(Cmd.OK, "", "alice")])
        self.assertEqual(white.received(), [Message(Cmd.OK, "", "bob")])

    def test_joinRefusals(self) -> None:
        white, black, gameId = self.server.game()
        third = self.server.client()
        third.send(cmd=3, user="carol", args="zzzz")
        self.assertIn("there is no open game 'zzzz'", third.received()[0].args)
        third.send(cmd=3, user="carol", args=gameId)
        self.assertIn("already has two players", third.received()[0].args)
        other = self.server.client()
        other.send(cmd=2, user="dave", args="")
        otherId = other.received()[0].args
        other.send(cmd=3, user="dave", args=otherId)
        self.assertIn("already in game", other.received()[0].args)
        same = self.server.client()
        same.send(cmd=3, user="dave", args=otherId)
        [error] = same.received()
        self.assertEqual(error.cmd, Cmd.ERROR)
        self.assertIn("same name as your opponent", error.args)
        self.assertEqual(other.received(), [])  # the join did not happen
        nameless = self.server.client()
        nameless.send(cmd=2, user="  ", args="")
        self.assertIn("user name is required", nameless.received()[0].args)

    def test_uniqueIds(self) -> None:
        ids = set()
        for _ in range(300):
            client = self.server.client()
            client.send(cmd=2, user="x", args="")
            ids.add(client.received()[0].args)
        self.assertEqual(len(ids), 300)

    def test_moveRelayedUnchangedWithConnectionName(self) -> None:
        white, black, gameId = self.server.game()
        white.send(Cmd=4, User="mallory", Args=f"{gameId}:e2e4")
        self.assertEqual(black.transport.value(), f'{{"Cmd":4,"User":"","Args":"{gameId}:e2e4"}}\n'.encode())
        self.assertEqual(white.received(), [])  # the server does not answer a move

    def test_turnAndLegality(self) -> None:
        white, black, gameId = self.server.game()
        black.send(cmd=4, user="bob", args="e7e5")
        self.assertEqual(black.received()[0].args, "not your turn: White is to move")
        white.send(cmd=4, user="alice", args="e2e5")
        self.assertIn("move refused: e2e5 is not legal here", white.received()[0].args)
        self.assertEqual(black.received(), [])
        white.send(cmd=4, user="alice", args="Nf3")
        self.assertEqual(black.received(), [Message(Cmd.MOVE, "", "Nf3")])

    def test_fenAndSanAccepted(self) -> None:
        white, black, gameId = self.server.game()
        board = chess.Board()
        board.push_uci("e2e4")
        white.send(cmd=4, user="alice", args=board.fen())
        self.assertEqual(black.received()[0].args, board.fen())
        black.send(cmd=4, user="bob", args="e5")
        self.assertEqual(white.received()[0].args, "e5")

    def test_fullGameToMate(self) -> None:
        white, black, gameId = self.server.game()
        players = [white, black]
        for i, move in enumerate(FOOLS_MATE):
            players[i % 2].send(cmd=4, user="x", args=f"{gameId}:{move}")
        self.assertEqual(white.received()[-1], Message(Cmd.END, "", "Black wins by checkmate (0-1)"))
        self.assertEqual(black.received()[-1], Message(Cmd.END, "", "Black wins by checkmate (0-1)"))
        self.assertNotIn(gameId, self.server.factory.games)
        # The original client then says "I am mated" with END: silently ignored.
        white.send(cmd=5, user="alice", args="")
        self.assertEqual(white.received(), [])

    def test_noTwoWritesInTheSameInstant(self) -> None:
        """The mating MOVE and the END go to White 10 ms apart, never in one write."""
        white, black, gameId = self.server.game()
        for i, move in enumerate(FOOLS_MATE[:3]):
            [white, black][i % 2].send(cmd=4, user="x", args=move)
        white.received(), black.received()
        black.send(cmd=4, user="bob", args="d8h4")
        first = white.transport.value()
        self.assertEqual(first, b'{"Cmd":4,"User":"","Args":"d8h4"}\n')
        self.server.clock.advance(0.009)
        self.assertEqual(white.transport.value(), first)
        self.server.clock.advance(0.002)
        self.assertIn(b'"Cmd":5', white.transport.value())

    def test_lockStepIsNotPaced(self) -> None:
        """A client that answered our last write has read it: its next relay goes out at once."""
        white, black, gameId = self.server.game()
        self.server.clock.advance(1)
        white.received(), black.received()
        for i, move in enumerate(["e2e4", "e7e5", "g1f3", "b8c6"]):
            [white, black][i % 2].send(cmd=4, user="x", args=move)  # no time passes
            opponent = [black, white][i % 2]
            self.assertEqual(opponent.received(), [Message(Cmd.MOVE, "", move)])

    def test_endRelayedToOpponent(self) -> None:
        white, black, gameId = self.server.game()
        black.send(cmd=5, user="bob", args="")
        self.assertEqual(white.received(), [Message(Cmd.END, "", "alice ha ganado la partida")])
        self.assertNotIn(gameId, self.server.factory.games)

    def test_disconnectSendsEnd(self) -> None:
        white, black, gameId = self.server.game()
        white.protocol.connectionLost()
        self.assertEqual(black.received(), [Message(Cmd.END, "", "El jugador alice ha abandonado la partida")])
        self.assertEqual(self.server.factory.games, {})

    def test_creatorLeavesBeforeJoin(self) -> None:
        white = self.server.client()
        white.send(cmd=2, user="alice", args="")
        white.received()
        white.protocol.connectionLost()
        self.assertEqual(self.server.factory.games, {})

    def test_drawExtension(self) -> None:
        white, black, gameId = self.server.game()
        white.send(cmd=6, user="alice", args="")
        self.assertEqual(black.received(), [Message(Cmd.DRAW, "", "alice offers a draw")])
        self.assertEqual(white.received(), [Message(Cmd.OK, "", "draw offered to bob")])  # the server took it
        black.send(cmd=6, user="bob", args="")
        self.assertEqual(white.received(), [Message(Cmd.END, "", "draw by agreement (1/2-1/2)")])

    def test_offerStandsUntilTheOpponentMoves(self) -> None:
        """FIDE 9.1: the offerer's own move keeps its offer; the receiver's move declines it."""
        white, black, gameId = self.server.game()
        white.send(cmd=6, user="alice", args="")
        black.send(cmd=4, user="bob", args="e5")  # not its turn: refused, offer stands
        white.send(cmd=4, user="alice", args="e4")  # the offerer moves: the offer stands
        black.received(), white.received()
        black.send(cmd=6, user="bob", args="")
        self.assertEqual(white.received()[-1], Message(Cmd.END, "", "draw by agreement (1/2-1/2)"))

    def test_movingDeclinesTheOffer(self) -> None:
        white, black, gameId = self.server.game()
        white.send(cmd=4, user="alice", args="e4")
        white.send(cmd=6, user="alice", args="")
        black.send(cmd=4, user="bob", args="e5")  # bob plays on: declined
        white.received(), black.received()
        black.send(cmd=6, user="bob", args="")
        self.assertEqual(white.received()[-1].cmd, Cmd.DRAW)  # a new offer, not an acceptance

    def test_messagesOutsideAGame(self) -> None:
        client = self.server.client()
        for cmd, text in ((4, "MOVE outside a game"), (5, "END outside a game"), (6, "DRAW outside a game")):
            client.send(cmd=cmd, user="x", args="e4")
            self.assertIn(text, client.received()[0].args)
        client.send(cmd=9)
        self.assertIn("unknown cmd 9", client.received()[0].args)

    def test_beforeOpponent(self) -> None:
        white = self.server.client()
        white.send(cmd=2, user="alice", args="")
        white.received()
        white.send(cmd=4, user="alice", args="e4")
        self.assertIn("has no opponent yet", white.received()[0].args)

    def test_badJsonKeepsConnectionOversizeCloses(self) -> None:
        client = self.server.client()
        client.protocol.dataReceived(b"{oops}\n")
        self.assertIn("bad message: invalid JSON", client.received()[0].args)
        self.assertFalse(client.transport.disconnecting)
        client.protocol.dataReceived(b'{"Cmd":4,"Args":"' + b"x" * 5000)
        self.assertIn("over 4096", client.received()[0].args)
        self.assertTrue(client.transport.disconnecting)

    def test_clientThatNeverReadsIsClosed(self) -> None:
        client = self.server.client()
        client.protocol.pauseProducing()  # its socket buffer is full
        for _ in range(GambitLimits.maxQueued + 1):
            client.send(cmd=9)
        self.assertTrue(client.transport.disconnecting)

    def test_twoGamesNoCrossTalk(self) -> None:
        a1, a2, idA = self.server.game()
        b1, b2, idB = self.server.game()
        a1.send(cmd=4, user="alice", args="e4")
        b1.send(cmd=4, user="alice", args="d4")
        self.assertEqual([m.args for m in a2.received()], ["e4"])
        self.assertEqual([m.args for m in b2.received()], ["d4"])
        a2.protocol.connectionLost()
        self.assertEqual(b1.received(), [])
        self.assertEqual(list(self.server.factory.games), [idB])

    def test_noValidation(self) -> None:
        server = ServerHarness(validate=False)
        white, black, gameId = server.game()
        black.send(cmd=4, user="bob", args="anything at all")
        self.assertEqual(white.received(), [Message(Cmd.MOVE, "", "anything at all")])


class ClientAgainstServerTests(SynchronousTestCase):
    """Two velhanet client sessions (bots) against the server, connected with iosim."""

    def test_botsPlayToTheEnd(self) -> None:
        clock = Clock()
        factory = GambitServerFactory(clock)
        pumps: list[iosim.IOPump] = []
        finished: dict[str, int] = {}
        sessions: dict[str, ClientSession] = {}

        def finishOnce(user: str, code: int) -> None:
            finished.setdefault(user, code)

        def connect(user: str, gameId: str | None, seed: int) -> ClientSession:
            holder: list[GambitClientProtocol] = []
            session = ClientSession(
                user,
                gameId,
                send=lambda m: holder[0].send(m),
                say=lambda t: None,
                finish=lambda code: finishOnce(user, code),
                clock=clock,
                bot=random.Random(seed),
                botDelay=0.01,
            )
            client = GambitClientProtocol(session)
            holder.append(client)
            server = factory.buildProtocol(None)
            pumps.append(
                iosim.connect(server, iosim.makeFakeServer(server), client, iosim.makeFakeClient(client), clock=clock)
            )
            sessions[user] = session
            return session

        def run(seconds: float) -> None:
            for _ in range(int(seconds / 0.01)):
                clock.advance(0.01)
                for pump in pumps:
                    pump.pump()

        alice = connect("alice", None, 1)
        run(0.2)
        self.assertEqual(alice.phase, "waiting")
        connect("bob", alice.gameId, 2)
        run(600)
        self.assertEqual(finished, {"alice": 0, "bob": 0})
        self.assertEqual(factory.games, {})
        self.assertTrue(alice.board.is_game_over(claim_draw=True))
        self.assertEqual(alice.board.fen(), sessions["bob"].board.fen())

    def test_botIsNotRandom(self) -> None:
        board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")  # back-rank mate in one
        self.assertEqual(chooseBotMove(board, random.Random(0)), chess.Move.from_uci("a1a8"))
        board = chess.Board("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1")  # free queen
        self.assertEqual(chooseBotMove(board, random.Random(0)), chess.Move.from_uci("e4d5"))

    def test_joinErrorEndsClient(self) -> None:
        codes: list[int] = []
        lines: list[str] = []
        session = ClientSession(
            "bob", "zzzz", send=lambda m: None, say=lines.append, finish=codes.append, clock=Clock()
        )
        clock = session.clock
        session.connected()
        session.received(Message(Cmd.ERROR, "", "there is no open game 'zzzz'"))
        self.assertEqual(codes, [])  # an OK may still follow (the original server's same-name join)
        clock.advance(1)  # type: ignore[attr-defined]
        self.assertEqual(codes, [1])
        self.assertIn("The server refused: there is no open game 'zzzz'", lines)

    def test_joinTimeoutAgainstOriginalServer(self) -> None:
        clock = Clock()
        codes: list[int] = []
        session = ClientSession(
            "bob", "zzzz", send=lambda m: None, say=lambda t: None, finish=codes.append, clock=clock
        )
        session.connected()
        clock.advance(10)
        self.assertEqual(codes, [1])

    def test_movesGoOutAsIdColonUci(self) -> None:
        sent: list[Message] = []
        session = ClientSession(
            "alice", None, send=sent.append, say=lambda t: None, finish=lambda c: None, clock=Clock()
        )
        session.connected()
        session.received(Message(Cmd.OK, "alice", "e215"))
        session.received(Message(Cmd.OK, "bob", "bob"))
        session.command("Nf3")
        self.assertEqual(sent[-1], Message(Cmd.MOVE, "alice", "e215:g1f3"))
        session.command("e5")
        self.assertEqual(len(sent), 2)  # not our turn: nothing sent
        session.received(Message(Cmd.MOVE, "bob", "e215:e7e5"))
        self.assertEqual(session.board.peek(), chess.Move.from_uci("e7e5"))


class SpanishTests(SynchronousTestCase):
    """``--language es`` (the default): the original server's words, and velhanet's own in Spanish."""

    def test_defaultIsSpanish(self) -> None:
        self.assertEqual(GambitServerFactory(Clock()).texts.language, "es")

    def test_textsInSpanish(self) -> None:
        server = ServerHarness(language="es")
        white, black, gameId = server.game()
        same = server.client()
        other = server.client()
        other.send(cmd=2, user="dave", args="")
        otherId = other.received()[0].args
        same.send(cmd=3, user="dave", args=otherId)
        self.assertEqual(same.received()[0].args, "No se puede usar el mismo nombre que el oponente")
        black.send(cmd=4, user="bob", args="e5")
        self.assertEqual(black.received()[0].args, "No es tu turno: mueven las blancas")
        white.send(cmd=4, user="alice", args="e7e5")
        self.assertEqual(
            white.received()[0].args, "Movimiento rechazado: e7e5 no es legal aquí: la pieza de e7 no es de las blancas"
        )
        for i, move in enumerate(FOOLS_MATE):
            [white, black][i % 2].send(cmd=4, user="x", args=move)
        self.assertEqual(black.received()[-1], Message(Cmd.END, "", "Ganan las negras por jaque mate (0-1)"))


class Table:
    """Client sessions on one server (velhanet's or the original stand-in), connected with iosim."""

    def __init__(self, factory: object, clock: Clock) -> None:
        self.factory, self.clock = factory, clock
        self.pumps: list[iosim.IOPump] = []
        self.finished: dict[str, int] = {}
        self.screens: dict[str, list[str]] = {}
        self.clients: dict[str, GambitClientProtocol] = {}

    def connect(self, user: str, gameId: str | None, bot: int | None = None, options: str = "") -> ClientSession:
        holder: list[GambitClientProtocol] = []
        screen = self.screens.setdefault(user, [])

        def finish(code: int) -> None:
            self.finished.setdefault(user, code)

        session = ClientSession(
            user,
            gameId,
            send=lambda m: holder[0].send(m),
            say=screen.append,
            finish=finish,
            clock=self.clock,
            bot=random.Random(bot) if bot is not None else None,
            botDelay=0.01,
            serverOptions=options,
        )
        client = GambitClientProtocol(session)
        holder.append(client)
        self.clients[user] = client
        server = self.factory.buildProtocol(None)  # type: ignore[attr-defined]
        self.pumps.append(
            iosim.connect(server, iosim.makeFakeServer(server), client, iosim.makeFakeClient(client), clock=self.clock)
        )
        self.run(0.05)
        return session

    def run(self, seconds: float) -> None:
        for _ in range(int(seconds / 0.01)):
            self.clock.advance(0.01)
            for pump in self.pumps:
                pump.pump()

    def said(self, user: str) -> str:
        return "\n".join(self.screens[user])


class ClientOnOriginalServerTests(SynchronousTestCase):
    """velhanet's client finishes every game on (a stand-in of) the original Go server."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.server = OriginalServerFactory()
        self.table = Table(self.server, self.clock)

    def game(self) -> tuple[ClientSession, ClientSession]:
        alice = self.table.connect("alice", None)
        bob = self.table.connect("bob", alice.gameId)
        return alice, bob

    def play(self, alice: ClientSession, bob: ClientSession, moves: list[str]) -> None:
        for i, move in enumerate(moves):
            (alice, bob)[i % 2].command(move)
            self.table.run(0.05)

    def test_sameNameJoinPlaysOn(self) -> None:
        alice = self.table.connect("sam", None)
        again = self.table.connect("sam", alice.gameId)  # ERROR, then OK in the same write
        self.table.run(2)
        self.assertEqual(again.phase, "playing")
        said = self.table.said("sam")
        self.assertIn("No se puede usar el mismo nombre que el oponente (and it joined us anyway", said)
        self.assertNotIn("The server refused", said)
        self.assertNotIn("sam", self.table.finished)
        # The original routes a MOVE by its User name: White's moves go out without one, so both reach.
        self.play(alice, again, ["e4", "e5", "Nf3"])
        self.assertEqual(again.board.fen(), alice.board.fen())
        self.assertEqual(len(again.board.move_stack), 3)

    def test_finalLineNamesTheCheckmate(self) -> None:
        """The mated side's last line is the checkmate, even when the winner's quick exit adds 'abandonado'."""
        alice, bob = self.game()
        self.play(alice, bob, FOOLS_MATE)
        transport = self.table.clients["bob"].transport
        assert transport is not None
        transport.loseConnection()  # the winner leaves at once
        self.table.run(3)
        lines = self.table.screens["alice"]
        self.assertTrue(lines[-1].startswith("GAME OVER: checkmate, you lost"), lines[-3:])
        # The scoresheet goes by the board, not by the original's "abandonado" (seen with the Go server too).
        self.assertEqual(lines[-2], "The game: 1. f3 e5 2. g4 Qh4# 0-1")

    def test_matedSideFinishes(self) -> None:
        alice, bob = self.game()
        self.play(alice, bob, FOOLS_MATE)
        self.table.run(3)
        self.assertEqual(self.table.finished, {"alice": 0, "bob": 0})
        self.assertIn("Checkmate: you lost.", self.table.said("alice"))
        self.assertIn(
            "GAME OVER: Black wins by checkmate (the server says: bob ha ganado la partida)", self.table.said("bob")
        )
        self.assertNotIn("abandonado", self.table.said("alice"))

    def test_drawEndsWithoutTheServer(self) -> None:
        alice, bob = self.game()
        self.play(alice, bob, ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"])
        self.assertEqual(self.table.finished, {})  # waiting for an END the original never sends
        self.table.run(3)
        self.assertEqual(self.table.finished, {"alice": 0, "bob": 0})
        for user in ("alice", "bob"):
            self.assertIn("draw by threefold repetition", self.table.said(user))
            self.assertIn(
                "GAME OVER: draw by threefold repetition (the server sent no END; the original Gambit server does not)",
                self.table.said(user),
            )

    def test_whoJoinedWhom(self) -> None:
        alice, bob = self.game()
        self.assertIn(f"bob joined your game {alice.gameId}. You play White.", self.table.said("alice"))
        self.assertIn(f"You joined alice's game {alice.gameId}. You play Black.", self.table.said("bob"))

    def test_drawOfferNotConfirmed(self) -> None:
        alice, bob = self.game()
        alice.command("draw")
        self.table.run(3)
        self.assertIn("the original Gambit server ignores draw offers", self.table.said("alice"))

    def test_scriptedInputWaitsForItsTurn(self) -> None:
        """Lines from a pipe arrive before the game starts; each is played at our turn, then we leave."""
        bob = self.table.connect("bob", None)
        bob.scriptedLine("e4")
        bob.scriptedLine("Nf3")
        bob.scriptEnded()
        alice = self.table.connect("alice", bob.gameId)
        self.table.run(0.2)
        self.assertIn("You played 1. e4", self.table.said("bob"))
        alice.command("e5")
        self.table.run(0.2)
        self.assertIn("You played 2. Nf3", self.table.said("bob"))
        alice.command("Nc6")
        self.table.run(0.2)
        self.assertIn("Standard input has ended and it is your move: leaving the game.", self.table.said("bob"))
        self.assertEqual(self.table.finished.get("bob"), 0)

    def test_joinHintNamesTheServer(self) -> None:
        self.table.connect("alice", None, options=" --port 4000")
        self.assertIn("gambit-client --user NAME --game e215 --port 4000", self.table.said("alice"))


class ClientDrawOfferTests(SynchronousTestCase):
    """Draw offers between two velhanet clients on velhanet's server, each side told what happened."""

    def test_offerConfirmedAndDeclinedByMoving(self) -> None:
        clock = Clock()
        table = Table(GambitServerFactory(clock, language="en"), clock)
        alice = table.connect("alice", None)
        bob = table.connect("bob", alice.gameId)
        alice.command("e4")
        table.run(0.1)
        alice.command("draw")
        table.run(3)
        self.assertIn("Server: draw offered to bob.", table.said("alice"))
        self.assertNotIn("did not confirm", table.said("alice"))
        self.assertIn("alice offers a draw: type 'draw' to accept, or move to decline.", table.said("bob"))
        bob.command("e5")
        table.run(0.1)
        self.assertIn("You played on: alice's draw offer is declined.", table.said("bob"))
        self.assertIn("bob played on: your draw offer is declined.", table.said("alice"))


class RecordingPlayer:
    """A connection as the room and the lobby see it, recording every call (no transport at all)."""

    def __init__(self, name: str = "", host: str = "198.18.0.1") -> None:
        self.name, self.host = name, host
        self.game: Game | None = None
        self.lastGameId: str | None = None
        self.failedJoins = 0
        self.calls: list[tuple[object, ...]] = []

    def send(self, message: Message) -> None:
        self.calls.append(("send", message))

    def relay(self, message: Message, sender: Participant) -> None:
        self.calls.append(("relay", message, sender))

    def disconnect(self, why: str, tell: str) -> None:
        self.calls.append(("disconnect", why, tell))

    def leaveRoom(self) -> None:
        self.calls.append(("leaveRoom",))
        if self.game is not None:
            self.lastGameId = self.game.core.gameId
        self.game = None

    def seat(self, game: Game, name: str) -> None:
        self.calls.append(("seat", game.core.gameId, name))
        self.game, self.name = game, name

    def taken(self) -> list[tuple[object, ...]]:
        calls, self.calls = self.calls, []
        return calls

    def told(self) -> str:
        """The text of the one message, an ERROR, sent since the last look."""
        [(kind, message)] = self.taken()
        assert kind == "send" and isinstance(message, Message) and message.cmd == Cmd.ERROR, message
        return message.args


class RoomMachineTests(SynchronousTestCase):
    """The room machine alone: recording players, every input in every state, every way out."""

    def room(self, validate: bool = True) -> tuple[Room, RoomCore, RecordingPlayer, RecordingPlayer, list[str]]:
        removed: list[str] = []
        white, black = RecordingPlayer("alice"), RecordingPlayer("bob")
        core = RoomCore("e215", white, validate, removed.append, Texts("en"))
        return RoomMachine(core), core, white, black, removed

    def playing(self, validate: bool = True) -> tuple[Room, RoomCore, RecordingPlayer, RecordingPlayer, list[str]]:
        room, core, white, black, removed = self.room(validate)
        room.join(black)
        white.taken(), black.taken()
        return room, core, white, black, removed

    def assertOver(self, room: Room, core: RoomCore, removed: list[str], *players: RecordingPlayer) -> None:
        """Over: removed from the lobby once, every player left, and every input is ignored."""
        self.assertEqual(removed, ["e215"])
        for player in players:
            self.assertEqual(player.taken()[-1], ("leaveRoom",))
        for inputs in (lambda p: room.move(p, "e2e4"), lambda p: room.end(p, ""), lambda p: room.draw(p, "")):
            inputs(core.white)
        room.join(RecordingPlayer("late"))
        room.leave(core.white)
        self.assertEqual([player.taken() for player in players], [[] for _ in players])
        self.assertEqual(removed, ["e215"])

    def test_waitingJoinStartsTheGame(self) -> None:
        room, core, white, black, removed = self.room()
        room.join(black)
        self.assertEqual(black.taken(), [("send", Message(Cmd.OK, "", "alice"))])
        self.assertEqual(white.taken(), [("send", Message(Cmd.OK, "", "bob"))])
        self.assertIs(core.black, black)

    def test_waitingRefusesGameCommands(self) -> None:
        room, core, white, black, removed = self.room()
        for inputs in (room.move, room.end, room.draw):
            inputs(white, "e4")
            self.assertIn("has no opponent yet", white.told())
        room._finish("nobody", Score("*"))  # a decision before the game started is not one
        self.assertEqual((white.taken(), removed), ([], []))
        room.join(black)  # still waiting: the game can start
        self.assertIs(core.black, black)

    def test_waitingCreatorLeaves(self) -> None:
        room, core, white, black, removed = self.room()
        room.leave(white)
        self.assertEqual(removed, ["e215"])
        room.join(black)
        self.assertEqual((black.taken(), core.black), ([], None))

    def test_playingMovesAreJudgedThenRelayed(self) -> None:
        room, core, white, black, removed = self.playing()
        room.move(black, "e7e5")
        self.assertEqual(black.taken(), [("send", Message(Cmd.ERROR, "", "not your turn: White is to move"))])
        room.move(white, "e2e5")
        self.assertIn("e2e5 is not legal here", white.told())
        room.move(white, "e215:e2e4")
        self.assertEqual(black.taken(), [("relay", Message(Cmd.MOVE, "", "e215:e2e4"), white)])
        self.assertEqual(core.board.turn, chess.BLACK)
        self.assertEqual(removed, [])

    def test_playingMateEndsTheGame(self) -> None:
        room, core, white, black, removed = self.playing()
        for i, move in enumerate(FOOLS_MATE):
            room.move([white, black][i % 2], move)
        end = ("send", Message(Cmd.END, "", "Black wins by checkmate (0-1)"))
        self.assertEqual(white.calls[-2:], [end, ("leaveRoom",)])
        self.assertEqual(black.calls[-2:], [end, ("leaveRoom",)])
        self.assertOver(room, core, removed, white, black)

    def test_withoutValidationAnythingIsRelayed(self) -> None:
        room, core, white, black, removed = self.playing(validate=False)
        room.move(black, "anything")
        self.assertEqual(white.taken(), [("relay", Message(Cmd.MOVE, "", "anything"), black)])
        self.assertEqual(black.taken(), [])

    def test_playingEndAbandons(self) -> None:
        room, core, white, black, removed = self.playing()
        room.end(black, "")
        self.assertEqual(white.calls[0], ("send", Message(Cmd.END, "", "alice ha ganado la partida")))
        self.assertEqual(black.calls, [("leaveRoom",)])
        self.assertOver(room, core, removed, white, black)

    def test_playingLeave(self) -> None:
        room, core, white, black, removed = self.playing()
        room.leave(white)
        self.assertEqual(black.calls[0], ("send", Message(Cmd.END, "", "El jugador alice ha abandonado la partida")))
        self.assertOver(room, core, removed, white, black)

    def test_playingDrawOfferStandsThenIsAccepted(self) -> None:
        room, core, white, black, removed = self.playing()
        room.draw(white, "")
        self.assertEqual(black.taken(), [("relay", Message(Cmd.DRAW, "", "alice offers a draw"), white)])
        self.assertEqual(white.taken(), [("send", Message(Cmd.OK, "", "draw offered to bob"))])
        room.draw(white, "")
        self.assertIn("still stands", white.told())
        room.move(white, "e4")  # the offerer's own move keeps the offer
        black.taken()
        room.draw(black, "")
        agreed = ("send", Message(Cmd.END, "", "draw by agreement (1/2-1/2)"))
        self.assertEqual(white.calls[:1], [agreed])
        self.assertOver(room, core, removed, white, black)

    def test_playingMoveDeclinesTheOffer(self) -> None:
        room, core, white, black, removed = self.playing()
        room.move(white, "e4")
        room.draw(white, "")
        room.move(black, "e5")
        self.assertIsNone(core.drawOfferBy)
        white.taken()
        room.draw(black, "")
        self.assertEqual(white.taken(), [("relay", Message(Cmd.DRAW, "", "bob offers a draw"), black)])
        self.assertEqual(removed, [])


class LobbyTests(SynchronousTestCase):
    """The lobby's rules alone: recording members, a clock for the per-address limit."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.lobby = Lobby(Texts("en"), True, AddressBuckets(3, 60.0, self.clock), failedJoinsPerConnection=2)

    def created(self, name: str = "alice") -> tuple[RecordingPlayer, str]:
        white = RecordingPlayer()
        self.lobby.create(white, name)
        [seat, (_, ok)] = white.taken()
        assert isinstance(ok, Message)
        self.assertEqual(seat, ("seat", ok.args, name.strip()))
        return white, ok.args

    def test_createSeatsAndAnswersTheId(self) -> None:
        white, gameId = self.created(" alice ")
        self.assertRegex(gameId, "^[0-9a-f]{4}$")
        self.assertEqual(white.name, "alice")
        self.assertIs(self.lobby.games[gameId], white.game)

    def test_createRefusals(self) -> None:
        white, gameId = self.created()
        self.lobby.create(white, "alice")
        self.assertEqual(white.taken(), [("send", Message(Cmd.ERROR, "", f"you are already in game {gameId}"))])
        for name, fragment in (("  ", "is required"), ("x" * 65, "longer than 64")):
            member = RecordingPlayer()
            self.lobby.create(member, name)
            self.assertIn(fragment, member.told())
        self.assertEqual(list(self.lobby.games), [gameId])

    def test_joinStartsTheRoom(self) -> None:
        white, gameId = self.created()
        black = RecordingPlayer()
        self.lobby.join(black, "bob", gameId.upper())
        self.assertEqual(black.taken(), [("seat", gameId, "bob"), ("send", Message(Cmd.OK, "", "alice"))])
        self.assertEqual(white.taken(), [("send", Message(Cmd.OK, "", "bob"))])

    def test_joinRefusals(self) -> None:
        white, gameId = self.created()
        same = RecordingPlayer()
        self.lobby.join(same, "alice", gameId)
        self.assertIn("same name", same.told())
        self.assertIsNone(same.game)
        black = RecordingPlayer()
        self.lobby.join(black, "bob", gameId)
        third = RecordingPlayer(host="198.18.0.3")
        self.lobby.join(third, "carol", gameId)
        self.assertIn("already has two players", third.told())
        self.assertEqual(third.failedJoins, 1)

    def test_failedJoinsCloseTheConnectionAndSlowTheAddress(self) -> None:
        scanner = RecordingPlayer()
        for gameId in ("0000", "0001"):
            self.lobby.join(scanner, "eve", gameId)
        self.lobby.join(scanner, "eve", "0002")
        self.assertEqual(
            scanner.taken()[-1],
            ("disconnect", "3 failed JOINs", "3 JOINs to games that are not open: closing the connection"),
        )
        again = RecordingPlayer()  # the same address, a new connection: it must wait
        self.lobby.join(again, "eve", "0003")
        self.assertIn("wait", again.told())
        self.clock.advance(60)
        self.lobby.join(again, "eve", "0003")
        self.assertIn("no open game", again.told())

    def test_commandsOutsideAGame(self) -> None:
        member = RecordingPlayer()
        self.lobby.outsideGame(member, Cmd.MOVE)
        self.assertEqual(
            member.taken(), [("send", Message(Cmd.ERROR, "", "MOVE outside a game: send CREATE or JOIN first"))]
        )
        member.lastGameId = "e215"
        self.lobby.outsideGame(member, Cmd.END)  # the original client's END after a mate
        self.assertEqual(member.taken(), [])

    def test_gameRemovedWhenItsRoomCloses(self) -> None:
        white, gameId = self.created()
        assert white.game is not None
        white.game.machine.leave(white)
        self.assertEqual(self.lobby.games, {})
