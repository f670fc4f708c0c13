"""Gambit in the students' languages: the server's words on the wire, its console, and ``gambit-client``.

The wire speaks Spanish unless ``gambit-server --language`` says otherwise
(the original server is Spanish, and its client shows the server's words);
``--language`` also sets the console's language. The original server's own
texts stay its words in every language. A client speaks its person's
language, and shows what the server says as it came.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from tests.languages import environment, speaking
from tests.processes import ENVIRONMENT, Child, freePort, python, twistd
from tests.test_gambit import FOOLS_MATE, FakeClient, ServerHarness, Table
from velhanet import i18n
from velhanet.gambit.engine import EngineFailure
from velhanet.gambit.protocol import GambitServerFactory
from velhanet.gambit.tap import Options, makeService
from velhanet.gambit.texts import Texts
from velhanet.gambit.wire import Cmd, Message


class ServiceHarness(ServerHarness):
    """The in-memory clients of L{ServerHarness}, on the factory a ``gambit-server`` command line made."""

    def __init__(self, factory: GambitServerFactory, clock: Clock) -> None:
        self.clock, self.factory = clock, factory
        self.ports = iter(range(50000, 60000))


def server(testCase: SynchronousTestCase, *arguments: str) -> ServiceHarness:
    """``gambit-server ARGUMENTS`` parsed and made into its service (the process's language is set back after)."""
    testCase.addCleanup(i18n.use, None)
    options = Options()
    options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1", *arguments])
    clock = Clock()
    service: Any = makeService(options, clock)
    return ServiceHarness(service.factory, clock)


def refusedTurnAndMove(harness: ServerHarness) -> tuple[str, str, FakeClient, FakeClient]:
    """Black moving first, then White moving a black pawn: the two ERRORs' texts."""
    white, black, _gameId = harness.game()
    black.send(cmd=4, user="bob", args="e5")
    [turn] = black.received()
    white.send(cmd=4, user="alice", args="e7e5")
    [move] = white.received()
    return turn.args, move.args, white, black


class WireLanguageTests(SynchronousTestCase):
    def test_theWireSpeaksSpanishByDefault(self) -> None:
        harness = server(self)
        self.assertEqual(harness.factory.texts.language, "es")
        self.assertEqual(i18n.current().code, "en", "the console speaks the environment's language")
        turn, move, white, black = refusedTurnAndMove(harness)
        self.assertEqual(turn, "No es tu turno: mueven las blancas")
        self.assertEqual(move, "Movimiento rechazado: e7e5 no es legal aquí: la pieza de e7 no es de las blancas")
        for i, played in enumerate(FOOLS_MATE):
            (white, black)[i % 2].send(cmd=4, user="x", args=played)
        self.assertEqual(black.received()[-1], Message(Cmd.END, "", "Ganan las negras por jaque mate (0-1)"))

    def test_languageDeSpeaksGermanOnTheWireAndOnTheConsole(self) -> None:
        harness = server(self, "--language", "de")
        self.assertEqual(harness.factory.texts.language, "de")
        self.assertEqual(i18n.current().code, "de", "--language is the console's language too")
        turn, move, white, black = refusedTurnAndMove(harness)
        self.assertEqual(turn, "Du bist nicht am Zug: Weiß ist am Zug")
        self.assertEqual(move, "Zug abgelehnt: e7e5 ist hier nicht erlaubt: die Figur auf e7 gehört nicht Weiß")
        white.send(cmd=6, user="alice", args="")
        self.assertEqual(white.received(), [Message(Cmd.OK, "", "Remis an bob angeboten")])
        self.assertEqual(black.received(), [Message(Cmd.DRAW, "", "alice bietet Remis an")])
        black.send(cmd=6, user="bob", args="")
        self.assertEqual(white.received(), [Message(Cmd.END, "", "Remis durch Vereinbarung (1/2-1/2)")])

    def test_theOriginalServersWordsStayItsOwn(self) -> None:
        """ "X ha abandonado", "X ha ganado": what the original client and the scoresheets read, in any language."""
        harness = server(self, "--language", "de")
        white, black, _gameId = harness.game()
        black.protocol.connectionLost()
        self.assertEqual(white.received(), [Message(Cmd.END, "", "El jugador bob ha abandonado la partida")])
        white, black, _gameId = harness.game()
        black.send(cmd=5, user="bob", args="")
        self.assertEqual(white.received(), [Message(Cmd.END, "", "alice ha ganado la partida")])

    def test_theSameNameIsTheOriginalsInSpanishOnly(self) -> None:
        said = {}
        for language in ("es", "de"):
            harness = ServerHarness(language=language)
            creator, joiner = harness.client(), harness.client()
            creator.send(cmd=2, user="dave", args="")
            gameId = creator.received()[0].args
            joiner.send(cmd=3, user="dave", args=gameId)
            said[language] = joiner.received()[0].args
        self.assertEqual(said["es"], "No se puede usar el mismo nombre que el oponente")
        self.assertEqual(said["de"], "Du kannst nicht denselben Namen wie dein Gegner verwenden ('dave')")

    def test_everyLanguageOfTheOption(self) -> None:
        for code, side in (("pt", "brancas"), ("es", "blancas"), ("de", "Weiß"), ("en", "White")):
            self.assertIn(side, refusedTurnAndMove(server(self, "--language", code))[0])
        self.assertEqual(Texts("en").agreed(), "draw by agreement (1/2-1/2)")


class ServerProcessTests(SynchronousTestCase):
    """A real ``twistd gambit-server --language de``: the wire and the log (its console) speak German."""

    timeout = 60

    def test_aRealServerInGerman(self) -> None:
        port = freePort()
        child = Child(self, twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1", "--language", "de"))
        child.waitForPort(port)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            reader = connection.makefile("r", encoding="utf-8")
            connection.sendall(json.dumps({"Cmd": 3, "User": "bo", "Args": "zzzz"}).encode())
            self.assertEqual(json.loads(reader.readline())["Args"], "Es gibt keine offene Partie 'zzzz'")
            connection.sendall(b"[1]")
            self.assertEqual(json.loads(reader.readline())["Args"], f"Fehlerhafte Nachricht: {_notAnObject()}")
        lines: list[str] = []
        while not any("fehlerhafte Eingabe von 127.0.0.1" in line for line in lines):
            line = child.readLine()
            self.assertTrue(line, f"the log ended without the German line: {lines}")
            lines.append(line)


def _notAnObject() -> str:
    """What the decoder says of ``[1]`` (a detail of JSON decoding, left in English)."""
    from velhanet.gambit.wire import JsonStreamDecoder

    [(_raw, item)] = JsonStreamDecoder().feed(b"[1]")
    return str(item)


class ClientLanguageTests(SynchronousTestCase):
    """``gambit-client`` speaks its person's language; the server's words are shown as they came."""

    timeout = 60

    def test_aGermanClientOnASpanishServer(self) -> None:
        speaking(self, "de")
        clock = Clock()
        table = Table(GambitServerFactory(clock), clock)  # the wire's default: Spanish
        alice = table.connect("alice", None)
        bob = table.connect("bob", alice.gameId)
        alice.command("help")
        alice.command("e5")
        alice.command("e2e5")
        for i, move in enumerate(FOOLS_MATE):
            (alice, bob)[i % 2].command(move)
            table.run(0.1)
        table.run(3)
        white, black = table.said("alice"), table.said("bob")
        self.assertIn(f"Partie {alice.gameId} erstellt; du spielst Weiß. Sag deinem Gegner, dass er Folgendes", white)
        self.assertIn(f"bob ist deiner Partie {alice.gameId} beigetreten. Du spielst Weiß.", white)
        self.assertIn(f"Du bist der Partie {alice.gameId} von alice beigetreten. Du spielst Schwarz.", black)
        self.assertIn("  resign   die Partie aufgeben", white)
        self.assertIn("Nicht erlaubt: e5 ist in dieser Stellung nicht erlaubt", white)
        self.assertIn("Nicht erlaubt: e2e5 ist hier nicht erlaubt", white)
        self.assertIn("Du hast 1. f3 gespielt", white)
        self.assertIn("bob hat 1... e5 gespielt", white)
        self.assertIn("Schachmatt: du hast verloren.", white)
        self.assertIn("Schwarz gewinnt durch Schachmatt", black)
        self.assertIn(
            "(der Server sagt: Ganan las negras por jaque mate (0-1))", white, "the server's words as they came"
        )
        self.assertIn("Die Partie: 1. f3 e5 2. g4 Qh4# 0-1", black)
        self.assertNotIn("You ", white + black)

    def test_aSpanishClientProcess(self) -> None:
        """``gambit-client --language es`` whose locale asks for German, against a real server; its opponent's
        locale asks for German: each prints its own language, and the server's words as they came."""
        port = freePort()
        Child(self, twistd("gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1")).waitForPort(port)
        client = python("-c", "from velhanet.gambit.client import main; main()", "--port", str(port))
        german = environment("de", ENVIRONMENT)
        ana = Child(self, [*client, "--user", "ana", "--language", "es"], environment=german)
        first = ana.readLine()
        self.assertRegex(first, r"^Partida [0-9a-f]{4} creada; juegas con blancas\. Dile a tu oponente que ejecute:")
        gameId = first.split()[1]
        self.assertIn(f"gambit-client --user NOMBRE --game {gameId} --port {port}", ana.readLine())
        self.assertEqual(ana.readLine(), "Esperando a tu oponente ...\n")
        bo = Child(self, [*client, "--user", "bo", "--game", gameId], environment=german)
        self.assertEqual(bo.readLine(), f"Trete der Partie {gameId} als bo bei ...\n")
        said = "".join(iter(ana.readLine, ""))  # its standard input is empty: it leaves when it is to move
        self.assertIn(f"bo se ha unido a tu partida {gameId}. Juegas con blancas. Escribe 'help'", said)
        self.assertIn("La entrada estándar ha terminado y te toca mover: abandonas la partida.\n", said)
        self.assertEqual(ana.wait(30), 0)
        heard = "".join(iter(bo.readLine, ""))
        self.assertIn(f"Du bist der Partie {gameId} von ana beigetreten. Du spielst Schwarz.", heard)
        self.assertIn("PARTIE BEENDET: El jugador ana ha abandonado la partida\n", heard, "the server's own words")


class EngineLanguageTests(SynchronousTestCase):
    def test_anEngineThatCannotStartSaysSoInTheClientsLanguage(self) -> None:
        speaking(self, "pt")
        failure = EngineFailure.of("crashed", "stockfish", how="saída 3")
        self.assertEqual(str(failure), "o motor stockfish travou (saída 3)")
        self.assertEqual(
            str(failure.atStart("/usr/games/stockfish")),
            "não foi possível iniciar o motor /usr/games/stockfish: ele travou (saída 3)",
        )
