"""The bots: perfect tic-tac-toe, heuristic gobang, random."""

from __future__ import annotations

from functools import cache

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from velhanet.bots.gobang import GobangBot
from velhanet.bots.interfaces import IBot
from velhanet.bots.randombot import RandomBot
from velhanet.bots.tictactoe import PerfectBot
from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import PASS, TICTACTOE, KInARowState, Place, gobangRules

from .test_kinarow import setUp


@cache
def referenceValue(cells: bytes, mover: int) -> int:
    """Independent plain minimax for 3x3: +1 mover wins, 0 draw, -1 mover loses."""
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    for a, b, c in lines:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return 1 if cells[a] - 1 == mover else -1
    if 0 not in cells:
        return 0
    best = -1
    for i in range(9):
        if cells[i] == 0:
            after = cells[:i] + bytes([mover + 1]) + cells[i + 1 :]
            best = max(best, -referenceValue(after, 1 - mover))
    return best


class PerfectBotTests(SynchronousTestCase):
    def exploreAll(self, state: KInARowState, botSide: int, bot: PerfectBot) -> int:
        """Walk every opponent reply; return how many finished games were visited."""
        if state.outcome is not None:
            self.assertNotEqual(state.outcome.winner, 1 - botSide, f"bot lost: {state.cells!r}")
            return 1
        if state.toMove == botSide:
            before = referenceValue(state.cells, botSide)
            after = state.apply(bot.chooseMove(state))
            # Never lets the value drop: a won position stays won, a drawn one drawn.
            self.assertEqual(-referenceValue(after.cells, 1 - botSide) if after.outcome is None else before, before)
            if before == 1:
                nextValue = 1 if after.outcome is not None else -referenceValue(after.cells, 1 - botSide)
                self.assertEqual(nextValue, 1)
            return self.exploreAll(after, botSide, bot)
        return sum(self.exploreAll(state.apply(m), botSide, bot) for m in state.legalMoves())

    def test_neverLosesAsFirstPlayer(self) -> None:
        games = self.exploreAll(TICTACTOE.initial(), 0, PerfectBot(seed=1))
        self.assertGreater(games, 50)

    def test_neverLosesAsSecondPlayer(self) -> None:
        games = self.exploreAll(TICTACTOE.initial(), 1, PerfectBot(seed=2))
        self.assertGreater(games, 200)

    def test_winsWhenAllowed(self) -> None:
        # X at 0,0 and 1,1; O at 1,0; X to move can win at 2,2 at once.
        state = setUp(TICTACTOE, [(0, 0), (1, 1)], [(1, 0)]).apply(Place(2, 0))
        # O blundered into (2,0)? No: that was O's move; now X is to move.
        move = PerfectBot(seed=3).chooseMove(state)
        after = state.apply(move)
        assert after.outcome is not None
        self.assertEqual(after.outcome.winner, 0)

    def test_blocksImmediateLoss(self) -> None:
        state = setUp(TICTACTOE, [(0, 0), (1, 0)], [(1, 1)])  # O to move, X threatens (2,0)
        self.assertEqual(PerfectBot(seed=4).chooseMove(state), Place(2, 0))

    def test_refusesFinishedGame(self) -> None:
        state = setUp(TICTACTOE, [(0, 0), (1, 0), (2, 0)], [(0, 1), (1, 1)])
        self.assertRaises(IllegalMove, PerfectBot().chooseMove, state)

    def test_seedReplays(self) -> None:
        first = [PerfectBot(seed=9).chooseMove(TICTACTOE.initial()) for _ in range(3)]
        again = [PerfectBot(seed=9).chooseMove(TICTACTOE.initial()) for _ in range(3)]
        self.assertEqual(first, again)

    def test_provides(self) -> None:
        self.assertTrue(verifyObject(IBot, PerfectBot()))
        self.assertTrue(verifyObject(IBot, GobangBot()))
        self.assertTrue(verifyObject(IBot, RandomBot()))


class GobangBotTests(SynchronousTestCase):
    def test_opensNearCentre(self) -> None:
        self.assertEqual(GobangBot(seed=1).chooseMove(gobangRules(15).initial()), Place(7, 7))

    def test_takesImmediateWin(self) -> None:
        # Black has four in a row with one end open, white has an open four too:
        # black to move must win rather than block.
        state = setUp(
            gobangRules(15), [(3, 3), (4, 3), (5, 3), (6, 3), (0, 14)], [(2, 3), (5, 9), (6, 9), (7, 9), (8, 9)]
        )
        self.assertEqual(state.toMove, 0)
        move = GobangBot(seed=2).chooseMove(state)
        self.assertEqual(move, Place(7, 3))
        self.assertEqual(state.apply(move).outcome.winner, 0)  # type: ignore[union-attr]

    def test_blocksImmediateLoss(self) -> None:
        # White's four (5..8, 6) is closed on the left; black must take (9, 6).
        state = setUp(gobangRules(15), [(4, 6), (10, 10), (12, 12), (0, 0)], [(5, 6), (6, 6), (7, 6), (8, 6)])
        self.assertEqual(state.toMove, 0)
        self.assertEqual(GobangBot(seed=3).chooseMove(state), Place(9, 6))

    def test_blocksOpenThree(self) -> None:
        # White has an open three (6..8, 4); black must stop it at an end.
        state = setUp(gobangRules(15), [(1, 1), (13, 13), (1, 13)], [(6, 4), (7, 4), (8, 4)])
        self.assertEqual(state.toMove, 0)
        self.assertIn(GobangBot(seed=4).chooseMove(state), (Place(5, 4), Place(9, 4)))

    def test_makesOpenFour(self) -> None:
        # Black has an open three and nothing to fear: it extends to an open four.
        state = setUp(gobangRules(15), [(6, 7), (7, 7), (8, 7)], [(0, 0), (14, 14), (0, 14)])
        self.assertEqual(state.toMove, 0)
        self.assertIn(GobangBot(seed=5).chooseMove(state), (Place(5, 7), Place(9, 7)))

    def test_beatsRandomBot(self) -> None:
        """At least 95 of 100 seeded games, half as black and half as white."""
        wins = 0
        for seed in range(100):
            botSide = seed % 2
            bot, opponent = GobangBot(seed), RandomBot(seed)
            state = gobangRules(15).initial()
            while state.outcome is None:
                player = bot if state.toMove == botSide else opponent
                state = state.apply(player.chooseMove(state))
            wins += state.outcome.winner == botSide
        self.assertGreaterEqual(wins, 95)


class RandomBotTests(SynchronousTestCase):
    def test_playsLegalMovesAndNeverPassesByDefault(self) -> None:
        bot, state = RandomBot(seed=7), gobangRules(5).initial()
        while state.outcome is None:
            move = bot.chooseMove(state)
            self.assertNotEqual(move, PASS)
            state = state.apply(move)
        self.assertRaises(IllegalMove, bot.chooseMove, state)
