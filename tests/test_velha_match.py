"""The best-of-5 match machine: series shapes, MSG10, connection loss, rule breaks,
and a reference-style peer over a real MatchProtocol."""

from __future__ import annotations

import random

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransportWithDisconnection
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase

from tests.velha_harness import matchProtocolFor
from velhanet.velha import wire
from velhanet.velha.peer import Peer
from velhanet.velha.protocol import CLOSE_DELAY
from velhanet.velha.room import START_GRACE, Match, MatchSettings, deliver
from velhanet.velha.tolerance import UNANSWERED_WARNING

from .velha_harness import Recorder
from .velha_match_fakes import DRAW, STARTER_LOSES, STARTER_WINS, RecordingPeer, newMatch


class Side(RecordingPeer):
    """One end of a match: its machine, and everything it did, recorded."""

    def __init__(self, pair: MatchPair, isInvitee: bool, name: str) -> None:
        super().__init__()
        self.pair, self.name = pair, name
        self.closed = False
        self.machine = newMatch(self, pair.clock, isInvitee, MatchSettings(first=pair.first), pair.seed)

    def send(self, message: wire.StreamMessage) -> None:
        super().send(message)
        self.pair.queue.append((self, message))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            super().close()
            self.pair.queue.append((self, None))

    def observed(self) -> list[tuple[object, ...]]:
        """What the front end heard: every event but the connection's."""
        return [event for event in self.events if event[0] not in ("send", "close")]


class MatchPair:
    """Inviter and invitee machines wired back to back, with explicit delivery."""

    def __init__(self, seed: int = 0, first: str = "random") -> None:
        self.seed, self.first = seed, first
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
            else:
                deliver(receiver, message)

    def starter(self) -> Side:
        """Whoever was last told it starts a game (or is to start the next one)."""
        for side in (self.inviter, self.invitee):
            events = side.observed()
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
    def play(self, *scripts: list[int]) -> tuple[MatchPair, Side, Side]:
        """Play whole games from the start; the pair, who started game 1, and the other side."""
        pair = MatchPair()
        pair.begin()
        first = pair.starter()
        for script in scripts:
            pair.playGame(script)
        return pair, first, pair.other(first)

    def final(self, side: Side) -> tuple[object, ...]:
        return side.observed()[-1]

    def test_threeNil(self) -> None:
        """Starter wins, then the loser starts and loses each time: 3-0 after three games."""
        pair, first, second = self.play(STARTER_WINS, STARTER_LOSES, STARTER_LOSES)
        self.assertEqual(self.final(first), ("seriesOver", "won", (3, 0)))
        self.assertEqual(self.final(second), ("seriesOver", "lost", (0, 3)))
        self.assertTrue(pair.inviter.closed or pair.invitee.closed)
        # The loser sent MSG09 each time, and nobody else.
        self.assertEqual(second.sent().count(wire.NewGame()), 2)
        self.assertEqual(first.sent().count(wire.NewGame()), 0)

    def test_threeTwo(self) -> None:
        """first wins, loses, wins, loses, wins -> 3-2 after five games."""
        _, first, second = self.play(STARTER_WINS, STARTER_WINS, STARTER_LOSES, STARTER_WINS, STARTER_LOSES)
        self.assertEqual(self.final(first), ("seriesOver", "won", (3, 2)))
        self.assertEqual(self.final(second), ("seriesOver", "lost", (2, 3)))

    def test_drawsAlternateTheStarter(self) -> None:
        pair, _, _ = self.play(*[DRAW] * 5)
        self.assertEqual(self.final(pair.inviter), ("seriesOver", "draw", (0, 0)))
        starts = [e[2] for e in pair.inviter.observed() if e[0] == "game"]
        self.assertEqual(starts, [starts[0], not starts[0], starts[0], not starts[0], starts[0]])

    def test_fiveGamesMoreWins(self) -> None:
        """Two wins and three draws: the series goes to game 5 and is won 2-0."""
        _, first, second = self.play(STARTER_WINS, DRAW, DRAW, STARTER_LOSES, DRAW)
        results = [e[1] for e in first.observed() if e[0] == "gameOver"]
        self.assertEqual(results, ["won", "draw", "draw", "won", "draw"])
        self.assertEqual(self.final(first), ("seriesOver", "won", (2, 0)))
        self.assertEqual(self.final(second), ("seriesOver", "lost", (0, 2)))

    def test_fiveGamesEven(self) -> None:
        _, first, _ = self.play(STARTER_WINS, STARTER_WINS, STARTER_WINS, STARTER_WINS, DRAW)
        self.assertEqual(self.final(first), ("seriesOver", "draw", (2, 2)))

    def test_msg07(self) -> None:
        pair = MatchPair()
        pair.begin()
        self.assertEqual(len(pair.invitee.sent()), 1)
        start = pair.invitee.sent()[0]
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
            self.assertEqual(side.sent()[-1], wire.GiveUp())
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
        event = side.observed()[-1]
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
        """Inviter or invitee to move second, an occupied cell or one off the board typed locally is refused:
        the user is told why, nothing goes out, and it is still their turn; a legal move then goes out."""
        refusals = {
            1: "not played: position 1 is already taken (text MSG08: a free position)",
            0: "not played: position 0 is not on the board (text MSG08: positions 1 to 9)",
            10: "not played: position 10 is not on the board (text MSG08: positions 1 to 9)",
        }
        for first, waiterName in (("inviter", "invitee"), ("invitee", "inviter")):
            pair = MatchPair(first=first)
            pair.begin()
            waiter = getattr(pair, waiterName)
            mover = pair.other(waiter)
            mover.machine.localMove(1)
            pair.deliver()
            # What the waiter sent so far, known from its role alone: the invitee's MSG07 naming the mover.
            start = wire.MatchStart(
                wire.MatchStart.INVITEE_STARTS if first == "invitee" else wire.MatchStart.INVITER_STARTS
            )
            expected: list[object] = [start] if waiterName == "invitee" else []
            self.assertEqual(waiter.sent(), expected)
            for position, refusal in refusals.items():
                waiter.take()
                waiter.machine.localMove(position)
                self.assertEqual(waiter.take(), [("notice", refusal), ("turn",)], (first, position))
            waiter.machine.localMove(5)
            self.assertEqual(waiter.take(), [("moved", 5, True), ("send", wire.Move(5))])
            self.assertEqual(pair.queue, [(waiter, wire.Move(5))])  # the refusals put nothing on the wire

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
        self.ourPeer = Peer(
            "velha",
            clock=Clock(),
            sendDatagram=lambda raw, addr: None,
            network=None,  # type: ignore[arg-type]
            frontEnd=self.recorder,
            rng=random.Random(1),
        )
        self.protocol = matchProtocolFor(self.ourPeer, "javaP", isInvitee=False)
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
            self.ourPeer.play(mine)
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
        self.ourPeer.play(1)
        self.assertEqual(self.written(), b"080061\n")
        self.assertTrue(self.transport.connected)

    def test_framesWithoutNewlineAndSplit(self) -> None:
        self.peer(b"0700")
        self.peer(b"62")
        self.assertIn(("game", 1, True), self.recorder.events)
        self.ourPeer.play(5)
        self.peer(b"08")
        self.peer(b"0061")
        self.assertIn(("moved", 1, False), self.recorder.events)

    def test_malformedFrameIsReportedAndDropped(self) -> None:
        self.peer(b"070062\n")
        self.ourPeer.play(5)
        self.peer(b"08x065\n080061\n")
        self.assertTrue(any(e[0] == "notice" and "malformed" in str(e[1]) for e in self.recorder.events))
        self.assertIn(("moved", 1, False), self.recorder.events)
        self.assertTrue(self.transport.connected)

    def test_seriesEndClosesConnection(self) -> None:
        """3-0: we start game 1; the loser (the peer) sends MSG09 and starts games 2 and 3."""
        self.peer(b"070062\n")  # the inviter (we) starts
        for mine, theirs in ((1, 4), (2, 5)):
            self.ourPeer.play(mine)
            self.peer(b"08006%d\n" % theirs)
        self.ourPeer.play(3)
        for _ in range(2):
            self.peer(b"09005\n")
            for theirs, mine in ((4, 1), (5, 2), (9, 3)):
                self.peer(b"08006%d\n" % theirs)
                self.ourPeer.play(mine)
        self.assertEqual(self.recorder.events[-1], ("seriesOver", "won", (3, 0)))
        self.assertTrue(self.transport.connected)  # the last move first has a moment to be read
        self.ourPeer.clock.advance(CLOSE_DELAY)  # type: ignore[attr-defined]
        self.assertFalse(self.transport.connected)
        self.assertNotIn(b"09005", self.written())  # the winner never sent MSG09

    def test_connectionLostEndsMatch(self) -> None:
        self.peer(b"070062\n")
        self.protocol.connectionLost(Failure(ConnectionResetError("reset")))
        self.assertEqual(self.recorder.events[-1][0], "ended")
        self.assertIsNone(self.ourPeer.matchProtocol)


REACH: dict[str, list[tuple[str, int]]] = {
    "connected": [],
    "waitingForStart": [("awaitStart", 0)],
    "myTurn": [("awaitStart", 0), ("startReceived", 2)],
    "theirTurn": [("awaitStart", 0), ("startReceived", 1)],
    "theirNewGame": [("awaitStart", 0), ("startReceived", 2)]
    + [("localMove" if i % 2 == 0 else "remoteMove", p) for i, p in enumerate(STARTER_WINS)],
    "theirDrawStart": [("awaitStart", 0), ("startReceived", 2)]
    + [("localMove" if i % 2 == 0 else "remoteMove", p) for i, p in enumerate(DRAW)],
    "myStartHeld": [("awaitStart", 0), ("startReceived", 1)]
    + [("remoteMove" if i % 2 == 0 else "localMove", p) for i, p in enumerate(STARTER_WINS)],
}
"""Inputs that bring an inviter's match to each state (after game 1 where the state is between games)."""

ENDINGS: dict[str, tuple[tuple[str, ...], list[tuple[object, ...]]]] = {
    "remoteGiveUp": ((), [("ended", "peer gave up (MSG10): you win the series"), ("close",)]),
    "peerLeft": ((), [("ended", "peer left (MSG03) in the middle of the match"), ("close",)]),
    "localQuit": ((), [("send", wire.GiveUp()), ("ended", "you gave up the series (MSG10 sent)"), ("close",)]),
    "connectionLost": (("reset",), [("ended", "the connection to peer was lost: reset")]),
}


class MachineAloneTests(SynchronousTestCase):
    """One match machine, its collaborators a recording ``RecordingPeer`` and a ``Clock``: every state's ways out,
    each with exactly what the machine did and no timer left behind where the state is left."""

    def reach(self, state: str, settings: MatchSettings | None = None) -> tuple[Match, RecordingPeer, Clock]:
        peer, clock = RecordingPeer(), Clock()
        match = newMatch(peer, clock, settings=settings)
        for name, argument in REACH[state]:
            method = getattr(match, name)
            method(argument) if name != "awaitStart" else method()
        peer.take()
        return match, peer, clock

    def pending(self, clock: Clock) -> list[float]:
        return sorted(call.getTime() - clock.seconds() for call in clock.getDelayedCalls())

    def assertFinished(self, match: Match, peer: RecordingPeer, clock: Clock) -> None:
        """Nothing is pending, and nothing does anything any more."""
        self.assertEqual(clock.getDelayedCalls(), [])
        for name, args in (("remoteMove", (5,)), ("localMove", (5,)), ("remoteNewGame", ()), ("startReceived", (1,))):
            getattr(match, name)(*args)
        self.assertFalse(match.supersede())
        clock.advance(1000)
        self.assertEqual(peer.take(), [])

    def test_everyStateEndsOnEveryEnding(self) -> None:
        for state in REACH:
            for ending, (args, expected) in ENDINGS.items():
                match, peer, clock = self.reach(state)
                getattr(match, ending)(*args)
                self.assertEqual(peer.take(), expected, (state, ending))
                self.assertFinished(match, peer, clock)

    def test_onlyTheWaitForMsg07MayBeSuperseded(self) -> None:
        for state in REACH:
            match, peer, clock = self.reach(state)
            timers = self.pending(clock)
            self.assertEqual(match.supersede(), state == "waitingForStart", state)
            if state == "waitingForStart":
                self.assertEqual(peer.take(), [])  # finished silently: the newer connection plays
                self.assertFinished(match, peer, clock)
            else:
                self.assertEqual(self.pending(clock), timers, state)

    def test_noMsg07(self) -> None:
        match, peer, clock = self.reach("waitingForStart")
        self.assertEqual(self.pending(clock), [30.0])
        clock.advance(29.9)
        self.assertEqual(peer.take(), [])
        clock.advance(0.1)
        events = peer.take()
        self.assertEqual(events[0], ("send", wire.GiveUp()))
        self.assertIn("peer sent no MSG07 within 30 s of our connection", str(events[1]))
        self.assertEqual(events[2:], [("close",)])
        self.assertFinished(match, peer, clock)

    def test_waitingForStartWaysOut(self) -> None:
        match, peer, clock = self.reach("waitingForStart")
        match.localMove(5)
        self.assertEqual(peer.take(), [("notice", "the game has not started yet: waiting for peer's MSG07")])
        self.assertEqual(self.pending(clock), [30.0])
        match.startReceived(2)
        self.assertEqual(peer.take(), [("game", 1, True), ("turn",)])
        self.assertEqual(self.pending(clock), [])
        match, peer, clock = self.reach("waitingForStart")
        match.startReceived(1)
        self.assertEqual(peer.take(), [("game", 1, False)])
        self.assertEqual(self.pending(clock), [60.0, 120.0])
        for message, rule in ((("remoteMove", 5), "MSG08 arrived before MSG07"), (("remoteNewGame",), "MSG09 arrived")):
            match, peer, clock = self.reach("waitingForStart")
            getattr(match, message[0])(*message[1:])
            events = peer.take()
            self.assertIn(rule, str(events[0]))
            self.assertEqual(events[1:], [("close",)])
            self.assertFinished(match, peer, clock)

    def test_silentPeerWhileAMoveOrMsg09IsDue(self) -> None:
        for state, what, silence in (
            ("theirTurn", "a move", "no move"),
            ("theirNewGame", "the start of game 2 (MSG09)", "no MSG09"),
        ):
            match, peer, clock = self.reach(state)
            self.assertEqual(self.pending(clock), [60.0, 120.0], state)
            clock.advance(60)
            self.assertEqual(
                peer.take(),
                [
                    (
                        "notice",
                        f"still waiting for {what} from peer (60 s); velhanet gives up the match after 120 s"
                        " (--peer-timeout)",
                    )
                ],
            )
            clock.advance(60)
            self.assertEqual(
                peer.take(),
                [
                    ("send", wire.GiveUp()),
                    (
                        "ended",
                        f"peer sent {silence} for 120 s; match given up (MSG10 sent) (--peer-timeout to wait longer)",
                    ),
                    ("close",),
                ],
            )
            self.assertFinished(match, peer, clock)

    def test_peerTimeoutZeroArmsNothing(self) -> None:
        match, peer, clock = self.reach("theirTurn", MatchSettings(peer=0))
        self.assertEqual(clock.getDelayedCalls(), [])
        match.remoteMove(5)
        self.assertEqual(peer.take(), [("moved", 5, False), ("turn",)])

    def test_nobodyStartsAfterOurDraw(self) -> None:
        match, peer, clock = self.reach("theirDrawStart")
        self.assertEqual(self.pending(clock), [START_GRACE])
        match.localMove(5)
        self.assertEqual(peer.take(), [("notice", "not your turn: waiting for peer")])
        clock.advance(START_GRACE)
        events = peer.take()
        self.assertEqual(events[:2], [("send", wire.NewGame()), ("game", 2, True)])
        self.assertIn("peer did not start game 2 within 8 s after the draw", str(events[2]))
        self.assertEqual(events[3:], [("turn",)])
        self.assertEqual(clock.getDelayedCalls(), [])

    def test_peerStartsBetweenGames(self) -> None:
        """From each state between games the peer's MSG09, or its first move without one, starts game 2."""
        for state in ("theirNewGame", "theirDrawStart", "myStartHeld"):
            match, peer, clock = self.reach(state)
            match.startReceived(1)
            self.assertEqual(
                peer.take(),
                [("notice", "peer sent MSG07 1 between games (text MSG07: once, at the start); ignored")],
            )
            match.remoteNewGame()
            events = peer.take()
            self.assertEqual(events[-1], ("game", 2, False), state)
            self.assertEqual(len(events), 1 if state != "myStartHeld" else 2, events)
            self.assertEqual(self.pending(clock), [60.0, 120.0], state)  # now waiting for its move

            match, peer, clock = self.reach(state)
            match.remoteMove(5)
            events = peer.take()
            self.assertEqual(events[-3:], [("game", 2, False), ("moved", 5, False), ("turn",)], state)
            self.assertEqual(len(events), 4, events)  # and one notice saying what was followed
            self.assertEqual(clock.getDelayedCalls(), [], state)

    def test_heldFirstMove(self) -> None:
        """We start game 2: MSG09 at once, our move held for the grace, then played, or refused if illegal."""
        match, peer, clock = self.reach("myStartHeld")
        self.assertEqual(self.pending(clock), [START_GRACE])
        clock.advance(START_GRACE)
        self.assertEqual(peer.take(), [("turn",)])
        self.assertEqual(clock.getDelayedCalls(), [])

        match, peer, clock = self.reach("myStartHeld")
        match.localMove(5)
        self.assertEqual(peer.take(), [("notice", "5 will be played in a moment, once peer has closed the last game")])
        clock.advance(START_GRACE)
        self.assertEqual(peer.take(), [("moved", 5, True), ("send", wire.Move(5))])
        self.assertEqual(self.pending(clock), [60.0, 120.0])

        match, peer, clock = self.reach("myStartHeld")
        match.localMove(0)
        peer.take()
        clock.advance(START_GRACE)
        refusal = "not played: position 0 is not on the board (text MSG08: positions 1 to 9)"
        self.assertEqual(peer.take(), [("notice", refusal), ("turn",)])

    def heldAfterTheirSecondStart(self) -> tuple[Match, RecordingPeer, Clock]:
        """Game 3 is ours to start: the peer started and ended games 1 and 2 (game 2 although it was ours)."""
        peer, clock = RecordingPeer(), Clock()
        match = newMatch(peer, clock)
        match.awaitStart()
        match.startReceived(wire.MatchStart.INVITEE_STARTS)
        for _game in (1, 2):
            for index, position in enumerate(DRAW):
                if index % 2 == 0:
                    match.remoteMove(position)
                else:
                    match.localMove(position)
        peer.take()
        return match, peer, clock

    def test_quietStartAfterAPeerThatStartsItself(self) -> None:
        """No MSG09 as its result dialog opens: sent with our first move, or never if the peer starts."""
        match, peer, clock = self.heldAfterTheirSecondStart()
        self.assertEqual(self.pending(clock), [60.0])  # the hold of a peer that starts anyway
        match.localMove(5)
        peer.take()
        clock.advance(60)
        self.assertEqual(peer.take(), [("send", wire.NewGame()), ("moved", 5, True), ("send", wire.Move(5))])

        match, peer, clock = self.heldAfterTheirSecondStart()
        match.remoteMove(1)
        match.localMove(5)
        sent = [event for event in peer.take() if event[0] == "send"]
        self.assertEqual(sent, [("send", wire.Move(5))])  # never a MSG09
        self.assertEqual(self.pending(clock), [UNANSWERED_WARNING, 60.0, 120.0])
        clock.advance(UNANSWERED_WARNING)
        (notice,) = peer.take()
        self.assertIn("no answer to your move 5 for 20 s", str(notice))
        match.remoteMove(9)  # it answers after all: nothing more is said
        self.assertEqual([e[0] for e in peer.take()], ["moved", "turn"])

    def test_msg09OnTheirTurn(self) -> None:
        """Before any move it is ignored (the timers start again); in mid-game the game is void."""
        match, peer, clock = self.reach("theirTurn")
        clock.advance(30)
        match.remoteNewGame()
        self.assertIn("sent MSG09 although game 1 had already begun", str(peer.take()))
        self.assertEqual(self.pending(clock), [60.0, 120.0])

        match, peer, clock = self.reach("myTurn")
        match.localMove(5)
        match.remoteNewGame()
        events = peer.take()
        self.assertIn("Game 1 is void; the next game starts with peer", str(events))
        self.assertEqual(events[-1], ("game", 2, False))
        self.assertEqual(self.pending(clock), [60.0, 120.0])

    def test_msg07OnOurTurn(self) -> None:
        """Inviter: a MSG07 before any move restarts game 1 as it says; after a move it breaks the match."""
        match, peer, clock = self.reach("myTurn")
        match.startReceived(1)
        events = peer.take()
        self.assertIn("sent MSG07 again before anyone moved", str(events[0]))
        self.assertEqual(events[1:], [("game", 1, False)])
        self.assertEqual(self.pending(clock), [60.0, 120.0])
        match.remoteMove(5)
        match.localMove(1)
        match.startReceived(2)
        self.assertIn("a second MSG07 arrived after the game had begun", str(peer.take()))
        self.assertFinished(match, peer, clock)
