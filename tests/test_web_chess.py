"""A chess game on the spectators' site: SAN with move numbers, its PGN, and the site in the server's language.

The real Gambit room (``RoomMachine``, recording players, a L{Clock}) reports
to a real hub; the pages come through a real ``twisted.web`` site on a
C{StringTransport} (L{tests.test_web.Browser}).
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from importlib import resources
from typing import Any

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from tests.test_gambit import RecordingPlayer
from tests.test_web import Browser
from velhanet import i18n
from velhanet.gambit.room import RoomCore, RoomMachine
from velhanet.gambit.texts import Texts
from velhanet.games.chessrecord import readGames
from velhanet.startup import StartupReport
from velhanet.watching import Score
from velhanet.web.hub import GameHub, GameRecord
from velhanet.web.service import webSite
from velhanet.web.texts import WORDS

TEXTS = {code: {key: i18n.language(code).gettext(text) for key, text in WORDS.items()} for code in ("en", "es")}
"""The site's words in English and in Spanish, by key."""

SCHOLARS_MATE = ("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7")
SCHOLARS_SAN = ["1. e4", "e5", "2. Bc4", "Nc6", "3. Qh5", "Nf6", "4. Qxf7#"]


class ChessSiteTestCase(SynchronousTestCase):
    language = "en"
    validate = True

    def setUp(self) -> None:
        self.clock = Clock()
        self.clock.advance(1_764_633_600)  # 2025-12-02 00:00 UTC
        self.hub = GameHub(self.clock, language=self.language)
        self.white, self.black = RecordingPlayer("ana"), RecordingPlayer("bo")
        core = RoomCore("e215", self.white, self.validate, lambda gameId: None, Texts(self.language), watcher=self.hub)
        self.room = RoomMachine(core)
        self.room.join(self.black)
        [self.record] = self.hub.games.values()

    def play(self, *moves: str, seconds: float = 1.5) -> None:
        for move in moves:
            self.clock.advance(seconds)
            mover = self.white if len(self.record.moves) % 2 == 0 else self.black
            self.room.move(mover, f"e215:{move}")

    def open(self, path: bytes) -> Browser:
        return Browser(self.hub, self.clock, path)

    def snapshot(self) -> dict[str, Any]:
        [(name, snapshot)] = self.open(b"/game/1/events").events()
        self.assertEqual(name, "snapshot")
        return dict(snapshot)

    def pgn(self) -> tuple[Browser, str]:
        page = self.open(b"/game/1.pgn")
        self.assertEqual(page.status(), 200)
        return page, page.body().decode("utf-8")


class SanTests(ChessSiteTestCase):
    def test_theSnapshotListsSanWithMoveNumbersAndTimes(self) -> None:
        self.play(*SCHOLARS_MATE)
        snapshot = self.snapshot()
        self.assertEqual([row[1] for row in snapshot["moveList"]], SCHOLARS_SAN)
        self.assertEqual(" ".join(row[1] for row in snapshot["moveList"]), "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7#")
        self.assertEqual([row[0] for row in snapshot["moveList"]], list(range(1, 8)), "one item per half-move")
        self.assertEqual({row[2] for row in snapshot["moveList"]}, {1.5}, "each move's time kept")
        self.assertTrue(snapshot["paired"])
        self.assertEqual([m.text for m in self.record.moves], list(SCHOLARS_MATE), "the room still reports UCI")

    def test_castlingAndCaptures(self) -> None:
        self.play("e2e4", "d7d5", "e4d5", "g8f6", "g1f3", "f6d5", "f1c4", "d5b6", "e1g1")
        self.assertEqual(self.record.rows()[-1][1], "5. O-O")
        self.play("b6c4", "d2d3", "c4b2", "c1b2", "h7h5", "b2g7")
        self.assertEqual(" ".join(row[1] for row in self.record.rows()[9:]), "Nxc4 6. d3 Nxb2 7. Bxb2 h5 8. Bxg7")

    def test_nothingIsTranslatedWhileNobodyWatches(self) -> None:
        self.play("e2e4", "e7e5")
        self.assertIsNone(self.record._san, "no spectator: no SAN, not even the chess record")
        spectator = self.open(b"/game/1/events")
        self.assertEqual(self.record._san.shown if self.record._san else None, ["1. e4", "e5"])
        self.play("g1f3", "b8c6")
        self.assertEqual([data["move"][1] for name, data in spectator.events() if name == "move"], ["2. Nf3", "Nc6"])
        self.assertEqual(len(self.record.san().record.moves), 4, "each move played once on the record's board")

    def test_aFinishedGameIsSteppedThroughInSan(self) -> None:
        """The hub keeps a finished game: its page steps through it, the list in SAN, each board drawn when asked."""
        self.play("f2f3", "e7e5")
        spectator = self.open(b"/game/1/events")
        self.assertFalse(spectator.events()[0][1]["steps"])
        self.assertEqual(self.open(b"/game/1/board/0").status(), 404, "a game still played has no steps")
        self.play("g2g4", "d8h4")
        self.assertEqual(spectator.events()[-1][0], "end")
        self.assertTrue(spectator.events()[-1][1]["steps"])
        snapshot = self.snapshot()
        self.assertTrue(snapshot["steps"])
        self.assertEqual([row[1] for row in snapshot["moveList"]], ["1. f3", "e5", "2. g4", "Qh4#"])
        boards = {n: self.open(f"/game/1/board/{n}".encode()) for n in (0, 2, 4)}
        self.assertEqual({n: page.status() for n, page in boards.items()}, {0: 200, 2: 200, 4: 200})
        self.assertNotIn(b'class="check"', boards[2].body())
        self.assertIn(b'class="check"', boards[4].body(), "the mate, as the live board showed it")
        self.assertIn(b"lastmove", boards[2].body())
        self.assertNotIn(b"lastmove", boards[0].body(), "the start position: no last move")
        self.assertEqual(self.open(b"/game/1/board/5").status(), 404)

    def test_aStepThroughRecordKeepsOneItemPerHalfMove(self) -> None:
        """A replayed chess game (boards after each move) lists SAN, numbered by half-move for the step bar."""
        record = self.hub.replayed("gambit", "chess", ["ana", "bo"], [("e2e4", 1.0), ("e7e5", None)], "", str)
        record.chess = True
        snapshot = self.open(f"/game/{record.gameId}/events".encode()).events()[0][1]
        self.assertEqual(snapshot["moveList"], [[1, "1. e4", 1.0], [2, "e5", None]])
        self.assertTrue(snapshot["steps"])


class UnvalidatedTests(ChessSiteTestCase):
    validate = False

    def test_movesThatAreNotLegalAreShownAsTheyCame(self) -> None:
        self.play("e2e4", "e7e5", "e2e4", "g1f3", "zz", "")
        self.assertEqual(
            [row[1] for row in self.snapshot()["moveList"]], ["1. e4", "e5", "2. e2e4", "g1f3", "3. zz", ""]
        )
        self.room.leave(self.white)
        [game] = readGames(self.pgn()[1])
        self.assertEqual([move.uci() for move in game.mainline_moves()], ["e2e4", "e7e5"], "the legal ones")
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("*", "rules infraction"))


class PgnTests(ChessSiteTestCase):
    def test_aFinishedGameReadsBackWithItsMovesAndResult(self) -> None:
        self.play("f2f3", "e7e5", "g2g4", "d8h4")
        self.assertEqual(self.record.result, "Black wins by checkmate (0-1)")
        page, text = self.pgn()
        head = page.transport.value().partition(b"\r\n\r\n")[0].lower()
        self.assertIn(b"content-type: application/x-chess-pgn; charset=utf-8", head)
        self.assertIn(b'content-disposition: attachment; filename="velhanet-game-1.pgn"', head)
        [game] = readGames(text)
        self.assertEqual(game.errors, [])
        self.assertEqual([move.uci() for move in game.mainline_moves()], [m.text for m in self.record.moves])
        self.assertEqual(
            {key: game.headers[key] for key in ("Event", "Site", "Date", "Round", "White", "Black", "Result")},
            {
                "Event": "velhanet Gambit game",
                "Site": "localhost",
                "Date": "2025.12.02",
                "Round": "-",
                "White": "ana",
                "Black": "bo",
                "Result": "0-1",
            },
        )
        self.assertEqual(game.headers["Termination"], "normal")
        self.assertEqual([node.comment for node in game.mainline()], ["[%emt 0:00:01.5]"] * 4)
        self.assertIn("1. f3 { [%emt 0:00:01.5] } 1... e5", text)

    def test_whilePlayingTheResultIsOpen(self) -> None:
        self.play("e2e4")
        [game] = readGames(self.pgn()[1])
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("*", "unterminated"))
        self.assertEqual(len(list(game.mainline_moves())), 1)

    def test_howItEnded(self) -> None:
        """A player who leaves abandons: the room scores the game for the other one."""
        self.play("e2e4")
        self.room.leave(self.black)
        [game] = readGames(self.pgn()[1])
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("1-0", "abandoned"))

    def test_aResignationNamesTheWinner(self) -> None:
        self.play("e2e4")
        self.room.end(self.white, "")  # END without a text: the server says the opponent won
        [game] = readGames(self.pgn()[1])
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("0-1", "normal"))

    def test_aRoomThatReportsItsScoreSaysTheResult(self) -> None:
        """A room may report its end in PGN's words with the text (``ended(text, score)``): the PGN takes them."""
        self.play("e2e4")
        self.record.ended("El jugador bo ha abandonado la partida", Score("1-0", "abandoned"))
        [game] = readGames(self.pgn()[1])
        self.assertEqual((game.headers["Result"], game.headers["Termination"]), ("1-0", "abandoned"))

    def test_onlyAChessGameHasAPgn(self) -> None:
        self.hub.startedDrawn("gobang", "gobang 9x9", ["black", "white"], str)
        for path in (b"/game/2.pgn", b"/game/3.pgn", b"/game/1.pgn/x", b"/game/x.pgn"):
            self.assertEqual(self.open(path).status(), 404, path)


class _Words(HTMLParser):
    """What a person reads on a page: its text, its titles and labels, and the words it gives its script."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_data(self, data: str) -> None:
        self.found.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("title", "aria-label", "alt") and value:
                self.found.append(value)
            if name == "data-words" and value:
                self.found.extend(json.loads(value).values())


def wordsOf(page: bytes) -> str:
    parser = _Words()
    parser.feed(page.decode("utf-8"))
    return "\n".join(parser.found)


class LanguageTests(ChessSiteTestCase):
    language = "es"

    def assertSpeaks(self, language: str, other: str, words: str) -> None:
        foreign = {text for key, text in TEXTS[other].items() if text != TEXTS[language][key]}
        left = sorted(text for text in foreign if re.search(rf"(?<!\w){re.escape(text)}(?!\w)", words))
        self.assertEqual(left, [], f"{other} words on a {language} page")

    def test_everyPageSpeaksTheServersLanguage(self) -> None:
        self.play("f2f3", "e7e5", "g2g4", "d8h4")
        pages = [self.open(path).body() for path in (b"/", b"/game/1")]
        for page in pages:
            self.assertIn(b'<html lang="es">', page)
            self.assertSpeaks("es", "en", wordsOf(page))
        self.assertIn("Jugadas", wordsOf(pages[1]))
        self.assertIn("en directo", wordsOf(pages[1]), "the script's words come with the page")
        self.assertEqual(self.snapshot()["result"], "Ganan las negras por jaque mate (0-1)", "the room's words")

    def test_thePlainAnswersToo(self) -> None:
        self.assertEqual(
            self.open(b"/game/7").body().decode(), "404 Not Found: no hay ninguna partida '7' en este servidor\n"
        )
        self.assertEqual(self.open(b"/nope").body().decode(), "404 Not Found: no existe esa página\n")

    def test_andTheOtherWayRound(self) -> None:
        hub = GameHub(self.clock, language="en")
        hub.startedDrawn("gambit", "chess", ["ana", "bo"], str)
        for path in (b"/", b"/game/1"):
            self.assertSpeaks("en", "es", wordsOf(Browser(hub, self.clock, path).body()))

    def test_theScriptHasNoWordOfItsOwn(self) -> None:
        script = resources.files("velhanet.web").joinpath("static", "watch.js").read_text(encoding="utf-8")
        # what is no word: comments, the keys it asks for, ids, classes and states, its buttons' ids
        for code in (
            r"//.*",
            r'say\("[^"]*"',
            r'getElementById\("[^"]*"\)',
            r'classList\.\w+\("[^"]*"',
            r'(===|dataset\.state =) "[^"]*"',
            r'\[("[a-z]+", )+"[a-z]+"\]',
        ):
            script = re.sub(code, "", script)
        literals = set(re.findall(r'"([^"\\]*)"', script))
        said = {text for table in TEXTS.values() for text in table.values() if len(text) > 2}
        self.assertEqual(sorted(said & literals), [])

    def test_theTemplatesAreFilledAndEscaped(self) -> None:
        page = self.open(b"/game/1").body().decode("utf-8")
        self.assertNotIn("$", page)
        self.assertIn(html.escape("← todas las partidas"), page)

    def test_theSiteSpeaksTheLanguageOfTheServersOptions(self) -> None:
        from velhanet.gambit import tap as gambitTap
        from velhanet.gobang import tap as gobangTap

        def siteOf(options: Any) -> GameRecord | Any:
            hub, web = webSite(options, self.clock, StartupReport(options, self.clock))
            assert isinstance(hub, GameHub) and web is not None
            return hub.language

        self.addCleanup(i18n.use, None)  # parsing --language sets the process's language
        gambit = gambitTap.Options()
        gambit.parseOptions(["--web", "0"])
        self.assertIsNone(siteOf(gambit), "without --language: each browser's (the wire's Spanish is not the site's)")
        gambit = gambitTap.Options()
        gambit.parseOptions(["--web", "0", "--language", "en"])
        self.assertEqual(siteOf(gambit), "en")
        gobang = gobangTap.Options()
        gobang.parseOptions(["--web", "0", "--fifo-dir", self.mktemp()])
        self.assertIsNone(siteOf(gobang))
        gobang = gobangTap.Options()
        gobang.parseOptions(["--web", "0", "--fifo-dir", self.mktemp(), "--language", "de"])
        self.assertEqual(siteOf(gobang), "de", "every family's --language")
