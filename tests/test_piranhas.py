"""The Piranhas engine: hand-made positions, setup, end and winner rules, and agreement
with the real ``socha==4.3.9`` library's move generator on thousands of positions."""

from __future__ import annotations

import random

from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.interfaces import IllegalMove
from velhanet.games.piranhas import (
    EMPTY,
    ONE,
    SIZE,
    SQUID,
    TWO,
    Direction,
    PiranhaMove,
    PiranhasState,
    WinReason,
    fish,
    heaviestSwarm,
    swarms,
    teamOf,
)
from velhanet.games.piranhassetup import PiranhasRules, randomBoard

FILLERS = {"f6_8": fish(ONE, 1), "f8_6": fish(ONE, 1), "f3_7": fish(TWO, 1), "f7_3": fish(TWO, 1)}
"""Two lone fish per team away from the lines under test, so no team is one swarm (the game goes on)."""


def board(fillers: bool = True, **fields: int) -> bytes:
    """A board from keyword fields like ``f0_3=fish(ONE, 1)`` (x=0, y=3), plus the fillers."""
    cells = bytearray(SIZE * SIZE)
    for name, value in ({**FILLERS, **fields} if fillers else fields).items():
        x, y = (int(part) for part in name[1:].split("_"))
        cells[y * SIZE + x] = value
    return bytes(cells)


S1, S2 = fish(ONE, 1), fish(TWO, 1)


class MoveRuleTests(SynchronousTestCase):
    def test_distanceCountsBothTeamsOnTheWholeLine(self) -> None:
        # Row y=0: ONE at 1, TWO at 6, ONE at 9 -> a horizontal move goes 3 fields.
        state = PiranhasState(board(f1_0=S1, f6_0=S2, f9_0=S1, f5_5=S2))
        after = state.apply(PiranhaMove(1, 0, Direction.RIGHT))
        self.assertEqual(after.field(4, 0), "ONE_S")
        self.assertEqual(after.field(1, 0), "EMPTY")
        self.assertEqual(after.turn, 1)
        self.assertEqual(after.currentTeam, TWO)

    def test_squidsDoNotCountButBlockTheTarget(self) -> None:
        state = PiranhasState(board(f0_0=S1, f2_0=SQUID, f5_5=S2, f9_9=S1))
        # Only one fish on row 0: distance 1 -> (1, 0). Column: 1 fish -> (0, 1).
        self.assertEqual(state.apply(PiranhaMove(0, 0, Direction.RIGHT)).field(1, 0), "ONE_S")
        blocked = PiranhasState(board(f0_0=S1, f1_0=SQUID, f5_5=S2, f9_9=S1))
        error = self.assertRaises(IllegalMove, blocked.apply, PiranhaMove(0, 0, Direction.RIGHT))
        self.assertIn("DESTINATION_BLOCKED", str(error))

    def test_jumpOverOwnButNotOpponent(self) -> None:
        own = PiranhasState(board(f0_0=S1, f1_0=S1, f7_7=S2))
        self.assertEqual(own.apply(PiranhaMove(0, 0, Direction.RIGHT)).field(2, 0), "ONE_S")
        opponent = PiranhasState(board(f0_0=S1, f1_0=S2, f5_5=S1))
        error = self.assertRaises(IllegalMove, opponent.apply, PiranhaMove(0, 0, Direction.RIGHT))
        self.assertIn("JUMP_OVER_OPPONENT", str(error))

    def test_captureAndOwnTarget(self) -> None:
        capture = PiranhasState(board(f0_0=S1, f2_0=S2, f9_9=S1, f5_5=S2))
        after = capture.apply(PiranhaMove(0, 0, Direction.RIGHT))
        self.assertEqual(after.field(2, 0), "ONE_S")
        self.assertEqual(len([v for v in after.cells if teamOf(v) == TWO]), 3)
        selfBlocked = PiranhasState(board(f0_0=S1, f2_0=S1, f5_5=S2))
        self.assertIn(
            "BY_SELF", str(self.assertRaises(IllegalMove, selfBlocked.apply, PiranhaMove(0, 0, Direction.RIGHT)))
        )

    def test_diagonalsAndBounds(self) -> None:
        state = PiranhasState(board(f0_0=S1, f1_1=S1, f9_9=S2))  # rising diagonal holds 3 fish
        self.assertEqual(state.apply(PiranhaMove(0, 0, Direction.UP_RIGHT)).field(3, 3), "ONE_S")
        self.assertIn(
            "OUT_OF_BOUNDS", str(self.assertRaises(IllegalMove, state.apply, PiranhaMove(0, 0, Direction.DOWN_LEFT)))
        )

    def test_wrongStartAndEmptyAndTurn(self) -> None:
        state = PiranhasState(board(f0_0=S1, f5_5=S2))
        self.assertIn("WRONG_START", str(self.assertRaises(IllegalMove, state.apply, PiranhaMove(5, 5, Direction.UP))))
        # An empty start field is WRONG_START too, as on the official server (GameStateTest "deserialization").
        self.assertIn("WRONG_START", str(self.assertRaises(IllegalMove, state.apply, PiranhaMove(3, 3, Direction.UP))))
        self.assertIn(
            "not team TWO's turn",
            str(self.assertRaises(IllegalMove, state.apply, PiranhaMove(0, 0, Direction.UP), TWO)),
        )


class SetupTests(SynchronousTestCase):
    def test_symmetricSizesAndSquids(self) -> None:
        for seed in range(200):
            cells = randomBoard(random.Random(seed))
            for i in range(1, 9):
                self.assertEqual(cells[i * SIZE + 0], cells[0 * SIZE + i] - 3)
                self.assertEqual(cells[i * SIZE + 9], cells[9 * SIZE + i] - 3)
            for corner in (0, 9, 90, 99):
                self.assertEqual(cells[corner], EMPTY)
            squids = [(i % SIZE, i // SIZE) for i, v in enumerate(cells) if v == SQUID]
            self.assertEqual(len(squids), 2)
            (ax, ay), (bx, by) = squids
            for x, y in squids:
                self.assertTrue(2 <= x <= 7 and 2 <= y <= 7)
            self.assertTrue(ax != bx and ay != by and ax - ay != bx - by and ax + ay != bx + by)
            self.assertEqual(sum(1 for v in cells if teamOf(v) == ONE), 16)

    def test_sizeWeights(self) -> None:
        sizes = [v for seed in range(300) for v in randomBoard(random.Random(seed)) if teamOf(v) == ONE]
        counts = [sizes.count(fish(ONE, s)) / len(sizes) for s in (1, 2, 3)]
        for measured, expected in zip(counts, (4 / 9, 3 / 9, 2 / 9), strict=True):
            self.assertLess(abs(measured - expected), 0.03)


class EndTests(SynchronousTestCase):
    def test_swarmsAndWeights(self) -> None:
        cells = board(False, f0_0=fish(ONE, 3), f1_1=fish(ONE, 2), f5_5=fish(ONE, 1), f9_9=S2)
        self.assertEqual(sorted(len(s) for s in swarms(cells, ONE)), [1, 2])
        self.assertEqual(heaviestSwarm(cells, ONE), 5)

    def test_connectedTeamWithBiggerSwarmWinsAfterFullRound(self) -> None:
        # ONE is one swarm of weight 5; TWO two fish apart (weight 1 each); turn even.
        state = PiranhasState(
            board(False, f0_0=fish(ONE, 3), f1_1=fish(ONE, 2), f5_5=S2, f9_9=S2), turn=2, firstUnion=ONE
        )
        result = state.result()
        assert result is not None
        self.assertEqual((result.winner, result.reason), (ONE, WinReason.BIGGER_SWARM))
        self.assertEqual(result.reason.value % "alice", "alice hat den größeren zusammenhängenden Schwarm")
        self.assertIsNone(state.toMove)
        self.assertEqual(state.legalMoves(), [])

    def test_notOverOnOddTurn(self) -> None:
        state = PiranhasState(board(False, f0_0=fish(ONE, 3), f1_1=fish(ONE, 2), f5_5=S2, f9_9=S2), turn=3)
        self.assertIsNone(state.result())

    def test_equalSwarmsFirstUnionDecides(self) -> None:
        state = PiranhasState(board(False, f0_0=S1, f9_9=S2), turn=4, firstUnion=TWO)
        result = state.result()
        assert result is not None
        self.assertEqual((result.winner, result.reason), (TWO, WinReason.FIRST_UNION))

    def test_blockedPlayerLoses(self) -> None:
        """ONE's two fish sit in corners walled in by squids and TWO's fish: ONE cannot move."""
        cells = board(False, f0_0=S1, f1_0=SQUID, f0_1=SQUID, f1_1=S2, f9_9=S1, f8_9=SQUID, f9_8=SQUID, f8_8=S2)
        state = PiranhasState(cells, turn=0)
        self.assertEqual(state.legalMoves(), [])
        result = state.result()
        assert result is not None
        self.assertEqual((result.winner, result.reason), (TWO, WinReason.BLOCKED))

    def test_roundLimit(self) -> None:
        cells = board(False, f0_0=S1, f5_0=S1, f0_5=S2, f9_9=fish(TWO, 3))
        state = PiranhasState(cells, turn=60)
        result = state.result()
        assert result is not None
        self.assertEqual((result.winner, result.reason), (TWO, WinReason.BIGGER_SWARM))
        even = PiranhasState(board(False, f0_0=S1, f5_0=S1, f0_5=S2, f9_9=S2), turn=60).result()
        assert even is not None
        self.assertEqual((even.winner, even.reason), (None, WinReason.TIE))

    def test_firstUnionRecorded(self) -> None:
        cells = board(False, f0_0=S1, f1_2=S1, f3_7=S2, f7_3=S2)
        state = PiranhasState(cells)
        self.assertIsNone(state.firstUnion)
        after = state.apply(PiranhaMove(0, 0, Direction.UP))  # to (0, 1), next to (1, 2)
        self.assertEqual(after.firstUnion, ONE)
        self.assertIsNone(after.result())  # odd turn: TWO still gets its move


class AgreementWithSochaTests(SynchronousTestCase):
    """Our move generator and move execution against ``socha._socha`` (the real client's rules)."""

    def test_possibleMovesAgreeOnThousandsOfPositions(self) -> None:
        from socha import _socha  # socha==4.3.9, in the test extra

        fieldTypes = [
            _socha.FieldType.Empty,
            _socha.FieldType.OneS,
            _socha.FieldType.OneM,
            _socha.FieldType.OneL,
            _socha.FieldType.TwoS,
            _socha.FieldType.TwoM,
            _socha.FieldType.TwoL,
            _socha.FieldType.Squid,
        ]
        directions = {
            Direction.UP: _socha.Direction.Up,
            Direction.UP_RIGHT: _socha.Direction.UpRight,
            Direction.RIGHT: _socha.Direction.Right,
            Direction.DOWN_RIGHT: _socha.Direction.DownRight,
            Direction.DOWN: _socha.Direction.Down,
            Direction.DOWN_LEFT: _socha.Direction.DownLeft,
            Direction.LEFT: _socha.Direction.Left,
            Direction.UP_LEFT: _socha.Direction.UpLeft,
        }
        back = {str(v): k for k, v in directions.items()}

        def theirs(state: PiranhasState) -> _socha.GameState:
            rows = [[fieldTypes[state.cells[y * SIZE + x]] for x in range(SIZE)] for y in range(SIZE)]
            return _socha.GameState(_socha.Board(rows), state.turn, None)

        def fieldAt(board: _socha.Board, x: int, y: int) -> _socha.FieldType:
            field = board.get_field(_socha.Coordinate(x, y))
            assert field is not None  # None only off the board
            return field

        def mapBack(board: _socha.Board) -> bytes:
            return bytes(fieldTypes.index(fieldAt(board, x, y)) for y in range(SIZE) for x in range(SIZE))

        positions = 0
        for seed in range(60):
            rng = random.Random(seed)
            state = PiranhasRules().initial(rng)
            while not state.isOver():
                ours = {(m.x, m.y, m.direction) for m in state.legalMoves()}
                reference = theirs(state)
                other = {(m.start.x, m.start.y, back[str(m.direction)]) for m in reference.possible_moves()}
                self.assertEqual(ours, other, f"seed {seed} turn {state.turn}")
                move = rng.choice(sorted(ours, key=lambda m: (m[0], m[1], m[2].name)))
                after = state.apply(PiranhaMove(*move))
                performed = reference.perform_move(
                    _socha.Move(_socha.Coordinate(move[0], move[1]), directions[move[2]])
                )
                self.assertEqual(mapBack(performed.board), after.cells, f"seed {seed} turn {state.turn}")
                state = after
                positions += 1
        self.assertGreaterEqual(positions, 3000)
