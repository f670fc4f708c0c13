"""The pure rules of a JogoVelha series, asked directly: no machine, no clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.interfaces import Outcome
from velhanet.velha.series import AfterGame, Series, placeToPosition, positionToPlace


def played(iStart: bool, moves: list[tuple[int, bool]], gameNumber: int = 1) -> Series:
    series = Series(gameNumber=gameNumber - 1)
    series.newGame(iStart)
    for position, byMe in moves:
        assert series.play(position, byMe) is None
    return series


class PositionTests(SynchronousTestCase):
    def test_rowByRow(self) -> None:
        self.assertEqual([placeToPosition(positionToPlace(p)) for p in range(1, 10)], list(range(1, 10)))
        self.assertEqual((positionToPlace(1).x, positionToPlace(1).y), (0, 0))
        self.assertEqual((positionToPlace(6).x, positionToPlace(6).y), (2, 1))

    @given(st.integers().filter(lambda p: not 1 <= p <= 9), st.booleans(), st.booleans())
    def test_everyPositionOffTheBoardIsNamed(self, position: int, iStart: bool, byMe: bool) -> None:
        series = played(iStart, [])
        self.assertEqual(
            series.play(position, byMe), f"position {position} is not on the board (text MSG08: positions 1 to 9)"
        )
        self.assertTrue(series.untouched())


class PlayTests(SynchronousTestCase):
    def test_takenCellBeforeTheTurn(self) -> None:
        """An occupied cell is named as such even when it is also not the mover's turn."""
        series = played(True, [(5, True)])
        self.assertEqual(series.play(5, True), "position 5 is already taken (text MSG08: a free position)")
        self.assertEqual(series.play(5, False), "position 5 is already taken (text MSG08: a free position)")

    def test_otherRefusalsInTheEnginesWords(self) -> None:
        series = played(True, [(5, True)])
        self.assertEqual(series.play(1, True), "position 1: it is not player 0's turn: player 1 is to move")
        self.assertEqual(series.moves, [(5, True)])

    def test_starterPlaysX(self) -> None:
        self.assertEqual(played(False, [(1, False)]).board.stoneAt(0, 0), 0)
        self.assertEqual(played(True, [(1, True)]).board.stoneAt(0, 0), 0)


class AfterGameTests(SynchronousTestCase):
    def finish(self, iStart: bool, winner: int | None, score: list[int], gameNumber: int = 1) -> tuple[str, AfterGame]:
        series = played(iStart, [(1, iStart)], gameNumber)
        series.score = score
        result = series.scoreGame(Outcome(winner, "line" if winner is not None else "full"))
        return result, series.afterGame(result)

    def test_whoStartsNext(self) -> None:
        """The loser starts; after a draw the player who did not start; a third win ends the series."""
        self.assertEqual(self.finish(True, 0, [0, 0]), ("won", AfterGame.THEY_START))
        self.assertEqual(self.finish(True, 1, [0, 0]), ("lost", AfterGame.I_START))
        self.assertEqual(self.finish(False, 1, [0, 0]), ("won", AfterGame.THEY_START))
        self.assertEqual(self.finish(True, None, [0, 0]), ("draw", AfterGame.THEY_START_AFTER_DRAW))
        self.assertEqual(self.finish(False, None, [0, 0]), ("draw", AfterGame.I_START))
        self.assertEqual(self.finish(True, 0, [2, 0]), ("won", AfterGame.SERIES_OVER))
        self.assertEqual(self.finish(True, 1, [0, 2]), ("lost", AfterGame.SERIES_OVER))
        self.assertEqual(self.finish(True, None, [1, 1], gameNumber=5), ("draw", AfterGame.SERIES_OVER))

    def test_scoreAndResult(self) -> None:
        series = played(True, [(1, True)])
        series.scoreGame(Outcome(0, "line"))
        self.assertEqual((series.scoreboard(), series.seriesResult()), ((1, 0), "won"))
        self.assertFalse(series.peerEndedLastGame)
        series.newGame(False)
        series.play(2, False)
        series.scoreGame(Outcome(0, "line"))
        self.assertEqual((series.scoreboard(), series.seriesResult()), ((1, 1), "draw"))
        self.assertTrue(series.peerEndedLastGame)


class LostFirstMoveTests(SynchronousTestCase):
    def test_onlyOurFirstMoveAfterAGameThePeerEnded(self) -> None:
        series = played(True, [(5, True)], gameNumber=2)
        self.assertTrue(series.ourFirstMoveOnly())
        self.assertFalse(series.firstMoveLost(5))  # the peer did not end the last game
        series.peerEndedLastGame = True
        self.assertTrue(series.firstMoveLost(5))
        self.assertFalse(series.firstMoveLost(4))
        self.assertFalse(played(True, [(5, True)], gameNumber=1).ourFirstMoveOnly())
