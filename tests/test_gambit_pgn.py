"""PGN files of Gambit games: the server's archive (``--pgn-dir``) and the client's scoresheet (``--pgn``).

Every file written is read back with python-chess's own reader: the same moves, the same result.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from pathlib import Path

import chess
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.gambit.pgnarchive import PgnArchive
from velhanet.gambit.room import Room, RoomCore, RoomMachine
from velhanet.gambit.scoresheet import Scoresheet
from velhanet.gambit.texts import Texts
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessrecord import readGames
from velhanet.watching import NO_WATCHER, GameWatcher, Score, bothWatchers

from .test_gambit import RecordingPlayer

FOOLS_MATE = ("f2f3", "e7e5", "g2g4", "d8h4")


class Recorded:
    """A watcher that keeps what it was told, to check that two watchers both hear everything."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: object, hidden: bool = False
    ) -> Recorded:
        self.calls.append(("started", family, gameType, tuple(players)))
        return self

    def moved(self, text: str) -> None:
        self.calls.append(("moved", text))

    def ended(self, result: str, score: Score | None = None) -> None:
        self.calls.append(("ended", result, score))


class ArchiveTests(SynchronousTestCase):
    """A real room machine reports to the archive; each way a game ends gives a file that reads back."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.directory = Path(self.mktemp())
        self.directory.mkdir()
        self.archive = PgnArchive(self.directory, self.clock, site="test", today=lambda: datetime.date(2026, 12, 2))
        self.watcher: GameWatcher = self.archive

    def playing(self, validate: bool = True, language: str = "es") -> tuple[Room, RecordingPlayer, RecordingPlayer]:
        white, black = RecordingPlayer("alice"), RecordingPlayer("bob")
        core = RoomCore("e215", white, validate, lambda gameId: None, Texts(language), watcher=self.watcher)
        room = RoomMachine(core)
        room.join(black)
        return room, white, black

    def play(self, room: Room, white: RecordingPlayer, black: RecordingPlayer, *moves: str) -> None:
        for index, move in enumerate(moves):
            self.clock.advance(1.5)
            room.move(white if index % 2 == 0 else black, f"e215:{move}")

    def onlyGame(self) -> chess.pgn.Game:
        [path] = sorted(self.directory.iterdir())
        self.assertEqual(path.name, "2026-12-02-0001-alice-bob.pgn")
        [game] = readGames(path.read_text(encoding="utf-8"))
        self.assertEqual(game.errors, [])
        return game

    def test_aMateIsWrittenWithItsMovesTimesAndResult(self) -> None:
        room, white, black = self.playing()
        self.play(room, white, black, *FOOLS_MATE)
        game = self.onlyGame()
        self.assertEqual([m.uci() for m in game.mainline_moves()], list(FOOLS_MATE))
        self.assertEqual(
            {tag: game.headers[tag] for tag in ("White", "Black", "Result", "Termination", "Site", "Date")},
            {
                "White": "alice",
                "Black": "bob",
                "Result": "0-1",
                "Termination": "normal",
                "Site": "test",
                "Date": "2026.12.02",
            },
        )
        self.assertEqual([node.emt() for node in game.mainline()], [1.5] * 4)

    def test_anEndFromAPlayerGivesTheGameToTheOther(self) -> None:
        room, white, black = self.playing()
        self.play(room, white, black, "e2e4", "e7e5")
        room.end(white, "")  # the original client's resignation
        game = self.onlyGame()
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("0-1", "normal"))
        self.assertEqual(len(list(game.mainline_moves())), 2)

    def test_aPlayerWhoLeavesAbandons(self) -> None:
        room, white, black = self.playing()
        self.play(room, white, black, "e2e4")
        room.leave(black)
        game = self.onlyGame()
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("1-0", "abandoned"))

    def test_anAgreedDraw(self) -> None:
        room, white, black = self.playing(language="en")
        self.play(room, white, black, "e2e4", "e7e5")
        room.draw(white, "")
        room.draw(black, "")
        self.assertEqual(self.onlyGame().headers["Result"], "1/2-1/2")

    def test_withoutValidationTheFileStopsAtTheFirstMoveThatIsNotChess(self) -> None:
        room, white, black = self.playing(validate=False)
        self.play(room, white, black, "e2e4", "e2e4", "d2d4")
        room.end(white, "")
        game = self.onlyGame()
        self.assertEqual([m.uci() for m in game.mainline_moves()], ["e2e4"])
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("*", "unterminated"))
        self.assertIn("'e2e4', which is not legal here", game.end().comment + game.comment)

    def test_eachGameItsOwnFileAndTheWebHearsTheSameGames(self) -> None:
        web = Recorded()
        self.watcher = bothWatchers(web, self.archive)
        for _ in range(2):
            room, white, black = self.playing()
            self.play(room, white, black, *FOOLS_MATE)
        self.assertEqual(len(list(self.directory.iterdir())), 2)
        self.assertEqual([call[0] for call in web.calls].count("moved"), 8)
        self.assertEqual(web.calls[-1], ("ended", "Ganan las negras por jaque mate (0-1)", Score("0-1")))

    def test_noWatcherOnEitherSideCostsNothing(self) -> None:
        archive = self.archive
        self.assertIs(bothWatchers(NO_WATCHER, archive), archive)
        self.assertIs(bothWatchers(archive, NO_WATCHER), archive)

    def test_anUnwritableDirectoryIsLoggedAndTheGameGoesOn(self) -> None:
        self.archive.directory = self.directory / "gone"
        room, white, black = self.playing()
        self.play(room, white, black, *FOOLS_MATE)
        self.assertEqual(list(self.directory.iterdir()), [])
        self.assertIn(("send", Message(Cmd.END, "", "Ganan las negras por jaque mate (0-1)")), white.taken())


class ScoresheetTests(SynchronousTestCase):
    def sheet(self) -> tuple[Scoresheet, list[str], list[str]]:
        kept: list[str] = []
        clock = Clock()
        sheet = Scoresheet(clock.seconds, keep=kept.append, site="127.0.0.1:22022")
        sheet.begin()
        board = chess.Board()
        for uci in FOOLS_MATE[:2]:
            clock.advance(2)
            sheet.play(board.parse_uci(uci))
            board.push_uci(uci)
        return sheet, kept, []

    def test_theResultComesFromTheBoardTheServerOrWhoItSaysWon(self) -> None:
        sheet, _, _ = self.sheet()
        self.assertEqual(sheet.resultFrom("Ganan las blancas por abandono (1-0)", "alice", "bob", chess.WHITE), "1-0")
        self.assertEqual(sheet.resultFrom("bob ha ganado la partida", "alice", "bob", chess.WHITE), "0-1")
        self.assertEqual(sheet.resultFrom("bob ha ganado la partida", "alice", "bob", chess.BLACK), "1-0")
        left = "El jugador bob ha abandonado la partida"
        self.assertEqual(sheet.resultFrom(left, "alice", "bob", chess.WHITE), "1-0")
        self.assertEqual(sheet.resultFrom("alice ha ganado la partida", "alice", "alice", chess.WHITE), "*")
        self.assertEqual(sheet.resultFrom("something else", "alice", "bob", chess.WHITE), "*")

    def test_theGameIsSaidAndKeptOnce(self) -> None:
        sheet, kept, said = self.sheet()
        sheet.finish(said.append, "bob", "alice", chess.BLACK, "1-0", termination="abandoned")
        sheet.finish(said.append, "bob", "alice", chess.BLACK, "0-1")
        self.assertEqual(said, ["The game: 1. f3 e5 1-0"])
        [game] = readGames(kept[0])
        self.assertEqual((game.headers["White"], game.headers["Black"]), ("alice", "bob"))
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("1-0", "abandoned"))
        self.assertEqual([node.emt() for node in game.mainline()], [2.0, 2.0])
