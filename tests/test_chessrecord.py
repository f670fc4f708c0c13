"""SAN with move numbers and PGN, from known games, read back with python-chess's own reader."""

from __future__ import annotations

import datetime

import chess
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.chessrecord import ChessRecord, emt, numberedSan, pgnText, readGames, resultOf


def recorded(*uci: str, start: chess.Board | None = None) -> ChessRecord:
    record = ChessRecord(start.copy() if start is not None else chess.Board())
    for index, move in enumerate(uci):
        record.play(move, seconds=index + 0.5)
    return record


class SanTests(SynchronousTestCase):
    def test_scholarsMateHasCheckAndMateMarks(self) -> None:
        record = recorded("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7")
        self.assertEqual(record.numbered(), "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#")

    def test_castlingBothWays(self) -> None:
        moves = ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "d7d6", "e1g1", "c8g4", "d2d3", "d8d7", "c1e3", "e8c8")
        self.assertEqual(
            recorded(*moves).numbered(), "1. e4 e5 2. Nf3 Nc6 3. Bc4 d6 4. O-O Bg4 5. d3 Qd7 6. Be3 O-O-O"
        )

    def test_enPassantAndPromotionWithCheck(self) -> None:
        moves = ("e2e4", "d7d5", "e4e5", "f7f5", "e5f6", "g7g6", "f6f7", "e8d7", "f7g8q")
        record = recorded(*moves)
        self.assertEqual(record.sans[4], "exf6")  # en passant: a capture on the empty f6
        self.assertEqual(record.sans[6], "f7+")
        self.assertEqual(record.sans[8], "fxg8=Q")
        self.assertEqual(record.numbered(), "1. e4 d5 2. e5 f5 3. exf6 g6 4. f7+ Kd7 5. fxg8=Q")

    def test_blackToMoveFirstIsNumberedWithDots(self) -> None:
        self.assertEqual(numberedSan(["e5", "Nf3", "Nc6"], whiteFirst=False, fullmove=7), "7... e5 8. Nf3 Nc6")
        start = chess.Board()
        start.push_uci("e2e4")
        self.assertEqual(recorded("e7e5", "g1f3", start=start).numbered(), "1... e5 2. Nf3")

    def test_anIllegalMoveIsRefusedAndNotRecorded(self) -> None:
        record = recorded("e2e4")
        self.assertRaises(ValueError, record.play, "e2e4")
        self.assertRaises(ValueError, record.play, "zz")
        self.assertEqual(record.sans, ["e4"])

    def test_theLastMoveWithItsNumberAndTakingItBack(self) -> None:
        record = recorded("e2e4")
        self.assertEqual(record.numberedLast(), "1. e4")
        record.play("e7e5")
        self.assertEqual(record.numberedLast(), "1... e5")
        record.undo()
        self.assertEqual((record.sans, record.board.fen()), (["e4"], recorded("e2e4").board.fen()))
        record.play("c7c5")
        self.assertEqual(record.numbered(), "1. e4 c5")

    def test_resultOfAnEndText(self) -> None:
        self.assertEqual(resultOf("Ganan las negras por jaque mate (0-1)"), "0-1")
        self.assertEqual(resultOf("Draw agreed (1/2-1/2)"), "1/2-1/2")
        self.assertEqual(resultOf("White left the game"), "*")
        self.assertEqual(resultOf(None), "*")

    def test_moveTimesAsComments(self) -> None:
        self.assertEqual(emt(3.24), "[%emt 0:00:03.2]")
        self.assertEqual(emt(3725.0), "[%emt 1:02:05.0]")


class PgnTests(SynchronousTestCase):
    def test_aWrittenGameReadsBackWithTheSameMovesResultAndTimes(self) -> None:
        record = recorded("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7")
        text = pgnText(
            record.game(
                "Ana", "Bo", result="1-0", termination="normal", site="127.0.0.1:22022", date=datetime.date(2026, 12, 2)
            )
        )
        [game] = readGames(text)
        self.assertEqual(game.errors, [])
        self.assertEqual(
            dict(game.headers),
            {
                "Event": "velhanet Gambit game",
                "Site": "127.0.0.1:22022",
                "Date": "2026.12.02",
                "Round": "-",
                "White": "Ana",
                "Black": "Bo",
                "Result": "1-0",
                "Termination": "normal",
            },
        )
        self.assertEqual(list(game.mainline_moves()), record.moves)
        self.assertEqual([node.emt() for node in game.mainline()], [i + 0.5 for i in range(7)])
        self.assertTrue(game.end().board().is_checkmate())

    def test_aGameFromAnotherPositionCarriesItsSetUp(self) -> None:
        start = chess.Board("8/P7/8/8/8/8/8/k6K w - - 0 60")
        record = recorded("a7a8q", "a1b2", start=start)
        self.assertEqual(record.numbered(), "60. a8=Q+ Kb2")
        [game] = readGames(pgnText(record.game("W", "B")))
        self.assertEqual(game.headers["FEN"], start.fen())
        self.assertEqual(game.headers["Result"], "*")
        self.assertEqual(list(game.mainline_moves()), record.moves)

    def test_manyGamesInOneFile(self) -> None:
        first, second = recorded("e2e4"), recorded("d2d4", "d7d5")
        games = readGames(pgnText(first.game("A", "B")) + "\n" + pgnText(second.game("C", "D", result="1/2-1/2")))
        self.assertEqual([g.headers["White"] for g in games], ["A", "C"])
        self.assertEqual([len(list(g.mainline_moves())) for g in games], [1, 2])
        self.assertEqual(games[1].headers["Result"], "1/2-1/2")
