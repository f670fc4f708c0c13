"""Gobang and the Software-Challenge in the language their user asks for (issue 37): German for both courses.

``gobang-client --language de`` plays a game in German against a real server on real FIFOs; a locale
(``LANG=pt_BR.UTF-8``) gives Portuguese and one velhanet has no catalog for English. ``socha-match
--language de`` prints its table and summary in German, and in Portuguese when the process speaks it. The
Software-Challenge server's result reasons are protocol: a server speaking Portuguese still sends the
official server's German words, and only says them in its own (Portuguese) log line.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import time
from collections.abc import Generator
from pathlib import Path
from xml.etree.ElementTree import Element

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.task import Clock, deferLater
from twisted.logger import capturedLogs, formatEvent
from twisted.trial.unittest import SynchronousTestCase, TestCase

from tests.languages import environment, speaking
from velhanet.socha.matchstats import GameResult, report, summary
from velhanet.socha.protocol import SochaFactory
from velhanet.socha.room import HARD_TIMEOUT, PACKET_GAP
from velhanet.socha.wire import XmlStreamReader

from .processes import ENVIRONMENT, ROOT, Child, freePort, python, twistd
from .test_gobang import RealFifoServer, clientCommand
from .test_socha import Peer
from .test_socha_match import EXAMPLE, runMatch

HARD_REASON = "hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet."
"""The official server's words for a player that did not move at all: on the wire in every language."""


class GobangClientLanguageTests(RealFifoServer, TestCase):
    """``gobang-client`` as a process against a real server service in this reactor."""

    timeout = 60

    @inlineCallbacks
    def test_germanWithTheLanguageOption(self) -> Generator[Deferred[None], None, None]:
        """``--language de``: the role, the connection, every stone, the board's legend and the result in
        German, whatever the environment says (the suite's is English); the other player stays English."""
        self.startServer()
        pid = str(os.getpid())
        fast = ("--bot", "--bot-delay", "0.01", "--fifo-dir", str(self.dir))
        black = self.spawn(*clientCommand("-b", pid, *fast, "--seed", "1", "--language", "de"))
        white = self.spawn(*clientCommand("-w", pid, *fast, "--seed", "2"))
        for _ in range(400):
            if black.poll() is not None and white.poll() is not None:
                break
            yield deferLater(reactor, 0.1, lambda: None)
        german, english = (p.stdout.read() if p.stdout else "" for p in (black, white))
        self.assertEqual((black.returncode, white.returncode), (0, 0), german + english)
        for text in (
            "Du spielst mit den schwarzen Steinen.",
            f"Versuche, Server #{pid} zu erreichen ...",
            "Verbindung hergestellt, Spielfeldgröße = 11.",
            "X = Schwarz, O = Weiß",
            "Spiel vorbei!",
        ):
            self.assertIn(text, german)
        self.assertRegex(german, r"\nSchwarz setzt auf \d+ \d+\.\n")
        self.assertRegex(german, r"\nWeiß setzt auf \d+ \d+\.\n")
        self.assertRegex(german, r"(Schwarz|Weiß) gewinnt\.|Das Spiel endet unentschieden\.")
        self.assertNotIn("Game over!", german)
        self.assertNotIn("plays", german)
        self.assertIn("Playing the white stones.", english)
        self.assertIn("Game over!", english)


class ClientLocaleTests(SynchronousTestCase):
    """The environment's locale decides when there is no ``--language``; one velhanet does not speak is English."""

    def unreachable(self, env: dict[str, str], *options: str) -> str:
        directory = Path(self.mktemp()).resolve()
        directory.mkdir()
        result = subprocess.run(
            clientCommand("-b", "1", "--fifo-dir", str(directory), *options),
            cwd=ROOT,
            env=env,
            text=True,
            capture_output=True,
            timeout=30,
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        return result.stdout

    def test_portugueseLocale(self) -> None:
        said = self.unreachable(environment("pt", ENVIRONMENT))
        self.assertIn("Jogando com as pedras pretas.\nTentando contatar o servidor #1 ...\n", said)
        self.assertIn("Não foi possível contatar o servidor #1: ", said)

    def test_unknownLocaleIsEnglish(self) -> None:
        said = self.unreachable(environment("xx_YY.UTF-8", ENVIRONMENT))
        self.assertIn("Playing the black stones.\nTrying to contact server #1 ...\nCannot contact server #1: ", said)

    def test_languageOptionBeatsTheLocale(self) -> None:
        said = self.unreachable(environment("pt", ENVIRONMENT), "--language", "de")
        self.assertIn("Server #1 nicht erreichbar: ", said)


class SochaMatchLanguageTests(SynchronousTestCase):
    def test_germanTableAndSummary(self) -> None:
        """``socha-match --language de``: the table, each player's lines and the reasons velhanet gives, in
        German (``summary.json``'s keys and loss kinds stay what programs read)."""
        crash = shlex.join(python("-c", "raise SystemExit(1)"))
        output, data = runMatch(self, EXAMPLE, crash, "--games", "2", "--grace", "1", "--language", "de")
        for text in (
            "Punkte von p1 gegen p2: 2 - 0 - 0  [1.000] 2",
            "Elo-Differenz: +inf +/- inf, LOS: ",
            "  irreguläre Niederlagen: 2 Absturz",
            "    Grund: p2 endete mit Status 1 vor dem Spielende",
            "Protokolle und summary.json in ",
        ):
            self.assertIn(text, output)
        self.assertNotIn("Score of", output)
        self.assertEqual(data["players"][1]["irregular_losses"], {"crash": 2})
        self.assertEqual(data["players"][1]["loss_reasons"], ["p2 endete mit Status 1 vor dem Spielende"])

    def test_portugueseReport(self) -> None:
        """The same table in Portuguese; the server's German reason is quoted as it came."""
        speaking(self, "pt")
        wire = "hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht."
        results = [
            GameResult(0, 0, winner=0),
            GameResult(1, 1, winner=1, lossKind="time", reason=f"p1 {wire}"),
            GameResult(2, 0, winner=None),
            GameResult(3, 1, void=True, reason="both", lossKind="void"),
        ]
        lines = report(summary(results, ("a", "b"), 6, interrupted=True), results)
        for text in (
            "Pontuação de p1 contra p2: 1 - 1 - 1  [0.500] 3",
            "nenhuma diferença significativa após 3 partidas (o intervalo de 95 % contém 0.5)",
            "  V/D/E começando (ONE) 1/0/1, em segundo (TWO) 0/1/0",
            "  derrotas irregulares: 1 tempo",
            f"    motivo: p1 {wire}",
            "  derrotas irregulares: nenhuma",
            "partida 3 anulada: both",
            "interrompido: 4 de 6 partidas",
        ):
            self.assertIn(text, lines)


class SochaServerLanguageTests(SynchronousTestCase):
    def test_wireReasonStaysGermanInAPortugueseProcess(self) -> None:
        """A server speaking Portuguese: the result's reason on the wire is the official German one; the log
        line a person reads around it is Portuguese."""
        speaking(self, "pt")
        clock = Clock()
        factory = SochaFactory(clock)
        one, two = Peer(factory), Peer(factory)
        one.send("<join/>")
        roomId = one.messages()[0].get("roomId", "")
        two.send("<join/>")
        with capturedLogs() as events:
            for _packet in range(3):  # welcome, memento, moveRequest, each in a read of its own
                clock.advance(PACKET_GAP)
            clock.advance(HARD_TIMEOUT)  # and ONE never moves
        winners = [m.find("data/winner") for m in two.messages() if m.find("data/winner") is not None]
        self.assertEqual([w.get("reason") for w in winners if w is not None], [f"ONE {HARD_REASON}"])
        self.assertIn(f"sala {roomId}: ONE {HARD_REASON}", [formatEvent(event) for event in events])

    def test_serverRunWithLanguagePt(self) -> None:
        """``twistd -n socha-server --language pt`` with two players that never move: German on the wire,
        Portuguese on the console."""
        port = freePort()
        console = Path(self.mktemp())
        with console.open("w") as output:
            server = Child(
                self,
                twistd(
                    "socha-server",
                    "--listen",
                    f"tcp:{port}:interface=127.0.0.1",
                    "--time-scale",
                    "0.1",
                    "--language",
                    "pt",
                ),
                output=output,
            )
        server.waitForPort(port)
        players = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        for player in players:
            self.addCleanup(player.close)
            player.sendall(b"<protocol><join/>")
        reader, deadline = XmlStreamReader(), time.monotonic() + 20
        messages: list[Element] = []
        while not any(m.tag == "left" for m in messages) and time.monotonic() < deadline:
            chunk = players[1].recv(65536)
            if not chunk:
                break
            messages += reader.feed(chunk)
        winners = [m.find("data/winner") for m in messages if m.find("data/winner") is not None]
        self.assertEqual([w.get("reason") for w in winners if w is not None], [f"ONE {HARD_REASON}"])
        server.stop()
        said = console.read_text(encoding="utf-8")
        self.assertRegex(said, rf"sala [^:\n]+: ONE {re.escape(HARD_REASON)}")


class AdminLanguageTests(SynchronousTestCase):
    def test_usageErrorInGerman(self) -> None:
        """``socha-admin --language de``: its own usage errors speak German (argparse's hint too)."""
        env = {k: v for k, v in ENVIRONMENT.items() if k != "SOCHA_ADMIN_PASSWORD"}
        result = subprocess.run(
            python("-m", "velhanet.socha.admin", "--language", "de", "observe", "r1"),
            cwd=ROOT,
            env=env,
            text=True,
            capture_output=True,
            timeout=30,
        )
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("socha-admin: --password ist nötig (oder setze $SOCHA_ADMIN_PASSWORD)", result.stderr)
