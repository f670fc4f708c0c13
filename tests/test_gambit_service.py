"""gambit-server plugin and options; gambit-client as a real process against a real server."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import cast

from twisted.application.service import IServiceMaker
from twisted.internet import reactor
from twisted.internet.address import IPv4Address
from twisted.internet.defer import inlineCallbacks
from twisted.internet.protocol import ServerFactory
from twisted.internet.task import deferLater
from twisted.plugin import getPlugins
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.gambit.client import parseArguments
from velhanet.gambit.tap import Options, makeService
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessrecord import readGames

from .gambit_original import OriginalServerFactory
from .processes import ENVIRONMENT, ROOT, freePort, python, twistd


class OptionsTests(SynchronousTestCase):
    def test_defaults(self) -> None:
        options = Options()
        options.parseOptions([])
        self.assertEqual(options["listen"], "tcp:22022")
        self.assertFalse(options["no-validate"])
        self.assertEqual(options["spacing"], 0.01)

    def test_pluginAndService(self) -> None:
        names = {p.tapname for p in getPlugins(IServiceMaker)}
        self.assertIn("gambit-server", names)
        options = Options()
        options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1", "--no-validate", "--trace"])
        service = makeService(options)
        self.assertFalse(service.factory.lobby.validate)  # type: ignore[attr-defined]

    def test_clientArguments(self) -> None:
        arguments = parseArguments(["--user", "bob", "--game", "e215", "--port", "1234", "--bot"])
        self.assertEqual((arguments.user, arguments.game, arguments.port, arguments.bot), ("bob", "e215", 1234, True))


class RealProcessesTests(TestCase):
    """``twistd -n gambit-server`` and two ``gambit-client --bot`` processes play a whole game."""

    timeout = 120

    @inlineCallbacks
    def test_botsPlayAGameThroughARealServer(self):
        environment = ENVIRONMENT
        tmp = Path(self.mktemp()).resolve()
        tmp.mkdir()
        import socket

        port = freePort()
        server = subprocess.Popen(
            twistd(
                "gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1", "--pgn-dir", str(tmp / "games"),
                log=tmp / "s.log",
            ),
            cwd=ROOT,
            env=environment,
        )
        self.addCleanup(server.terminate)
        for _ in range(100):
            self.assertIsNone(server.poll(), "the server died")
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                yield deferLater(reactor, 0.1, lambda: None)
        client = [
            *python("-c", "from velhanet.gambit.client import main; main()"),
            "--port",
            str(port),
            "--bot",
            "--bot-delay",
            "0.01",
        ]

        def bot(*arguments: str) -> subprocess.Popen[str]:
            process = subprocess.Popen(
                [*client, *arguments],
                cwd=ROOT,
                env=environment,
                stdout=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
            )
            self.addCleanup(process.kill)
            return process

        alice = bot("--user", "alice", "--seed", "1", "--pgn", str(tmp / "alice.pgn"))
        first = alice.stdout.readline() if alice.stdout else ""
        self.assertRegex(first, r"^Game [0-9a-f]{4} created")
        gameId = first.split()[1]
        bob = bot("--user", "bob", "--game", gameId, "--seed", "2")
        for _ in range(900):
            if alice.poll() is not None and bob.poll() is not None:
                break
            yield deferLater(reactor, 0.1, lambda: None)
        self.assertEqual((alice.returncode, bob.returncode), (0, 0))
        outputs = [p.stdout.read() if p.stdout else "" for p in (alice, bob)]
        for output in outputs:
            self.assertIn("GAME OVER:", output)
            self.assertRegex(output, r"\nThe game: 1\. \S+ \S+ 2\. ")
        # The server's archive and alice's file hold the same game, as python-chess reads them.
        [served] = [readGames(path.read_text(encoding="utf-8")) for path in (tmp / "games").iterdir()]
        [kept] = readGames((tmp / "alice.pgn").read_text(encoding="utf-8"))
        self.assertEqual(len(served), 1)
        self.assertEqual(list(served[0].mainline_moves()), list(kept.mainline_moves()))
        self.assertGreater(len(list(kept.mainline_moves())), 2)
        self.assertEqual((kept.headers["White"], kept.headers["Black"]), ("alice", "bob"))
        self.assertEqual(served[0].headers["Result"], kept.headers["Result"])
        self.assertIn(kept.headers["Result"], ("1-0", "0-1", "1/2-1/2"))
        unreachable = subprocess.run(
            [*client, "--user", "x", "--port", "1"],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=30,
        )
        self.assertEqual(unreachable.returncode, 2)
        self.assertIn("Cannot reach the Gambit server at localhost:1", unreachable.stdout)


class ScriptedClientTests(TestCase):
    """A real ``gambit-client`` process with its standard input from a file, on (a stand-in of) the
    original server: nothing is lost, the moves are played in turn, and a quit reads as a normal end."""

    timeout = 60

    @inlineCallbacks
    def test_pipedMovesAndACleanQuit(self):
        server = OriginalServerFactory()
        port = reactor.listenTCP(0, cast(ServerFactory, server), interface="127.0.0.1")
        self.addCleanup(port.stopListening)
        host = port.getHost()
        assert isinstance(host, IPv4Address)
        number = str(host.port)
        environment = ENVIRONMENT
        moves = Path(self.mktemp())
        moves.write_text("e4\nquit\n")
        client = python("-c", "from velhanet.gambit.client import main; main()", "--port", number)
        with moves.open() as stdin:
            alice = subprocess.Popen(
                [*client, "--user", "alice"], env=environment, stdin=stdin, stdout=subprocess.PIPE, text=True
            )
        self.addCleanup(alice.kill)  # a no-op once the process has exited
        while not server.games:
            yield deferLater(reactor, 0.05, lambda: None)
        [gameId] = server.games
        bob = subprocess.Popen(
            [*client, "--user", "bob", "--game", gameId, "--bot", "--bot-delay", "0.2"],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(bob.kill)
        while alice.poll() is None or bob.poll() is None:
            yield deferLater(reactor, 0.1, lambda: None)
        aliceSaid = alice.stdout.read() if alice.stdout else ""
        bobSaid = bob.stdout.read() if bob.stdout else ""
        self.assertEqual(alice.returncode, 0, aliceSaid)
        self.assertIn(f"--port {number}", aliceSaid)  # the join hint names the server
        self.assertIn("You played 1. e4", aliceSaid)
        self.assertIn("Leaving the game.", aliceSaid)
        self.assertNotIn("non-clean", aliceSaid)
        self.assertIn("GAME OVER: El jugador alice ha abandonado la partida", bobSaid)
        self.assertIn(Message(Cmd.MOVE, "alice", f"{gameId}:e2e4"), server.received)


class TraceTests(SynchronousTestCase):
    def test_traceLinesAsBefore(self) -> None:
        """``--trace`` lines read as they always have: arrow, peer, raw object without its newline, decoded."""
        from twisted.logger import capturedLogs, formatEvent

        from velhanet.gambit.service import traceToLog
        from velhanet.gambit.wire import MalformedMessage, encode

        with capturedLogs() as events:
            traceToLog("out", "127.0.0.1:5000", encode(Message(Cmd.OK, "", "e215")), Message(Cmd.OK, "", "e215"))
            traceToLog("in", "127.0.0.1:5000", "junk\r\n", MalformedMessage("expected a JSON object"))
        self.assertEqual(
            [formatEvent(event) for event in events],
            [
                """-> 127.0.0.1:5000 {"Cmd":1,"User":"","Args":"e215"} OK user='' args='e215'""",
                "<- 127.0.0.1:5000 junk\r ERROR expected a JSON object",
            ],
        )
        self.assertEqual({event["log_namespace"] for event in events}, {"velhanet.gambit.trace"})
