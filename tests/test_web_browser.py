"""``--web`` seen from a real headless Chromium: a real server, velhanet's bots playing, the DOM checked.

Skipped only when Chromium is not installed (``.ci/run`` installs Debian's
``chromium``). Each test opens the list before the game exists, so what it
sees arrives by the event stream, then follows the game's page until the
result is shown.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.chromium import CHROMIUM, NO_CHROMIUM, Chromium, Page
from tests.processes import Child, freePort, python, twistd
from tests.test_velha_service import freeUdpPort

LIST_ROW = "document.querySelector('#games tbody tr')"
MOVES = "Number(document.getElementById('moves').dataset.count || 0)"
BOARD = "document.querySelector('#board svg') && document.querySelector('#board svg').outerHTML"
RESULT = "document.getElementById('result').textContent"


class BrowserTestCase(SynchronousTestCase):
    timeout = 180
    browser: Chromium
    game: Page

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)
        self.tmp = Path(self.mktemp()).resolve()
        self.tmp.mkdir()
        self.webPort = freePort()
        self.base = f"http://127.0.0.1:{self.webPort}"

    def startServer(self, *arguments: str) -> Child:
        server = Child(self, twistd(*arguments, "--web", str(self.webPort), log=self.tmp / "server.log"))
        server.waitForPort(self.webPort)
        return server

    def watchAGame(self, listPage: Page, family: str, players: tuple[str, str]) -> None:
        """The list shows the game; its page's board follows the moves; the result appears, on both pages."""
        row = listPage.waitFor(LIST_ROW, f"{LIST_ROW}.textContent", 60)
        self.assertIn(family, row)
        for name in players:
            self.assertIn(name, row)
        game = self.browser.open(f"{self.base}/game/1")
        seen, early = game.waitFor(f"{MOVES} >= 1", f"[{MOVES}, {BOARD}]", 60)
        self.assertEqual(game.evaluate(RESULT), "", "the bots play slowly enough to be watched")
        later = game.waitFor(f"Number(document.getElementById('board').dataset.moves) > {seen}", BOARD, 60)
        self.assertTrue(early and later)
        self.assertNotEqual(early, later, "the board did not follow the moves")
        result = game.waitFor(f"{RESULT}.length > 0", RESULT, 120)
        self.assertTrue(result.strip())
        total = game.evaluate(MOVES)
        self.assertEqual(game.evaluate("document.querySelectorAll('#moves li').length"), total)
        over = listPage.waitFor(f"{LIST_ROW}.className === 'over'", f"{LIST_ROW}.textContent", 30)
        self.assertIn(str(total), over)
        self.game = game


REPLAY_SITE = """
from twisted.internet import reactor
from velhanet.web.hub import GameHub
from velhanet.web.site import spectatorSite

def board(n):
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 20"><text x="5" y="15">n={n}</text></svg>'

hub = GameHub(reactor)
hub.replayed("replay", "test", ["one", "two"], [("a1", 1.0), ("b2", None), ("c3", 0.5), ("d4", 2.0)], "one wins", board)
print(reactor.listenTCP(0, spectatorSite(hub), interface="127.0.0.1").getHost().port, flush=True)
reactor.run()
"""
"""A site over a hub holding one replayed game of four moves whose boards say which position they show."""

STEP_AT = "document.getElementById('step-at').textContent"
CURRENT = "[...document.querySelectorAll('#moves li.current')].map((li) => li.value)"


class ReplayBrowserTests(SynchronousTestCase):
    timeout = 60

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)

    def showing(self, page: Page, n: int) -> list[Any]:
        """Once the board after ``n`` moves is shown: what the bar says and which move is highlighted."""
        return page.waitFor(
            f"document.querySelector('#board svg text').textContent === 'n={n}' && {STEP_AT} === 'move {n} of 4'",
            f"[Number(document.getElementById('board').dataset.moves), {CURRENT}]",
        )

    def test_stepThroughAReplayedGame(self) -> None:
        site = Child(self, python("-c", REPLAY_SITE))
        port = site.readLine().strip()
        self.assertTrue(port.isdigit(), f"the replay site did not start: {port!r}")
        page = Chromium(self).open(f"http://127.0.0.1:{port}/game/1")
        self.assertEqual(self.showing(page, 4), [4, [4]], "the final position first")
        self.assertFalse(page.evaluate("document.getElementById('steps').hidden"))
        self.assertEqual(page.evaluate("document.getElementById('status').textContent"), "replay")
        times = "[...document.querySelectorAll('#moves li')].map((li) => li.querySelectorAll('.time').length)"
        self.assertEqual(page.evaluate(times), [1, 0, 1, 1], "no time shown where the log has none")
        page.evaluate("document.getElementById('step-previous').click()")
        self.assertEqual(self.showing(page, 3), [3, [3]])
        page.evaluate("document.querySelectorAll('#moves li')[1].click()")
        self.assertEqual(self.showing(page, 2), [2, [2]])
        page.browser.call("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Home", "code": "Home"}, page.session)
        self.assertEqual(self.showing(page, 0), [0, []], "the start position: no move highlighted")
        self.assertTrue(page.evaluate("document.getElementById('step-previous').disabled"))
        page.browser.call(
            "Input.dispatchKeyEvent", {"type": "keyDown", "key": "ArrowRight", "code": "ArrowRight"}, page.session
        )
        self.assertEqual(self.showing(page, 1), [1, [1]])
        page.evaluate("document.getElementById('step-play').click()")
        self.assertEqual(self.showing(page, 4), [4, [4]], "played to the end")
        stopped = "document.getElementById('step-play').textContent"
        self.assertEqual(page.waitFor(f"{stopped} === 'play'", stopped), "play", "and stopped there")
        site.checkAlive()


CHESS_SITE = """
import chess
from twisted.internet import reactor
from velhanet.web.hub import GameHub
from velhanet.web.site import spectatorSite

hub = GameHub(reactor, language="es")
board = chess.Board()
game = hub.started("gambit", "chess", ["ana", "bo"], lambda: board)
for move in ("e2e4", "e7e5", "g1f3"):
    board.push_uci(move)
    game.moved(move)
mated = chess.Board()
over = hub.started("gambit", "chess", ["ana", "bo"], lambda: mated)
for move in ("f2f3", "e7e5", "g2g4", "d8h4"):
    mated.push_uci(move)
    over.moved(move)
over.ended("Ganan las negras por jaque mate (0-1)")
print(reactor.listenTCP(0, spectatorSite(hub), interface="127.0.0.1").getHost().port, flush=True)
reactor.run()
"""
"""A site in Spanish over a hub holding a chess game of three moves, as the Gambit room reports them (UCI),
and a finished one (the fool's mate)."""


class ChessPageBrowserTests(SynchronousTestCase):
    timeout = 60

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)

    def test_sanWithMoveNumbersAndThePgnLink(self) -> None:
        site = Child(self, python("-c", CHESS_SITE))
        port = site.readLine().strip()
        self.assertTrue(port.isdigit(), f"the chess site did not start: {port!r}")
        page = Chromium(self).open(f"http://127.0.0.1:{port}/game/1")
        items = "[...document.querySelectorAll('#moves li')]"
        texts = page.waitFor(f"{MOVES} === 3", f"{items}.map((li) => li.firstChild.textContent)")
        self.assertEqual(texts, ["1. e4", "e5", "2. Nf3"])
        self.assertEqual(page.evaluate(f"{items}.map((li) => li.querySelectorAll('.time').length)"), [1, 1, 1])
        self.assertTrue(page.evaluate(f"{items}[0].offsetTop === {items}[1].offsetTop"), "1. e4 e5 on one line")
        self.assertFalse(page.evaluate(f"{items}[1].offsetTop === {items}[2].offsetTop"), "2. Nf3 on the next")
        link = "document.getElementById('pgn-link')"
        self.assertFalse(page.evaluate("document.getElementById('pgn').hidden"))
        self.assertEqual(page.evaluate(f"{link}.textContent"), "PGN")
        self.assertEqual(page.evaluate(f"{link}.getAttribute('href')"), "/game/1.pgn")
        pgn = page.evaluate(f"fetch({link}.href).then((r) => r.text())")
        self.assertIn("1. e4 { [%emt", pgn)
        self.assertIn('[Result "*"]', pgn)
        # the page in the server's language, the script's words too
        self.assertEqual(page.waitFor("document.getElementById('status').textContent === 'en directo'", "1"), 1)
        self.assertEqual(page.evaluate("document.querySelector('h2').textContent"), "Jugadas")
        self.assertIn("(ajedrez)", page.evaluate("document.getElementById('title').textContent"))
        self.assertTrue(page.evaluate("document.getElementById('steps').hidden"), "a game still played: no step bar")
        # a finished game: stepped through on its SAN list
        over = page.browser.open(f"http://127.0.0.1:{port}/game/2")
        at = "document.getElementById('step-at').textContent"
        self.assertEqual(
            over.waitFor(f"{at} === 'jugada 4 de 4'", f"{items}.map((li) => li.firstChild.textContent)"),
            ["1. f3", "e5", "2. g4", "Qh4#"],
        )
        over.evaluate(f"{items}[1].click()")
        board = "Number(document.getElementById('board').dataset.moves)"
        self.assertEqual(over.waitFor(f"{board} === 2 && {at} === 'jugada 2 de 4'", board), 2)
        self.assertEqual(
            over.evaluate("document.getElementById('result').textContent"), "Ganan las negras por jaque mate (0-1)"
        )
        site.checkAlive()


class GambitBrowserTests(BrowserTestCase):
    def test_watchTwoBotsPlay(self) -> None:
        port = freePort()
        listen = ("--listen", f"tcp:{port}:interface=127.0.0.1")
        self.startServer("gambit-server", *listen, "--language", "es").waitForPort(port)
        self.browser = Chromium(self)
        listPage = self.browser.open(self.base + "/")
        # the server's --language on the site too, whatever the browser asks for
        self.assertEqual(listPage.waitFor("document.getElementById('status').textContent === 'en directo'", "1"), 1)
        client = python("-c", "from velhanet.gambit.client import main; main()", "--port", str(port), "--bot")
        alice = Child(self, [*client, "--bot-delay", "0.2", "--user", "alice", "--seed", "1"])
        first = alice.readLine()
        self.assertRegex(first, r"^Game [0-9a-f]{4} created")
        bob = Child(self, [*client, "--bot-delay", "0.2", "--user", "bob", "--seed", "2", "--game", first.split()[1]])
        self.watchAGame(listPage, "gambit", ("alice", "bob"))
        self.assertIn("<svg", self.game.evaluate(BOARD))
        first = self.game.evaluate("document.querySelector('#moves li').firstChild.textContent")
        self.assertRegex(first, r"^1\. ([KQRBN]?[a-h]?[1-8]?x?[a-h][1-8]|O-O)", "SAN with its move number")
        for player in (alice, bob):
            self.assertEqual(player.wait(30), 0)

    def test_unknownGameIs404InTheBrowser(self) -> None:
        port = freePort()
        self.startServer("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1")
        self.browser = Chromium(self)
        page = self.browser.open(self.base + "/game/7")
        self.assertIn(
            "404 Not Found", page.waitFor("document.body && document.body.textContent", "document.body.textContent")
        )


class GobangBrowserTests(BrowserTestCase):
    def test_watchTwoBotsPlay(self) -> None:
        fifos = self.tmp / "fifos"
        fifos.mkdir()
        server = self.startServer("gobang-server", "--fifo-dir", str(fifos), "--size", "9")
        self.browser = Chromium(self)
        listPage = self.browser.open(self.base + "/")
        pid = str(server.process.pid)
        client = python("-c", "from velhanet.gobang.client import main; main()", "--fifo-dir", str(fifos), "--bot")
        black = Child(self, [*client, "-b", pid, "--bot-delay", "0.2", "--seed", "1"])
        white = Child(self, [*client, "-w", pid, "--bot-delay", "0.2", "--seed", "2"])
        self.watchAGame(listPage, "gobang", ("black (pid", "white (pid"))
        self.assertIn('class="stone', self.game.evaluate(BOARD))
        for player in (black, white):
            self.assertEqual(player.wait(30), 0)


class SochaBrowserTests(BrowserTestCase):
    def test_watchTwoExamplePlayersPlay(self) -> None:
        port = freePort()
        self.startServer("socha-server", "--listen", f"tcp:{port}:interface=127.0.0.1").waitForPort(port)
        self.browser = Chromium(self)
        listPage = self.browser.open(self.base + "/")
        player = python("-m", "velhanet.socha.example", "--port", str(port))
        one = Child(self, [*player, "--seed", "1"])
        two = Child(self, [*player, "--seed", "2"])
        self.watchAGame(listPage, "swc_2026_piranhas", ("ONE", "TWO"))
        self.assertIn('class="fish team0"', self.game.evaluate(BOARD))
        for client in (one, two):
            self.assertEqual(client.wait(30), 0)


class VelhaBrowserTests(BrowserTestCase):
    def test_watchASeriesBetweenTwoPeers(self) -> None:
        """Two ``--bot`` peers on loopback; Ana serves the site. Each game of the best-of-5 is its own entry,
        and a finished game keeps its own final board when the next one is played."""
        ana, bo = "127.0.0.63", "127.0.0.64"
        port = freeUdpPort(ana, bo)
        common = ["--bot", "--move-delay", "0.3", "--port", str(port), "--log-file", "-"]
        self.startServer("velha", "--nick", "Ana", "--interface", ana, "--announce", bo, *common)
        self.browser = Chromium(self)
        listPage = self.browser.open(self.base + "/")
        bob = twistd("velha", "--nick", "Bo", "--interface", bo, "--announce", ana, "--invite", "Ana", *common)
        log = (self.tmp / "bo.log").open("w")
        self.addCleanup(log.close)
        Child(self, bob, output=log)
        first = "document.getElementById('game-1')"
        row = listPage.waitFor(first, f"{first}.textContent", 60)
        for word in ("velha", "tic-tac-toe, game 1", "Ana", "Bo"):
            self.assertIn(word, row)
        game = self.browser.open(f"{self.base}/game/1")
        self.assertIn('class="stone', game.waitFor("document.querySelector('#board svg .stone')", BOARD, 60))
        result = game.waitFor(f"{RESULT}.length > 0", RESULT, 60)
        final = game.evaluate(BOARD)
        self.assertEqual(listPage.waitFor(f"{first}.className === 'over'", f"{first}.className", 30), "over")
        second = "document.getElementById('game-2')"
        self.assertIn("game 2", listPage.waitFor(second, f"{second}.textContent", 60))
        again = self.browser.open(f"{self.base}/game/1")
        self.assertEqual(again.waitFor(f"{RESULT}.length > 0", RESULT, 30), result)
        self.assertEqual(again.evaluate(BOARD), final, "game 1 still shows its own final board")
