"""The k-in-a-row engine on hand-made positions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from velhanet.games.interfaces import IGameRules, IGameState, IllegalMove, Outcome
from velhanet.games.kinarow import (
    PASS,
    RESIGN,
    TICTACTOE,
    KInARowRules,
    KInARowState,
    Place,
    gobangRules,
)


def play(state: KInARowState, *cells: tuple[int, int]) -> KInARowState:
    """Apply placements alternately, starting with the player to move."""
    for x, y in cells:
        state = state.apply(Place(x, y))
    return state


def setUp(rules: KInARowRules, black: list[tuple[int, int]], white: list[tuple[int, int]]) -> KInARowState:
    """Interleave black and white stones (black first); lengths may differ by one."""
    order: list[tuple[int, int]] = []
    for i in range(max(len(black), len(white))):
        if i < len(black):
            order.append(black[i])
        if i < len(white):
            order.append(white[i])
    return play(rules.initial(), *order)


class InterfaceTests(SynchronousTestCase):
    def test_provides(self) -> None:
        self.assertTrue(verifyObject(IGameRules, TICTACTOE))
        self.assertTrue(verifyObject(IGameState, TICTACTOE.initial()))

    def test_initialState(self) -> None:
        state = gobangRules(11).initial()
        self.assertEqual(state.toMove, 0)
        self.assertIsNone(state.outcome)
        self.assertEqual(len(state.legalMoves()), 11 * 11 + 1)
        self.assertIn(PASS, state.legalMoves())
        self.assertNotIn(PASS, TICTACTOE.initial().legalMoves())

    def test_applyIsPure(self) -> None:
        before = TICTACTOE.initial()
        after = before.apply(Place(1, 1))
        self.assertIsNone(before.stoneAt(1, 1))
        self.assertEqual(after.stoneAt(1, 1), 0)
        self.assertEqual(after.toMove, 1)
        self.assertEqual(after.moveCount, 1)
        self.assertEqual(after.stones(), [(1, 1, 0)])

    def test_badRules(self) -> None:
        self.assertRaises(ValueError, KInARowRules, "x", 3, 3, 4)
        self.assertRaises(ValueError, KInARowRules, "x", 0, 3, 1)


class WinTests(SynchronousTestCase):
    def test_row(self) -> None:
        state = setUp(gobangRules(11), [(2, 5), (3, 5), (4, 5), (5, 5), (6, 5)], [(0, 0), (0, 1), (0, 2), (0, 3)])
        self.assertEqual(state.outcome, Outcome(0, "line", ((2, 5), (3, 5), (4, 5), (5, 5), (6, 5))))
        self.assertIsNone(state.toMove)

    def test_column(self) -> None:
        state = setUp(
            gobangRules(11), [(0, 0), (10, 10), (0, 9), (5, 0), (9, 9)], [(7, 1), (7, 2), (7, 3), (7, 4), (7, 5)]
        )
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 1)
        self.assertEqual(state.outcome.line, tuple((7, y) for y in range(1, 6)))

    def test_diagonal(self) -> None:
        state = setUp(gobangRules(11), [(i, i) for i in range(5)], [(0, 10), (1, 10), (2, 10), (3, 10)])
        assert state.outcome is not None
        self.assertEqual(state.outcome.line, tuple((i, i) for i in range(5)))

    def test_antiDiagonal(self) -> None:
        cells = [(6 + i, 4 - i) for i in range(5)]
        state = setUp(gobangRules(11), cells, [(0, 10), (1, 10), (2, 10), (3, 10)])
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 0)
        self.assertEqual(sorted(state.outcome.line), sorted(cells))

    def test_edgesAndCorners(self) -> None:
        """Rows along the last column and the top row of the board count."""
        state = setUp(gobangRules(7), [(6, y) for y in range(2, 7)], [(0, 0), (1, 0), (2, 0), (3, 0)])
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 0)
        state = setUp(gobangRules(7), [(0, 1), (6, 1), (3, 3), (4, 4), (5, 1)], [(x, 6) for x in range(2, 7)])
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 1)

    def test_fourIsNotEnough(self) -> None:
        state = setUp(gobangRules(11), [(1, 1), (2, 1), (3, 1), (4, 1)], [(1, 5), (2, 5), (3, 5)])
        self.assertIsNone(state.outcome)

    def test_gapIsNotAFive(self) -> None:
        state = setUp(gobangRules(11), [(0, 0), (1, 0), (3, 0), (4, 0), (5, 0)], [(0, 9), (1, 9), (2, 9), (3, 9)])
        self.assertIsNone(state.outcome)

    def test_sixInARowWins(self) -> None:
        """Five *or more*: closing a gap that makes six is a gobang win."""
        black = [(0, 3), (1, 3), (2, 3), (4, 3), (5, 3), (3, 3)]
        state = setUp(gobangRules(11), black, [(0, 9), (1, 9), (2, 9), (3, 9), (9, 0)])
        assert state.outcome is not None
        self.assertEqual(state.outcome.winner, 0)
        self.assertEqual(len(state.outcome.line), 6)

    def test_ticTacToeWinAndFull(self) -> None:
        won = play(TICTACTOE.initial(), (0, 0), (1, 0), (1, 1), (2, 0), (2, 2))
        self.assertEqual(won.outcome, Outcome(0, "line", ((0, 0), (1, 1), (2, 2))))
        full = play(TICTACTOE.initial(), (0, 0), (1, 1), (2, 2), (0, 1), (2, 1), (2, 0), (0, 2), (1, 2), (1, 0))
        self.assertEqual(full.outcome, Outcome(None, "full"))

    def test_ticTacToeHasNoEarlyDraw(self) -> None:
        """JogoVelha ends a game only on a win or a full board, so both peers agree."""
        state = play(TICTACTOE.initial(), (0, 0), (1, 1), (2, 2), (0, 1), (2, 1), (2, 0), (0, 2), (1, 2))
        self.assertIsNone(state.outcome)


class SeenFromOutsideTests(SynchronousTestCase):
    def test_aPositionFromItsStonesSaysWhoHasALine(self) -> None:
        """A client that sees only the stones (a kibitzer, a player told of a resignation) asks the rules."""
        rules = gobangRules(11)
        five = [(x, 4, 0) for x in range(2, 7)] + [(0, 0, 1), (1, 1, 1), (2, 2, 1), (3, 3, 1)]
        position = rules.position(five, toMove=1)
        self.assertEqual((position.hasLine(0), position.hasLine(1)), (True, False))
        four = rules.position(five[1:], toMove=0)
        self.assertEqual((four.hasLine(0), four.hasLine(1)), (False, False))


class DrawAndPassTests(SynchronousTestCase):
    def test_twoPassesDraw(self) -> None:
        state = gobangRules(9).initial().apply(Place(4, 4)).apply(PASS)
        self.assertIsNone(state.outcome)
        self.assertEqual(state.toMove, 0)
        state = state.apply(PASS)
        self.assertEqual(state.outcome, Outcome(None, "passes"))

    def test_passThenPlaceResets(self) -> None:
        state = gobangRules(9).initial().apply(PASS).apply(Place(0, 0)).apply(PASS)
        self.assertIsNone(state.outcome)
        self.assertEqual(state.consecutivePasses, 1)

    def test_earlyDrawOnBlockedBoard(self) -> None:
        """On 5x5 every line of five is one of 12; spoil each and the game is drawn at once."""
        rules = gobangRules(5)
        # Black on the anti-diagonal blocks nothing for white; build a pattern
        # where every row, column and diagonal holds both colours.
        black = [(0, 0), (1, 2), (2, 4), (3, 1), (4, 3), (2, 2)]
        white = [(0, 1), (1, 3), (2, 0), (3, 2), (4, 4), (4, 0)]
        state = previous = rules.initial()
        order = [c for pair in zip(black, white, strict=True) for c in pair]
        for x, y in order:
            previous, state = state, state.apply(Place(x, y))
            if state.outcome is not None:
                break
        self.assertEqual(state.outcome, Outcome(None, "blocked"))
        # The move before still left a line of five open, and the draw comes
        # long before the board is full.
        self.assertIsNone(previous.outcome)
        self.assertGreater(previous.openWindows, 0)
        self.assertLess(state.moveCount, 25)

    def test_openBoardIsNotDrawn(self) -> None:
        state = setUp(gobangRules(5), [(0, 0), (1, 1)], [(4, 0), (3, 1)])
        self.assertIsNone(state.outcome)
        self.assertGreater(state.openWindows, 0)

    def test_resign(self) -> None:
        state = gobangRules(9).initial().apply(Place(4, 4)).apply(RESIGN)
        self.assertEqual(state.outcome, Outcome(0, "resign"))
        self.assertEqual(state.legalMoves(), [])


class IllegalMoveTests(SynchronousTestCase):
    def assertIllegal(self, state: KInARowState, move: object, fragment: str, player: int | None = None) -> None:
        error = self.assertRaises(IllegalMove, state.apply, move, player)
        self.assertIn(fragment, str(error))

    def test_offBoard(self) -> None:
        self.assertIllegal(TICTACTOE.initial(), Place(3, 0), "off the 3x3 board")
        self.assertIllegal(TICTACTOE.initial(), Place(-1, 2), "off the 3x3 board")

    def test_occupied(self) -> None:
        self.assertIllegal(TICTACTOE.initial().apply(Place(1, 1)), Place(1, 1), "cell (1, 1) is already occupied")

    def test_outOfTurn(self) -> None:
        self.assertIllegal(TICTACTOE.initial(), Place(0, 0), "not player 1's turn", player=1)
        self.assertEqual(TICTACTOE.initial().apply(Place(0, 0), player=0).toMove, 1)

    def test_afterTheEnd(self) -> None:
        won = play(TICTACTOE.initial(), (0, 0), (1, 0), (1, 1), (2, 0), (2, 2))
        self.assertIllegal(won, Place(2, 1), "already over (player 0 won: line)")

    def test_passNotAllowed(self) -> None:
        self.assertIllegal(TICTACTOE.initial(), PASS, "passing is not allowed in tictactoe")

    def test_notAMove(self) -> None:
        self.assertIllegal(TICTACTOE.initial(), "e2e4", "not a tictactoe move")

    def test_stoneAtOffBoard(self) -> None:
        self.assertRaises(IllegalMove, TICTACTOE.initial().stoneAt, 5, 5)


class RandomGameProperties(SynchronousTestCase):
    @settings(max_examples=60, deadline=None)
    @given(st.integers(5, 9), st.randoms(use_true_random=False))
    def test_randomGamesEndConsistently(self, size: int, rnd: object) -> None:
        """Random gobang games end, and the early-draw counter matches a full rescan."""
        import random

        assert isinstance(rnd, random.Random)
        state = gobangRules(size).initial()
        while state.outcome is None:
            moves = [m for m in state.legalMoves() if m != PASS]
            state = state.apply(rnd.choice(moves))
            windows = state.rules.geometry.windows
            mixed = sum(1 for w in windows if {state.cells[c] for c in w} >= {1, 2})
            self.assertEqual(state.openWindows, len(windows) - mixed)
        self.assertIsNotNone(state.outcome)
        if state.outcome.winner is None:
            self.assertIn(state.outcome.reason, ("blocked", "full"))


class PositionTests(SynchronousTestCase):
    def test_positionMatchesPlayedGame(self) -> None:
        played = setUp(gobangRules(9), [(4, 4), (5, 5), (0, 8)], [(3, 3), (2, 2)])
        rebuilt = gobangRules(9).position(played.stones(), toMove=1)
        self.assertEqual(
            (rebuilt.cells, rebuilt.windowMarks, rebuilt.openWindows),
            (played.cells, played.windowMarks, played.openWindows),
        )
        self.assertEqual(rebuilt.toMove, 1)
        self.assertRaises(IllegalMove, gobangRules(9).position, [(0, 0, 0), (0, 0, 1)], 0)
