"""The spectators' site in the browser's language: ``Accept-Language``, or the service's ``--language``.

A page speaks the service's ``--language`` when it was given, else the
language the browser's ``Accept-Language`` prefers among velhanet's, else
the process's (its environment), else English; it says which
(``Content-Language``, and ``Vary: Accept-Language`` when the browser
chose). A Gambit game's end is said in the page's language whatever the
server's wire speaks. In memory first (a real ``twisted.web`` site on a
C{StringTransport}), then in a real headless Chromium whose language is
German.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

import tests.chromium
from tests.chromium import CHROMIUM, NO_CHROMIUM, Chromium
from tests.languages import speaking
from tests.processes import Child, freePort, python, twistd
from tests.test_gambit import FOOLS_MATE, RecordingPlayer
from tests.test_web import Browser
from velhanet import i18n
from velhanet.gambit.room import RoomCore, RoomMachine
from velhanet.gambit.texts import Texts
from velhanet.startup import StartupReport
from velhanet.web.hub import GameHub
from velhanet.web.service import webSite
from velhanet.web.site import spectatorSite

GERMAN = "de-DE,de;q=0.9,en;q=0.8"


class AskingBrowser(Browser):
    """L{Browser}'s one request, with the browser's ``Accept-Language``."""

    def __init__(self, hub: GameHub, clock: Clock, path: bytes, acceptLanguage: str | None = None) -> None:
        site = spectatorSite(hub)
        site.timeOut = None
        site.reactor = clock
        channel: Any = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
        self.channel = channel
        self.transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 40000))
        channel.makeConnection(self.transport)
        asked = f"Accept-Language: {acceptLanguage}\r\n".encode() if acceptLanguage else b""
        channel.dataReceived(b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\n" + asked + b"\r\n")

    def headers(self) -> dict[str, str]:
        head = self.transport.value().partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
        return {name.lower(): value for name, _, value in (line.partition(": ") for line in head)}

    def text(self) -> str:
        return self.body().decode("utf-8")


class PageLanguageTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.hub = GameHub(self.clock)
        self.hub.startedDrawn("gambit", "chess", ["ana", "bo"], str)

    def ask(self, path: bytes, acceptLanguage: str | None = None, hub: GameHub | None = None) -> AskingBrowser:
        return AskingBrowser(hub or self.hub, self.clock, path, acceptLanguage)

    def test_acceptLanguageDeIsGerman(self) -> None:
        listing = self.ask(b"/", GERMAN)
        self.assertEqual(listing.status(), 200)
        page = listing.text()
        self.assertIn('<html lang="de">', page)
        self.assertIn("<title>velhanet: Spiele</title>", page)
        self.assertIn("<h1>Spiele auf diesem Server</h1>", page)
        self.assertIn("<th>Spieler</th><th>Züge</th><th>Stand</th><th>Beginn</th>", page)
        self.assertIn("Noch kein Spiel. Diese Seite aktualisiert sich selbst.", page)
        self.assertIn("&quot;reconnecting&quot;: &quot;verbinde neu…&quot;", page, "the script's words follow the page")
        self.assertIn("&quot;chess&quot;: &quot;Schach&quot;", page)
        self.assertEqual(
            {key: listing.headers()[key] for key in ("content-language", "vary")},
            {"content-language": "de", "vary": "Accept-Language"},
        )
        game = self.ask(b"/game/1", "de")
        self.assertIn("<h2>Züge</h2>", game.text())
        self.assertIn('title="nächster Zug (→)" aria-label="nächster Zug"', game.text())
        self.assertEqual(game.headers()["content-language"], "de")

    def test_brazilianPortuguese(self) -> None:
        page = self.ask(b"/", "pt-BR,pt;q=0.9")
        self.assertIn('<html lang="pt-BR">', page.text())
        self.assertIn("<h1>Partidas neste servidor</h1>", page.text())
        self.assertEqual(page.headers()["content-language"], "pt-BR")

    def test_thePlainAnswersToo(self) -> None:
        missing = self.ask(b"/game/7", GERMAN)
        self.assertEqual(missing.status(), 404)
        self.assertEqual(missing.text(), "404 Not Found: kein Spiel '7' auf diesem Server\n")
        self.assertEqual(missing.headers()["content-language"], "de")
        self.assertEqual(self.ask(b"/nope", "es").text(), "404 Not Found: no existe esa página\n")

    def test_theServicesLanguageWins(self) -> None:
        """``--language es`` on the service: Spanish whatever the browser asks for, and no ``Vary``."""
        from velhanet.gambit import tap

        self.addCleanup(i18n.use, None)
        options = tap.Options()
        options.parseOptions(["--web", "0", "--language", "es"])
        hub, _web = webSite(options, self.clock, StartupReport(options, self.clock))
        assert isinstance(hub, GameHub)
        page = self.ask(b"/", GERMAN, hub)
        self.assertIn('<html lang="es">', page.text())
        self.assertIn("<h1>Partidas en este servidor</h1>", page.text())
        self.assertEqual(page.headers()["content-language"], "es")
        self.assertNotIn("vary", page.headers())

    def test_anUnknownLanguageIsTheProcesssThenEnglish(self) -> None:
        page = self.ask(b"/", "fr-FR,fr;q=0.9")
        self.assertIn('<html lang="en">', page.text())
        self.assertIn("<h1>Games on this server</h1>", page.text())
        self.assertEqual(self.ask(b"/").headers()["content-language"], "en", "no Accept-Language: the same")
        speaking(self, "pt")
        page = self.ask(b"/", "fr-FR,fr;q=0.9")
        self.assertIn('<html lang="pt-BR">', page.text(), "the process's language (its environment, --language)")
        self.assertIn("<h1>Partidas neste servidor</h1>", page.text())


class GambitEndTests(SynchronousTestCase):
    """The room speaks the wire's language (Spanish); each page says the end in its own."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.hub = GameHub(self.clock)
        self.white, self.black = RecordingPlayer("ana"), RecordingPlayer("bo")
        core = RoomCore("e215", self.white, True, lambda gameId: None, Texts("es"), watcher=self.hub)
        self.room = RoomMachine(core)
        self.room.join(self.black)

    def ask(self, path: bytes, acceptLanguage: str | None) -> AskingBrowser:
        return AskingBrowser(self.hub, self.clock, path, acceptLanguage)

    def result(self, acceptLanguage: str | None) -> Any:
        [(name, snapshot)] = self.ask(b"/game/1/events", acceptLanguage).events()
        self.assertEqual(name, "snapshot")
        return snapshot["result"]

    def mate(self) -> None:
        for i, move in enumerate(FOOLS_MATE):
            self.room.move((self.white, self.black)[i % 2], f"e215:{move}")

    def test_aMateInEachPagesLanguage(self) -> None:
        streams = {code: self.ask(b"/game/1/events", code) for code in ("de", "es", "pt")}
        listings = {code: self.ask(b"/events", code) for code in ("de", "en")}
        self.mate()
        self.assertEqual(self.hub.games["1"].result, "Ganan las negras por jaque mate (0-1)", "as the room said it")
        ends = {
            code: [data["result"] for name, data in page.events() if name == "end"] for code, page in streams.items()
        }
        self.assertEqual(
            ends,
            {
                "de": ["Schwarz gewinnt durch Schachmatt (0-1)"],
                "es": ["Ganan las negras por jaque mate (0-1)"],
                "pt": ["Vencem as pretas por xeque-mate (0-1)"],
            },
        )
        listed = {code: page.events()[-1][1]["result"] for code, page in listings.items()}
        self.assertEqual(
            listed, {"de": "Schwarz gewinnt durch Schachmatt (0-1)", "en": "Black wins by checkmate (0-1)"}
        )
        self.assertEqual(self.result(GERMAN), "Schwarz gewinnt durch Schachmatt (0-1)", "a late spectator too")
        self.assertEqual(self.result(None), "Black wins by checkmate (0-1)")

    def test_aPlayerWhoLeaves(self) -> None:
        self.room.move(self.white, "e215:e2e4")
        self.room.leave(self.black)
        self.assertEqual(self.hub.games["1"].result, "El jugador bo ha abandonado la partida")
        self.assertEqual(self.result("de"), "bo hat die Partie verlassen (1-0)")
        self.assertEqual(self.result("pt"), "bo abandonou a partida (1-0)")

    def test_aResignationAndADraw(self) -> None:
        self.room.end(self.black, "")
        self.assertEqual(self.result("de"), "ana gewinnt (1-0)")
        room = RoomMachine(RoomCore("e216", self.white, True, lambda gameId: None, Texts("es"), watcher=self.hub))
        room.join(self.black)
        room.draw(self.white, "")
        room.draw(self.black, "")
        [(_, snapshot)] = self.ask(b"/game/2/events", "de").events()
        self.assertEqual(snapshot["result"], "Remis durch Vereinbarung (1/2-1/2)")


def germanChromium(testCase: SynchronousTestCase) -> Chromium:
    """A headless Chromium whose language is German (``--lang=de --accept-lang=de``), as a German user's."""
    started = subprocess.Popen

    def withGerman(command: list[str], *arguments: Any, **options: Any) -> Any:
        if command[:2] == ["bash", "-c"]:  # tests.chromium's launcher: bash -c SCRIPT CHROMIUM ARGUMENTS...
            command = [*command[:4], "--lang=de", "--accept-lang=de", *command[4:]]
        return started(command, *arguments, **options)

    patched = testCase.patch(tests.chromium.subprocess, "Popen", withGerman)
    try:
        return Chromium(testCase)
    finally:
        patched.restore()  # only this browser: Popen is everyone's


FINISHED_SITE = """
import chess
from twisted.internet import reactor
from velhanet.watching import Score
from velhanet.web.hub import GameHub
from velhanet.web.site import spectatorSite

hub = GameHub(reactor)
mated = chess.Board()
over = hub.started("gambit", "chess", ["ana", "bo"], lambda: mated)
for move in ("f2f3", "e7e5", "g2g4", "d8h4"):
    mated.push_uci(move)
    over.moved(move)
over.ended("Ganan las negras por jaque mate (0-1)", Score("0-1"))
left = hub.started("gambit", "chess", ["ana", "bo"], chess.Board)
left.moved("e2e4")
left.ended("El jugador bo ha abandonado la partida", Score("1-0", "abandoned"))
print(reactor.listenTCP(0, spectatorSite(hub), interface="127.0.0.1").getHost().port, flush=True)
reactor.run()
"""
"""A site without ``--language`` over two Gambit games that ended, as the room reports them (in Spanish)."""

TEXT = "document.getElementById('{}').textContent"


class GermanBrowserTests(SynchronousTestCase):
    timeout = 120

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)

    def test_aGambitGameWatchedInGerman(self) -> None:
        """A real ``gambit-server --web`` (no ``--language``: the wire is Spanish), two bots playing."""
        port, webPort = freePort(), freePort()
        server = [*twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1"), "--web", str(webPort)]
        Child(self, server).waitForPort(webPort)
        browser = germanChromium(self)
        listPage = browser.open(f"http://127.0.0.1:{webPort}/")
        self.assertEqual(listPage.evaluate("navigator.language"), "de")
        self.assertEqual(listPage.evaluate("document.documentElement.lang"), "de")
        self.assertEqual(listPage.evaluate("document.querySelector('h1').textContent"), "Spiele auf diesem Server")
        headers = "[...document.querySelectorAll('#games th')].map((th) => th.textContent)"
        self.assertEqual(listPage.evaluate(headers), ["#", "Spiel", "Spieler", "Züge", "Stand", "Beginn"])
        client = python("-c", "from velhanet.gambit.client import main; main()", "--port", str(port), "--bot")
        alice = Child(self, [*client, "--bot-delay", "0.4", "--user", "alice", "--seed", "3"])
        gameId = alice.readLine().split()[1]
        Child(self, [*client, "--bot-delay", "0.4", "--user", "bob", "--seed", "4", "--game", gameId])
        row = "document.querySelector('#games tbody tr')"
        self.assertIn("gambit · Schach", listPage.waitFor(row, f"{row}.textContent", 60))
        self.assertEqual(
            listPage.waitFor(f"{row}.className === 'playing'", "document.querySelector('.state-playing').textContent"),
            "läuft",
        )
        game = browser.open(f"http://127.0.0.1:{webPort}/game/1")
        moves = "Number(document.getElementById('moves').dataset.count || 0)"
        game.waitFor(f"{moves} >= 6 && document.querySelector('#board svg')", "1", 60)
        self.assertEqual(game.evaluate("document.querySelector('h2').textContent"), "Züge")
        self.assertEqual(game.evaluate(TEXT.format("title")), "alice – bob (Schach)")
        self.assertEqual(game.evaluate("document.querySelector('#board').getAttribute('aria-label')"), "Spielfeld")
        self.assertEqual(game.evaluate(TEXT.format("result")), "", "still being played")
        picture = Path(self.mktemp() + ".png")  # docs/screenshots/site-de.png is one of these
        game.screenshot(str(picture))
        self.assertEqual(picture.read_bytes()[:8], b"\x89PNG\r\n\x1a\n", "the browser drew the page")

    def test_theEndOfAGambitGameInGerman(self) -> None:
        site = Child(self, python("-c", FINISHED_SITE))
        port = site.readLine().strip()
        self.assertTrue(port.isdigit(), f"the site did not start: {port!r}")
        browser = germanChromium(self)
        over = browser.open(f"http://127.0.0.1:{port}/game/1")
        at = TEXT.format("step-at")
        self.assertEqual(over.waitFor(f"{at} === 'Zug 4 von 4'", at), "Zug 4 von 4")
        self.assertEqual(over.evaluate(TEXT.format("result")), "Schwarz gewinnt durch Schachmatt (0-1)")
        self.assertEqual(over.evaluate(TEXT.format("status")), "nachspielen")
        self.assertEqual(over.evaluate("document.getElementById('step-play').textContent"), "abspielen")
        self.assertEqual(over.evaluate("document.getElementById('step-next').title"), "nächster Zug (→)")
        listPage = browser.open(f"http://127.0.0.1:{port}/")
        rows = "[...document.querySelectorAll('#games tbody tr')]"
        results = listPage.waitFor(f"{rows}.length === 2", f"{rows}.map((tr) => tr.children[4].textContent)")
        self.assertEqual(
            sorted(results), ["Schwarz gewinnt durch Schachmatt (0-1)", "bo hat die Partie verlassen (1-0)"]
        )
        self.assertFalse(re.search(r"[Gg]anan|abandonado", listPage.evaluate("document.body.textContent")))
        site.checkAlive()
