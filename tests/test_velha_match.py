"""The best-of-5 match machine: series shapes, MSG10, connection loss, rule breaks,
and a reference-style peer over a real MatchProtocol."""

from __future__ import annotations

import random

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransportWithDisconnection
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from velhanet.velha import wire
from velhanet.velha.lobby import CLOSE_DELAY, Lobby, MatchProtocol
from velhanet.velha.match import START_GRACE, MatchCore, MatchMachine, MatchSettings

from .velha_harness import Recorder

STARTER_WINS = [1, 4, 2, 5, 3]
STARTER_LOSES = [1, 4, 2, 5, 9, 6]
DRAW = [1, 2, 3, 5, 4, 6, 8, 7, 9]


class Side:
    """One end of a match: machine, recorder, and what it sent."""

    def __init__(self, pair: MatchPair, isInvitee: bool, name: str) -> None:
        self.pair, self.name = pair, name
        self.recorder = Recorder()
        self.sent: list[wire.StreamMessage] = []
        self.closed = False
        self.core = MatchCore(
            isInvitee=isInvitee,
            send=self.send,
            close=self.close,
            observer=self.recorder,  # type: ignore[arg-type]
            peerNick="peer",
            clock=pair.clock,
            settings=MatchSettings(first="random"),
            random=random.Random(pair.seed),
        )
        self.machine = MatchMachine(self.core)

    def send(self, message: wire.StreamMessage) -> None:
        self.sent.append(message)
        self.pair.queue.append((self, message))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.pair.queue.append((self, None))


class MatchPair:
    """Inviter and invitee machines wired back to back, with explicit delivery."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.clock = Clock()
        self.queue: list[tuple[Side, wire.StreamMessage | None]] = []
        self.inviter = Side(self, isInvitee=False, name="inviter")
        self.invitee = Side(self, isInvitee=True, name="invitee")

    def other(self, side: Side) -> Side:
        return self.invitee if side is self.inviter else self.inviter

    def deliver(self) -> None:
        while self.queue:
            sender, message = self.queue.pop(0)
            receiver = self.other(sender).machine
            if message is None:
                receiver.connectionLost("closed by peer")
            elif isinstance(message, wire.MatchStart):
                receiver.startReceived(message.who)
            elif isinstance(message, wire.Move):
                receiver.remoteMove(message.position)
            elif isinstance(message, wire.NewGame):
                receiver.remoteNewGame()
            else:
                receiver.remoteGiveUp()

    def starter(self) -> Side:
        """Whoever was last told it starts a game (or is to start the next one)."""
        for side in (self.inviter, self.invitee):
            events = side.recorder.events
            lastGame = max((i for i, e in enumerate(events) if e[0] == "game"), default=-1)
            lastNotice = max(
                (i for i, e in enumerate(events) if e[0] == "notice" and "you start" in str(e[1])), default=-1
            )
            lastOver = max((i for i, e in enumerate(events) if e[0] == "gameOver"), default=-1)
            if lastNotice > lastOver or (lastGame > lastOver and events[lastGame][2]):
                return side
        raise AssertionError("nobody starts")

    def playGame(self, script: list[int]) -> None:
        mover = self.starter()
        for index, position in enumerate(script):
            mover.machine.localMove(position)
            if index == 0:
                self.clock.advance(START_GRACE)  # a first move after game 1 is held this long
            self.deliver()
            mover = self.other(mover)

    def begin(self) -> None:
        self.inviter.machine.awaitStart()
        self.invitee.machine.begin()
        self.deliver()


class SeriesTests(SynchronousTestCase):
    def play(self, scripts: list[list[int]]) -> MatchPair:
        pair = MatchPair()
        pair.begin()
        for script in scripts:
            pair.playGame(script)
        return pair

    def final(self, side: Side) -> tuple[object, ...]:
        return side.recorder.events[-1]

    def test_threeNil(self) -> None:
        """Starter wins, then the loser starts and loses each time: 3-0 after three games."""
        pair = MatchPair()
        pair.begin()
        first = pair.starter()
        pair.playGame(STARTER_WINS)
        pair.playGame(STARTER_LOSES)
        pair.playGame(STARTER_LOSES)
        self.assertEqual(self.final(first), ("seriesOver", "won", (3, 0)))
        self.assertEqual(self.final(pair.other(first)), ("seriesOver", "lost", (0, 3)))
        self.assertTrue(pair.inviter.closed or pair.invitee.closed)
        # The loser sent MSG09 each time, and nobody else.
        self.assertEqual(pair.other(first).sent.count(wire.NewGame()), 2)
        self.assertEqual(first.sent.count(wire.NewGame()), 0)

    def test_threeTwo(self) -> None:
        pair = MatchPair()
        pair.begin()
        first = pair.starter()
        # first wins, loses, wins, loses, wins -> 3-2 after five games
        for script in (STARTER_WINS, STARTER_WINS, STARTER_LOSES, STARTER_WINS, STARTER_LOSES):
            pair.playGame(script)
        self.assertEqual(self.final(first), ("seriesOver", "won", (3, 2)))
        self.assertEqual(self.final(pair.other(first)), ("seriesOver", "lost", (2, 3)))

    def test_drawsAlternateTheStarter(self) -> None:
        pair = self.play([DRAW] * 5)
        self.assertEqual(self.final(pair.inviter), ("seriesOver", "draw", (0, 0)))
        starts = [e[2] for e in pair.inviter.recorder.events if e[0] == "game"]
        self.assertEqual(starts, [starts[0], not starts[0], starts[0], not starts[0], starts[0]])

    def test_fiveGamesMoreWins(self) -> None:
        pair = MatchPair()
        pair.begin()
        first = pair.starter()
        for script in (STARTER_WINS, DRAW, DRAW, STARTER_LOSES, DRAW):
            pair.playGame(script)
        results = [e for e in first.recorder.events if e[0] == "gameOver"]
        self.assertEqual(len(results), 5)
        self.assertEqual(self.final(first)[0], "seriesOver")
        self.assertEqual(sum(self.final(first)[2]), 2)  # type: ignore[arg-type]
        self.assertNotEqual(self.final(first)[1], "draw")

    def test_fiveGamesEven(self) -> None:
        pair = MatchPair()
        pair.begin()
        first = pair.starter()
        for script in (STARTER_WINS, STARTER_WINS, STARTER_WINS, STARTER_WINS, DRAW):
            pair.playGame(script)
        self.assertEqual(self.final(first), ("seriesOver", "draw", (2, 2)))

    def test_msg07(self) -> None:
        pair = MatchPair()
        pair.begin()
        self.assertEqual(len(pair.invitee.sent), 1)
        start = pair.invitee.sent[0]
        assert isinstance(start, wire.MatchStart)
        inviteeStarts = start.who == wire.MatchStart.INVITEE_STARTS
        self.assertEqual(pair.starter() is pair.invitee, inviteeStarts)

    def test_giveUpBothWays(self) -> None:
        for quitter in ("inviter", "invitee"):
            pair = MatchPair()
            pair.begin()
            side = getattr(pair, quitter)
            side.machine.localQuit()
            pair.deliver()
            self.assertEqual(side.sent[-1], wire.GiveUp())
            self.assertTrue(side.closed)
            self.assertIn("gave up (MSG10): you win", str(self.final(pair.other(side))))

    def test_connectionLost(self) -> None:
        pair = MatchPair()
        pair.begin()
        pair.inviter.machine.connectionLost("reset by peer")
        self.assertEqual(self.final(pair.inviter), ("ended", "the connection to peer was lost: reset by peer"))
        pair.inviter.machine.remoteMove(5)  # nothing happens after the end
        self.assertEqual(self.final(pair.inviter)[0], "ended")


class RuleBreakTests(SynchronousTestCase):
    def started(self, seed: int = 0) -> tuple[MatchPair, Side, Side]:
        pair = MatchPair(seed)
        pair.begin()
        mover = pair.starter()
        return pair, mover, pair.other(mover)

    def assertBroken(self, side: Side, fragment: str) -> None:
        event = side.recorder.events[-1]
        self.assertEqual(event[0], "ended")
        self.assertIn(fragment, str(event[1]))
        self.assertTrue(side.closed)

    def test_outOfTurn(self) -> None:
        pair, mover, waiter = self.started()
        mover.machine.localMove(1)
        pair.deliver()
        waiter.machine.localMove(5)
        pair.deliver()
        mover.machine.remoteMove(7)  # the waiter "moves" again, out of turn
        self.assertBroken(mover, "arrived out of turn (text MSG08")

    def test_occupiedCell(self) -> None:
        pair, mover, _waiter = self.started()
        mover.machine.localMove(1)
        pair.deliver()
        mover.machine.remoteMove(1)
        self.assertBroken(mover, "position 1 is already taken")

    def test_positionZeroAndTen(self) -> None:
        for position in (0, 10):
            pair, mover, _waiter = self.started()
            mover.machine.localMove(5)
            pair.deliver()
            mover.machine.remoteMove(position)
            self.assertBroken(mover, f"position {position} is not on the board (text MSG08: positions 1 to 9)")

    def test_localIllegalMoveIsRefusedNotSent(self) -> None:
        """Whichever side starts, an occupied cell typed locally is refused, nothing sent, still our turn."""
        waiters = set()
        for seed in range(8):
            pair, mover, waiter = self.started(seed)
            waiters.add(waiter.name)
            mover.machine.localMove(1)
            pair.deliver()
            before = list(waiter.sent)
            waiter.machine.localMove(1)
            self.assertIn("position 1 is already taken", str(waiter.recorder.events[-2]))
            self.assertEqual(waiter.recorder.events[-1], ("turn",))
            self.assertEqual(waiter.sent, before)
            waiter.machine.localMove(5)
            self.assertEqual(waiter.sent, [*before, wire.Move(5)])
        self.assertEqual(waiters, {"inviter", "invitee"})  # both branches ran

    def test_msg08BeforeMsg07(self) -> None:
        pair = MatchPair()
        pair.inviter.machine.awaitStart()
        pair.inviter.machine.remoteMove(5)
        self.assertBroken(pair.inviter, "MSG08 arrived before MSG07")
        self.assertEqual(pair.clock.getDelayedCalls(), [])

    def test_secondMsg07AfterAMove(self) -> None:
        pair, mover, _waiter = self.started()
        mover.machine.localMove(5)
        pair.deliver()
        pair.inviter.machine.startReceived(1)
        self.assertBroken(pair.inviter, "a second MSG07 arrived after the game had begun")


class ReferencePeerTests(SynchronousTestCase):
    """A MatchProtocol on a StringTransport, facing a peer that behaves like the
    reference program: every message ends with \\n, and the winner sends MSG09."""

    def setUp(self) -> None:
        self.recorder = Recorder()
        self.lobby = Lobby(
            "velha",
            clock=Clock(),
            sendDatagram=lambda raw, addr: None,
            network=None,  # type: ignore[arg-type]
            frontEnd=self.recorder,  # type: ignore[arg-type]
            rng=random.Random(1),
        )
        self.protocol = MatchProtocol(self.lobby, "javaP", isInvitee=False)
        self.transport = StringTransportWithDisconnection()
        self.transport.protocol = self.protocol
        self.protocol.makeConnection(self.transport)

    def peer(self, data: bytes) -> None:
        self.protocol.dataReceived(data)

    def written(self) -> bytes:
        value = self.transport.value()
        self.transport.clear()
        return value

    def test_winnerAlsoSendsMsg09(self) -> None:
        # The reference invitee says it starts (1) and wins game 1.
        self.peer(b"070061\n")
        for mine, theirs in ((4, 1), (5, 2)):
            self.peer(b"08006%d\n" % theirs)
            self.lobby.play(mine)
        self.peer(b"080063\n")
        self.assertIn(("gameOver", "lost", (0, 1)), self.recorder.events)
        # Text: we (the loser) start game 2, and say so at once with MSG09.
        self.assertEqual(self.written(), b"080064\n080065\n09005\n")
        # The reference winner sends MSG09 too and moves before we do:
        # velhanet follows it and the game goes on.
        self.peer(b"09005\n080065\n")
        notices = [e for e in self.recorder.events if e[0] == "notice"]
        self.assertTrue(any("sent MSG09 for the start of game 2 although it was ours" in str(n[1]) for n in notices))
        self.assertIn(("moved", 5, False), self.recorder.events)
        self.lobby.play(1)
        self.assertEqual(self.written(), b"080061\n")
        self.assertTrue(self.transport.connected)

    def test_framesWithoutNewlineAndSplit(self) -> None:
        self.peer(b"0700")
        self.peer(b"62")
        self.assertIn(("game", 1, True), self.recorder.events)
        self.lobby.play(5)
        self.peer(b"08")
        self.peer(b"0061")
        self.assertIn(("moved", 1, False), self.recorder.events)

    def test_malformedFrameIsReportedAndDropped(self) -> None:
        self.peer(b"070062\n")
        self.lobby.play(5)
        self.peer(b"08x065\n080061\n")
        self.assertTrue(any(e[0] == "notice" and "malformed" in str(e[1]) for e in self.recorder.events))
        self.assertIn(("moved", 1, False), self.recorder.events)
        self.assertTrue(self.transport.connected)

    def test_seriesEndClosesConnection(self) -> None:
        """3-0: we start game 1; the loser (the peer) sends MSG09 and starts games 2 and 3."""
        self.peer(b"070062\n")  # the inviter (we) starts
        for mine, theirs in ((1, 4), (2, 5)):
            self.lobby.play(mine)
            self.peer(b"08006%d\n" % theirs)
        self.lobby.play(3)
        for _ in range(2):
            self.peer(b"09005\n")
            for theirs, mine in ((4, 1), (5, 2), (9, 3)):
                self.peer(b"08006%d\n" % theirs)
                self.lobby.play(mine)
        self.assertEqual(self.recorder.events[-1], ("seriesOver", "won", (3, 0)))
        self.assertTrue(self.transport.connected)  # the last move first has a moment to be read
        self.lobby.clock.advance(CLOSE_DELAY)  # type: ignore[attr-defined]
        self.assertFalse(self.transport.connected)
        self.assertNotIn(b"09005", self.written())  # the winner never sent MSG09

    def test_connectionLostEndsMatch(self) -> None:
        self.peer(b"070062\n")
        self.protocol.connectionLost(Failure(ConnectionResetError("reset")))
        self.assertEqual(self.recorder.events[-1][0], "ended")
        self.assertIsNone(self.lobby.matchProtocol)
