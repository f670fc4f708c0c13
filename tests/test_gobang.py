"""Gobang: word layout, the server's game logic in memory, real FIFOs, security, and a C client."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from twisted.application.service import Service
from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.task import Clock, deferLater
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.games.kinarow import TICTACTOE, gobangRules
from velhanet.gobang import fifo, fifotransport
from velhanet.gobang.lobby import Lobby
from velhanet.gobang.room import BLACK, WHITE, Room, RoomCore, RoomMachine
from velhanet.gobang.screen import renderBoard
from velhanet.gobang.session import GobangSession
from velhanet.gobang.tap import Options
from velhanet.gobang.wire import (
    ClientOp,
    ClientWord,
    MalformedWord,
    Refused,
    ServerOp,
    ServerWord,
    WordReader,
    byteOrder,
    decodeClient,
    decodeServer,
    encodeClient,
    encodeServer,
)

ROOT = Path(__file__).resolve().parent.parent


class WireTests(SynchronousTestCase):
    def test_clientGoldenBytes(self) -> None:
        word = ClientWord(17223, ClientOp.MOVE, 5, 9)  # 0x4347 | 0100 | 000101 | 001001
        self.assertEqual(encodeClient(word, "big"), bytes([0x43, 0x47, 0x41, 0x49]))
        self.assertEqual(encodeClient(word, "little"), bytes([0x49, 0x41, 0x47, 0x43]))
        for order in ("big", "little"):
            self.assertEqual(decodeClient(encodeClient(word, order), order), word)

    def test_serverGoldenBytes(self) -> None:
        word = ServerWord(ServerOp.WHITE_STONE, 63, 1)  # 0110 | 111111 | 000001
        self.assertEqual(encodeServer(word, "big"), bytes([0x6F, 0xC1]))
        self.assertEqual(encodeServer(word, "little"), bytes([0xC1, 0x6F]))
        self.assertEqual(encodeServer(ServerWord(ServerOp.BOARD_SIZE, 0, 11), "big"), bytes([0x70, 0x0B]))

    def test_everyOpcodeRoundTrips(self) -> None:
        for op in ClientOp:
            for order in ("big", "little"):
                word = ClientWord(65535, op, 63, 0)
                self.assertEqual(decodeClient(encodeClient(word, order), order), word)
        for sop in ServerOp:
            self.assertEqual(
                decodeServer(encodeServer(ServerWord(sop, 1, 2), "little"), "little"), ServerWord(sop, 1, 2)
            )

    def test_pidAbove65535KeepsLowBits(self) -> None:
        self.assertEqual(decodeClient(encodeClient(ClientWord(0x12345, 1), "big"), "big").pid, 0x2345)

    def test_rangeChecked(self) -> None:
        self.assertRaises(MalformedWord, encodeClient, ClientWord(1, 16), "big")
        self.assertRaises(MalformedWord, encodeServer, ServerWord(5, 64, 0), "big")
        self.assertRaises(MalformedWord, decodeServer, b"\x00", "big")

    def test_nativeOrder(self) -> None:
        self.assertEqual(byteOrder("native"), sys.byteorder)
        self.assertRaises(ValueError, byteOrder, "middle")

    def test_reassembly(self) -> None:
        reader = WordReader(4)
        self.assertEqual(reader.feed(b"\x01\x02"), [])
        self.assertEqual(reader.feed(b"\x03\x04\x05"), [b"\x01\x02\x03\x04"])
        self.assertEqual(reader.feed(b"\x06\x07\x08"), [b"\x05\x06\x07\x08"])


class FakeChannel:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.words: list[ServerWord] = []
        self.closed = False
        self.alive = True

    def send(self, word: ServerWord) -> None:
        if not self.closed:
            self.words.append(word)

    def close(self) -> None:
        self.closed = True

    def ops(self) -> list[tuple[int, int, int]]:
        got = [(w.opcode, w.x, w.y) for w in self.words]
        self.words.clear()
        return got


class LobbyHarness:
    def __init__(self, rules: Any = None, once: bool = False) -> None:
        self.channels: dict[int, FakeChannel] = {}
        self.refuse: dict[int, str] = {}
        self.killers: set[int] = set()
        self.stopped = 0
        self.killRequests: list[int] = []
        self.lobby = Lobby(rules or gobangRules(11), self.open, self.killRefusal, self.stop, once=once)

    def open(self, pid: int) -> FakeChannel:
        if pid in self.refuse:
            raise Refused(self.refuse[pid])
        self.channels[pid] = FakeChannel(pid)
        return self.channels[pid]

    def stop(self) -> None:
        self.stopped += 1

    def killRefusal(self, pid: int) -> str | None:
        self.killRequests.append(pid)
        return None if pid in self.killers else "not proven"

    def word(self, pid: int, op: int, x: int = 0, y: int = 0) -> None:
        self.lobby.received(ClientWord(pid, op, x, y))

    def game(self, black: int = 100, white: int = 200) -> tuple[FakeChannel, FakeChannel]:
        self.word(black, ClientOp.SIGNON_BLACK)
        self.word(white, ClientOp.SIGNON_WHITE)
        return self.channels[black], self.channels[white]


SIZE, MOVE, ASK, ILLEGAL = ServerOp.BOARD_SIZE, ServerOp.YOUR_MOVE, ServerOp.YOUR_MOVE, ServerOp.ILLEGAL


class LobbyTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.h = LobbyHarness()

    def test_signonOrderAndFirstRequest(self) -> None:
        self.h.word(200, ClientOp.SIGNON_WHITE)
        white = self.h.channels[200]
        self.assertEqual(white.ops(), [(SIZE, 0, 11)])
        self.h.word(100, ClientOp.SIGNON_BLACK)
        black = self.h.channels[100]
        self.assertEqual(black.ops(), [(SIZE, 0, 11), (ASK, 0, 0)])  # black moves first
        self.assertEqual(white.ops(), [])

    def test_fullGameToFive(self) -> None:
        black, white = self.h.game()
        black.ops()
        for i in range(4):
            self.h.word(100, ClientOp.MOVE, 1 + i, 1)
            self.h.word(200, ClientOp.MOVE, 1 + i, 3)
        self.assertIn((ServerOp.WHITE_STONE, 4, 3), black.ops())
        self.h.word(100, ClientOp.MOVE, 5, 1)
        self.assertEqual(black.ops(), [(ServerOp.BLACK_STONE, 5, 1), (ServerOp.BLACK_WINS, 0, 0)])
        self.assertEqual(white.ops()[-2:], [(ServerOp.BLACK_STONE, 5, 1), (ServerOp.BLACK_WINS, 0, 0)])
        self.assertTrue(black.closed and white.closed)
        self.assertEqual(self.h.lobby.games, {})
        self.h.word(100, ClientOp.MOVE, 6, 6)  # nothing happens after the end
        self.assertEqual(black.ops(), [])

    def test_illegalMoveGets9Then8(self) -> None:
        black, white = self.h.game()
        black.ops()
        self.h.word(100, ClientOp.MOVE, 6, 6)
        black.ops(), white.ops()
        self.h.word(200, ClientOp.MOVE, 6, 6)
        self.assertEqual(white.ops(), [(ILLEGAL, 6, 6), (ASK, 0, 0)])
        self.h.word(200, ClientOp.MOVE, 12, 1)
        self.assertEqual(white.ops(), [(ILLEGAL, 12, 1), (ASK, 0, 0)])
        self.assertEqual(black.ops(), [])

    def test_outOfTurnAndStrangersDropped(self) -> None:
        black, white = self.h.game()
        black.ops(), white.ops()
        self.h.word(200, ClientOp.MOVE, 1, 1)
        self.h.word(999, ClientOp.MOVE, 1, 1)
        self.h.word(100, 7)  # unknown opcode
        self.h.word(200, ClientOp.RESIGN)  # only the player to move may resign
        self.assertEqual((black.ops(), white.ops()), ([], []))

    def test_passPassDraw(self) -> None:
        black, white = self.h.game()
        self.h.word(100, ClientOp.MOVE, 0, 0)
        self.h.word(200, ClientOp.MOVE, 0, 0)
        self.assertEqual(
            white.ops()[-4:],
            [(ServerOp.BLACK_STONE, 0, 0), (ASK, 0, 0), (ServerOp.WHITE_STONE, 0, 0), (ServerOp.DRAW, 0, 0)],
        )

    def test_earlyDraw(self) -> None:
        h = LobbyHarness(gobangRules(5))
        black, white = h.game()
        blackMoves = [(0, 0), (1, 2), (2, 4), (3, 1), (4, 3), (2, 2)]
        whiteMoves = [(0, 1), (1, 3), (2, 0), (3, 2), (4, 4), (4, 0)]
        for (bx, by), (wx, wy) in zip(blackMoves, whiteMoves, strict=True):
            h.word(100, ClientOp.MOVE, bx + 1, by + 1)
            h.word(200, ClientOp.MOVE, wx + 1, wy + 1)
        self.assertEqual(black.ops()[-1], (ServerOp.DRAW, 0, 0))

    def test_resign(self) -> None:
        black, white = self.h.game()
        self.h.word(100, ClientOp.RESIGN)
        self.assertEqual(white.ops()[-1], (ServerOp.WHITE_WINS, 0, 0))

    def test_signoffAborts(self) -> None:
        black, white = self.h.game()
        self.h.word(200, ClientOp.SIGNOFF)
        self.assertEqual(black.ops()[-1], (ServerOp.ABORTED, 0, 0))
        self.assertEqual(self.h.lobby.games, {})

    def test_signoffBeforePartner(self) -> None:
        self.h.word(100, ClientOp.SIGNON_BLACK)
        self.h.word(100, ClientOp.SIGNOFF)
        self.assertEqual(self.h.lobby.games, {})
        self.assertEqual(self.h.lobby.bySender, {})

    def test_kill(self) -> None:
        self.h.word(300, ClientOp.KILL)
        self.assertEqual(self.h.stopped, 0)  # not allowed
        self.h.killers.add(300)
        self.h.word(300, ClientOp.KILL)
        self.assertEqual(self.h.stopped, 1)
        self.assertEqual(self.h.killRequests, [300, 300])

    def test_killNamingAParticipantNeedsTheSameProof(self) -> None:
        self.h.game()
        self.h.word(100, ClientOp.KILL)
        self.assertEqual(self.h.killRequests, [100])
        self.assertEqual(self.h.stopped, 0)

    def test_shutdownSends3(self) -> None:
        black, white = self.h.game()
        self.h.lobby.shutdown()
        self.assertEqual(black.ops()[-1], (ServerOp.ABORTED, 0, 0))
        self.assertEqual(white.ops()[-1], (ServerOp.ABORTED, 0, 0))

    def test_kibitzCatchUp(self) -> None:
        black, white = self.h.game()
        self.h.word(100, ClientOp.MOVE, 6, 6)
        self.h.word(200, ClientOp.MOVE, 7, 7)
        self.h.word(300, ClientOp.SIGNON_KIBITZ)
        kibitz = self.h.channels[300]
        self.assertEqual(kibitz.ops(), [(SIZE, 0, 11), (ServerOp.BLACK_STONE, 6, 6), (ServerOp.WHITE_STONE, 7, 7)])
        self.h.word(100, ClientOp.MOVE, 1, 1)
        self.assertEqual(kibitz.ops(), [(ServerOp.BLACK_STONE, 1, 1)])  # no move request for a kibitzer
        self.h.word(300, ClientOp.SIGNOFF)
        self.assertEqual(kibitz.ops(), [(ServerOp.ABORTED, 0, 0)])  # told, in case the signoff was forged
        self.h.word(200, ClientOp.MOVE, 2, 2)
        self.assertEqual(kibitz.ops(), [])

    def test_kibitzNoGame(self) -> None:
        self.h.word(300, ClientOp.SIGNON_KIBITZ, 5)
        self.assertEqual(self.h.channels[300].ops(), [(SIZE, 0, 11), (ServerOp.ABORTED, 0, 0)])

    def test_twoGamesAtOnce(self) -> None:
        b1, w1 = self.h.game(100, 200)
        b2, w2 = self.h.game(101, 201)
        self.assertEqual(sorted(self.h.lobby.games), [1, 2])
        self.h.word(101, ClientOp.MOVE, 3, 3)
        self.assertEqual(w1.ops(), [(SIZE, 0, 11)])
        self.assertIn((ServerOp.BLACK_STONE, 3, 3), w2.ops())
        self.h.word(300, ClientOp.SIGNON_KIBITZ, 2)
        self.assertIn((ServerOp.BLACK_STONE, 3, 3), self.h.channels[300].ops())

    def test_deadPlayerDetected(self) -> None:
        black, white = self.h.game()
        white.alive = False
        self.h.lobby.checkAlive(lambda channel: channel.alive)  # type: ignore[attr-defined]
        self.assertEqual(black.ops()[-1], (ServerOp.ABORTED, 0, 0))
        self.assertEqual(self.h.lobby.games, {})

    def test_refusedSignonLogged(self) -> None:
        self.h.refuse[100] = "/tmp/gbc.00100 is a symbolic link"
        self.h.word(100, ClientOp.SIGNON_BLACK)
        self.assertEqual(self.h.lobby.bySender, {})
        self.assertEqual(self.h.lobby.games, {})

    def test_onceStopsAfterFirstGame(self) -> None:
        h = LobbyHarness(once=True)
        h.game()
        h.word(100, ClientOp.RESIGN)
        self.assertEqual(h.stopped, 1)

    def test_ticTacToe(self) -> None:
        h = LobbyHarness(TICTACTOE)
        black, white = h.game()
        self.assertEqual(black.ops()[0], (SIZE, 0, 3))
        for x in (1, 2):
            h.word(100, ClientOp.MOVE, x, 1)
            h.word(200, ClientOp.MOVE, x, 2)
        h.word(100, ClientOp.MOVE, 3, 1)
        self.assertEqual(white.ops()[-1], (ServerOp.BLACK_WINS, 0, 0))


class ClientSessionTests(SynchronousTestCase):
    def test_sessionFlowAndBot(self) -> None:
        sent: list[tuple[int, int, int]] = []
        lines: list[str] = []
        codes: list[int] = []
        clock = Clock()
        import random

        session = GobangSession(
            ClientOp.SIGNON_WHITE,
            lambda *w: sent.append(w),
            lines.append,
            codes.append,
            clock,
            bot=random.Random(1),
            botDelay=0.1,
        )
        session.received(ServerWord(SIZE, 0, 9))
        session.received(ServerWord(ServerOp.BLACK_STONE, 5, 5))
        session.received(ServerWord(ASK))
        clock.advance(0.1)
        self.assertEqual(len(sent), 1)
        self.assertEqual(sent[0][0], ClientOp.MOVE)
        self.assertLessEqual(max(abs(sent[0][1] - 5), abs(sent[0][2] - 5)), 2)  # near the stone
        session.received(ServerWord(ServerOp.WHITE_WINS))
        self.assertEqual(codes, [0])
        self.assertEqual(lines[-1], "Game over!")

    def test_humanInput(self) -> None:
        sent: list[tuple[int, int, int]] = []
        lines: list[str] = []
        session = GobangSession(ClientOp.SIGNON_BLACK, lambda *w: sent.append(w), lines.append, lambda c: None, Clock())
        session.received(ServerWord(SIZE, 0, 11))
        session.command("3 4")
        self.assertIn("Wait until the server asks", lines[-1])
        session.received(ServerWord(ASK))
        session.command("12 1")
        self.assertIn("1 to 11", lines[-1])
        session.command("3 4")
        session.received(ServerWord(ServerOp.ILLEGAL, 3, 4))
        self.assertIn("Illegal move 3 4", lines[-1])
        session.received(ServerWord(ASK))
        session.command("pass")
        self.assertEqual(sent, [(ClientOp.MOVE, 3, 4), (ClientOp.MOVE, 0, 0)])

    def test_render(self) -> None:
        self.assertEqual(
            renderBoard(3, {(1, 1): 0, (3, 2): 1}),
            "    1 2 3   X = black, O = white\n  1 X . .\n  2 . . O\n  3 . . .",
        )


class OptionsTests(SynchronousTestCase):
    def test_options(self) -> None:
        options = Options()
        options.parseOptions(["--size", "15", "--byte-order", "big", "--once"])
        self.assertEqual((options["size"], options["byte-order"], options["once"]), (15, "big", True))
        from twisted.python.usage import UsageError

        for bad in (["--size", "4"], ["--size", "64"], ["--game", "chess"], ["--byte-order", "middle"]):
            self.assertRaises(UsageError, Options().parseOptions, bad)


class FifoSecurityTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.dir = Path(self.mktemp()).resolve()
        self.dir.mkdir()

    def test_modeIgnoresUmask(self) -> None:
        old = os.umask(0o077)
        try:
            path = self.dir / "gbs.00001"
            fifo.createFifo(path)
        finally:
            os.umask(old)
        self.assertEqual(path.stat().st_mode & 0o777, 0o622)

    def test_staleOwnNameReplaced(self) -> None:
        path = self.dir / "gbs.00001"
        path.write_text("stale")
        fifo.createFifo(path)
        self.assertTrue(path.is_fifo())

    def test_symlinkRefused(self) -> None:
        target = self.dir / "real"
        os.mkfifo(target)
        reader = fifo.openForReading(target)
        self.addCleanup(os.close, reader)
        link = self.dir / "gbc.00042"
        link.symlink_to(target)
        self.assertIn("symbolic link", str(self.assertRaises(Refused, fifo.openForWriting, link)))

    def test_regularFileRefused(self) -> None:
        path = self.dir / "gbc.00042"
        path.write_text("")
        self.assertIn("not a FIFO", str(self.assertRaises(Refused, fifo.openForWriting, path)))

    def test_missingAndUnreadRefused(self) -> None:
        self.assertIn("does not exist", str(self.assertRaises(Refused, fifo.openForWriting, self.dir / "gbc.1")))
        os.mkfifo(self.dir / "gbc.00002")
        self.assertIn("nobody reads it", str(self.assertRaises(Refused, fifo.openForWriting, self.dir / "gbc.00002")))

    def test_wrongOwnerRefused(self) -> None:
        """A FIFO owned by someone else than the process that claims it (pid 1 runs as root)."""
        path = self.dir / "gbc.00001"
        os.mkfifo(path)
        reader = fifo.openForReading(path)
        self.addCleanup(os.close, reader)
        if os.geteuid() == 0:
            os.chown(path, 65534, 65534)
        error = self.assertRaises(Refused, fifo.openForWriting, path, 1)
        self.assertIn("belongs to uid", str(error))

    def test_liveness(self) -> None:
        """A killed child that its parent has not reaped yet (a zombie) counts as dead."""
        child = subprocess.Popen(["sleep", "30"])
        self.assertTrue(fifo.isAlive(child.pid))
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # dead, but left unreaped: a zombie
        self.assertFalse(fifo.isAlive(child.pid))
        child.wait()
        self.assertFalse(fifo.isAlive(child.pid))

    def test_pidMatching(self) -> None:
        os.mkfifo(self.dir / "gbc.00007")
        os.mkfifo(self.dir / f"gbc.{7 + 65536}")
        self.assertIn("several", str(self.assertRaises(Refused, fifo.clientFifoFor, self.dir, 7)))
        os.mkfifo(self.dir / f"gbc.{9 + 65536}")
        self.assertEqual(fifo.clientFifoFor(self.dir, 9), (self.dir / f"gbc.{9 + 65536}", 9 + 65536))


def serverOptions(directory: Path, *arguments: str) -> Options:
    """``twistd gobang-server`` options, parsed as twistd parses them, with the FIFOs in ``directory``."""
    options = Options()
    options.parseOptions(["--fifo-dir", str(directory), *arguments])
    return options


def stopIfRunning(service: Service) -> None:
    """A cleanup: stop the service unless the test already has."""
    if service.running:
        service.stopService()


def clientCommand(*args: str) -> list[str]:
    return [sys.executable, "-c", "from velhanet.gobang.client import main; main()", *args]


class TraceTests(SynchronousTestCase):
    def test_traceLinesAsBefore(self) -> None:
        """``--trace`` lines read as they always have: arrow, pid, the word in hex, decoded."""
        from twisted.logger import capturedLogs, formatEvent

        from velhanet.gobang.service import traceToLog

        word = ClientWord(1234, ClientOp.MOVE, 3, 4)
        with capturedLogs() as events:
            traceToLog("in", "1234", encodeClient(word, "big"), word)
            traceToLog(
                "out", "1234", encodeServer(ServerWord(ServerOp.YOUR_MOVE), "big"), ServerWord(ServerOp.YOUR_MOVE)
            )
        self.assertEqual(
            [formatEvent(event) for event in events],
            ["<- pid 1234 04 d2 40 c4 pid 1234 MOVE x=3 y=4", "-> pid 1234 80 00 YOUR_MOVE x=0 y=0"],
        )


class RealFifoServer:
    """A real server service on real FIFOs in a temp dir, in the test's reactor, and its clients as processes."""

    dir: Path
    mktemp: Any
    addCleanup: Any

    def startServer(self) -> Any:
        from velhanet.gobang.service import GobangService

        self.dir = Path(self.mktemp()).resolve()
        self.dir.mkdir()
        service = GobangService(serverOptions(self.dir), reactor)
        service.startService()
        self.addCleanup(stopIfRunning, service)
        return service

    def spawn(self, *args: str, keepStdinOpen: bool = False) -> subprocess.Popen[str]:
        """A client process; a human player (no --bot) needs an open stdin, or it signs off at EOF."""
        process = subprocess.Popen(
            args,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE if keepStdinOpen else subprocess.DEVNULL,
        )
        self.addCleanup(process.kill)  # a no-op once the process has exited
        return process


class RealFifoTests(RealFifoServer, TestCase):
    """A real server service on real FIFOs in a temp dir, in this reactor; clients as processes."""

    timeout = 60

    @inlineCallbacks
    def waitFor(self, *processes: subprocess.Popen[str], seconds: float = 40):  # type: ignore[no-untyped-def]
        for _ in range(int(seconds * 10)):
            if all(p.poll() is not None for p in processes):
                return
            yield deferLater(reactor, 0.1, lambda: None)

    @inlineCallbacks
    def test_botsPlayOverRealFifos(self):
        service = self.startServer()
        pid = str(os.getpid())
        self.assertTrue((self.dir / f"gbs.{os.getpid():05d}").is_fifo())
        fast = ("--bot", "--bot-delay", "0.01")  # a whole game, not 0.2 s a move
        black = self.spawn(*clientCommand("-b", pid, "--fifo-dir", str(self.dir), *fast, "--seed", "1"))
        white = self.spawn(*clientCommand("-w", pid, "--fifo-dir", str(self.dir), *fast, "--seed", "2"))
        yield self.waitFor(black, white)
        outputs = [p.stdout.read() if p.stdout else "" for p in (black, white)]
        self.assertEqual((black.returncode, white.returncode), (0, 0), outputs)
        for output in outputs:
            self.assertIn("Connection established, board size = 11.", output)
            self.assertIn("Game over!", output)
        self.assertEqual(list(self.dir.glob("gbc.*")), [])  # clients removed their FIFO names
        service.stopService()
        self.assertEqual(list(self.dir.glob("gbs.*")), [])  # and the server its own

    @inlineCallbacks
    def test_deadPlayerNoticed(self):
        service = self.startServer()
        pid = str(os.getpid())
        black = self.spawn(*clientCommand("-b", pid, "--fifo-dir", str(self.dir)), keepStdinOpen=True)
        white = self.spawn(*clientCommand("-w", pid, "--fifo-dir", str(self.dir), "--bot"))
        for _ in range(300):  # until the game has started (both signed on; black is asked to move)
            if any(core.state is not None for _, core in service.lobby.games.values()):
                break
            yield deferLater(reactor, 0.1, lambda: None)
        black.kill()  # black is to move and dies
        yield self.waitFor(white, seconds=10)
        self.assertEqual(white.returncode, 3)
        self.assertIn("ended unexpectedly", white.stdout.read() if white.stdout else "")

    def test_unreachableServer(self) -> None:
        directory = Path(self.mktemp()).resolve()
        directory.mkdir()
        result = subprocess.run(
            clientCommand("-b", "1", "--fifo-dir", str(directory)),
            cwd=ROOT,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            capture_output=True,
            timeout=30,
        )
        self.assertEqual(result.returncode, 1)
        self.assertIn("Cannot contact server #1", result.stdout)
        self.assertEqual(list(directory.iterdir()), [])

    @inlineCallbacks
    def test_cClientInteroperates(self):
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            self.skipTest("no C compiler on this machine")
        binary = Path(self.mktemp()).resolve()
        subprocess.run([compiler, "-O", "-o", str(binary), str(ROOT / "tests" / "gobang_client.c")], check=True)
        self.startServer()
        pid = str(os.getpid())
        black = self.spawn(str(binary), str(self.dir), pid, "1", *["1", "1", "2", "1", "3", "1", "4", "1", "5", "1"])
        white = self.spawn(str(binary), str(self.dir), pid, "2", *["1", "3", "2", "3", "3", "3", "4", "3"])
        yield self.waitFor(black, white)
        blackOut = black.stdout.read() if black.stdout else ""
        self.assertEqual((black.returncode, white.returncode), (1, 1), blackOut)  # both saw "black wins"
        self.assertTrue(blackOut.startswith("7 0 11\n8 0 0\n5 1 1\n"), blackOut)
        self.assertIn("6 4 3\n", blackOut)

    @inlineCallbacks
    def waitForText(  # type: ignore[no-untyped-def]
        self, screens: dict[subprocess.Popen[str], bytearray], process: subprocess.Popen[str], text: str, count: int = 1
    ):
        """Until ``process`` has printed ``text`` ``count`` times; every client in ``screens`` must stay alive."""
        for _ in range(300):
            for other, screen in screens.items():
                assert other.stdout is not None
                with contextlib.suppress(BlockingIOError):
                    screen += os.read(other.stdout.fileno(), 65536)
                self.assertIsNone(other.poll(), f"{other.args!r} exited: {screen.decode()}")
            if screens[process].decode().count(text) >= count:
                return
            yield deferLater(reactor, 0.1, lambda: None)
        self.fail(f"{process.args!r} never printed {text!r}: {screens[process].decode()}")

    @inlineCallbacks
    def test_kibitzerJoinsAndBlackResigns(self):
        self.startServer()
        pid, where = str(os.getpid()), ("--fifo-dir", str(self.dir))
        screens: dict[subprocess.Popen[str], bytearray] = {}

        def client(*args: str, keepStdinOpen: bool = True) -> subprocess.Popen[str]:
            process = self.spawn(*clientCommand(*args, *where), keepStdinOpen=keepStdinOpen)
            assert process.stdout is not None
            os.set_blocking(process.stdout.fileno(), False)
            screens[process] = bytearray()
            return process

        def type(process: subprocess.Popen[str], line: str) -> None:
            assert process.stdin is not None
            process.stdin.write(line + "\n")
            process.stdin.flush()

        black, white = client("-b", pid), client("-w", pid)
        empty, one = renderBoard(11, {}), renderBoard(11, {(6, 6): 0})
        two = renderBoard(11, {(6, 6): 0, (2, 2): 1})
        yield self.waitForText(screens, black, "Your move")
        type(black, "6 6")
        yield self.waitForText(screens, white, "Your move")
        type(white, "2 2")
        yield self.waitForText(screens, black, "Your move", count=2)
        kibitzer = client("-k", pid, keepStdinOpen=False)
        yield self.waitForText(screens, kibitzer, two)  # it has caught up
        type(black, "resign")
        yield self.waitFor(black, white, kibitzer, seconds=20)
        for process, screen in screens.items():
            assert process.stdout is not None
            os.set_blocking(process.stdout.fileno(), True)
            while chunk := os.read(process.stdout.fileno(), 65536):
                screen += chunk
        blackOut, whiteOut, kibitzerOut = (screens[p].decode() for p in (black, white, kibitzer))
        self.assertEqual([p.returncode for p in (black, white, kibitzer)], [0, 0, 0], [blackOut, whiteOut, kibitzerOut])
        self.assertIn(f"{empty}\nWaiting for your partner to sign on ...\nYour move (x y, pass, resign):\n", blackOut)
        self.assertIn(f"Black plays 6 6.\n{one}\nWhite plays 2 2.\n{two}\nYour move", blackOut)
        self.assertIn("You resigned. White wins.\nGame over!\n", blackOut)
        self.assertIn("Black resigned. White wins.\nGame over!\n", whiteOut)
        self.assertTrue(
            kibitzerOut.endswith(
                "Connection established, board size = 11.\nBlack plays 6 6.\nWhite plays 2 2.\n"
                f"{two}\nBlack resigned. White wins.\nGame over!\n"
            ),
            kibitzerOut,
        )


class SessionChannel:
    """A client FIFO in memory: what the server sends goes straight to a L{GobangSession}."""

    def __init__(self, pid: int, session: GobangSession) -> None:
        self.pid, self.session, self.closed = pid, session, False

    def send(self, word: ServerWord) -> None:
        if not self.closed:
            self.session.received(word)

    def close(self) -> None:
        self.closed = True


class Players:
    """Two bot clients (pids 100 black, 200 white) and a table, all in memory on one clock.

    Only the pids in ``self.sessions`` have a client FIFO: a signon from any
    other pid is refused, as the real server refuses one without ``gbc.NNNNN``.
    """

    def __init__(self, kibitzer: bool = False) -> None:
        import random

        self.clock = Clock()
        self.codes: dict[int, list[int]] = {}
        self.lines: dict[int, list[str]] = {}
        self.sent: dict[int, list[tuple[int, int, int]]] = {}
        self.sessions: dict[int, GobangSession] = {}
        roles = [(100, ClientOp.SIGNON_BLACK), (200, ClientOp.SIGNON_WHITE)]
        roles += [(300, ClientOp.SIGNON_KIBITZ)] if kibitzer else []
        for pid, role in roles:
            self.codes[pid], self.lines[pid], self.sent[pid] = [], [], []
            self.sessions[pid] = GobangSession(
                role,
                lambda op, x, y, pid=pid: self.fromClient(pid, op, x, y),  # type: ignore[misc]
                self.lines[pid].append,
                self.codes[pid].append,
                self.clock,
                bot=None if role == ClientOp.SIGNON_KIBITZ else random.Random(pid),
                botDelay=0.05,
            )
        self.lobby = Lobby(gobangRules(11), self.open, lambda pid: "not proven", lambda: None)

    def open(self, pid: int) -> SessionChannel:
        if pid not in self.sessions:
            raise Refused(f"no client FIFO gbc.* for pid {pid}")
        return SessionChannel(pid, self.sessions[pid])

    def fromClient(self, pid: int, op: int, x: int, y: int) -> None:
        self.sent[pid].append((op, x, y))
        self.lobby.received(ClientWord(pid, op, x, y))

    def signOn(self) -> None:
        for session in self.sessions.values():
            session.sendWord(session.role, 0, 0)

    def forge(self, pid: int, op: int, x: int = 0, y: int = 0) -> None:
        """A word written by somebody else, carrying ``pid``."""
        self.lobby.received(ClientWord(pid, op, x, y))

    def finished(self) -> bool:
        return all(self.codes[pid] for pid in (100, 200))

    def playOut(self, seconds: float = 60.0) -> None:
        for _ in range(int(seconds / 0.05)):
            if self.finished():
                return
            self.clock.advance(0.05)


class ForgedWordTests(SynchronousTestCase):
    """Words forged with a player's pid never leave a real client or game stuck (docs/security.md)."""

    def assertNobodyStuck(self, players: Players) -> None:
        players.playOut()
        self.assertTrue(players.finished(), f"a client still waits: {players.codes}")
        self.assertEqual(players.lobby.games, {})
        self.assertEqual(players.lobby.bySender, {})
        self.assertEqual(players.clock.getDelayedCalls(), [])

    def test_honestGameEnds(self) -> None:
        players = Players()
        players.signOn()
        self.assertNobodyStuck(players)
        self.assertEqual(players.codes, {100: [0], 200: [0]})

    def test_forgedSignoffIsToldToTheRealPlayer(self) -> None:
        """The signoff cannot be told from the real one, but its 'sender' learns the game is over."""
        players = Players()
        players.signOn()
        players.clock.advance(0.5)
        players.forge(200, ClientOp.SIGNOFF)
        self.assertEqual(players.codes, {100: [3], 200: [3]})
        self.assertIn("The game ended unexpectedly", players.lines[200][-2])
        self.assertNobodyStuck(players)

    def test_forgedKibitzerSignoffIsToldToTheKibitzer(self) -> None:
        players = Players(kibitzer=True)
        players.signOn()
        players.forge(300, ClientOp.SIGNOFF)
        self.assertEqual(players.codes[300], [3])
        self.assertNobodyStuck(players)

    def test_wordsThatDoNotFitAreDropped(self) -> None:
        """Unused fields must be 0: random words (B2) almost never fit."""
        players = Players()
        players.sessions[200].sendWord(ClientOp.SIGNON_WHITE, 0, 0)
        players.forge(100, ClientOp.SIGNON_KIBITZ, 0, 7)  # before black's own signon
        players.forge(100, ClientOp.SIGNON_WHITE, 3, 9)
        self.assertEqual(players.lobby.bySender.keys(), {200})
        players.sessions[100].sendWord(ClientOp.SIGNON_BLACK, 0, 0)
        players.clock.advance(0.5)
        for op in (ClientOp.SIGNOFF, ClientOp.RESIGN):
            players.forge(100, op, 1, 2)
            players.forge(200, op, 0, 5)
        self.assertNobodyStuck(players)
        self.assertEqual(players.codes, {100: [0], 200: [0]})

    def test_forgedIllegalMoveGetsOneAnswer(self) -> None:
        """Opcode 9 then 8 for a move we did not send: reported, and one move answers both requests."""
        players = Players()
        players.signOn()
        players.forge(100, ClientOp.MOVE, 40, 2)  # black's turn, off the board
        players.clock.advance(0.05)
        self.assertEqual([op for op, _, _ in players.sent[100]], [ClientOp.SIGNON_BLACK, ClientOp.MOVE])
        self.assertIn("that we did not send", " ".join(players.lines[100]))
        self.assertNobodyStuck(players)

    def test_forgedLegalMoveIsReportedAndTheGameGoesOn(self) -> None:
        """A legal move on the player's turn cannot be told from its own: the game still ends."""
        players = Players()
        players.signOn()
        players.clock.advance(0.04)
        players.forge(100, ClientOp.MOVE, 1, 1)  # before black's bot answers
        players.clock.advance(0.01)  # black's own move: out of turn, dropped
        self.assertIn("The server played 1 1 for us", " ".join(players.lines[100]))
        self.assertNobodyStuck(players)

    def test_signonForgedWithTheOtherColour(self) -> None:
        """Black's pid seated as white (a forged signon before its own): it plays on as the server says."""
        players = Players()
        players.forge(100, ClientOp.SIGNON_WHITE)
        players.sessions[100].sendWord(ClientOp.SIGNON_BLACK, 0, 0)  # already signed on: dropped
        players.sessions[200].sendWord(ClientOp.SIGNON_BLACK, 0, 0)  # the real white, seated as black
        self.assertNobodyStuck(players)
        self.assertIn("not black", " ".join(players.lines[100]))

    def test_randomWordsWithThePlayersPids(self) -> None:
        """Attack B2 in memory: seeded random words carrying the players' pids between all moves."""
        import random

        for seed in range(20):
            rng = random.Random(seed)
            players = Players(kibitzer=True)
            players.signOn()
            for _ in range(2000):
                if players.finished():
                    break
                for _ in range(rng.randrange(4)):
                    players.forge(rng.choice((100, 200, 300)), rng.randrange(16), rng.randrange(64), rng.randrange(64))
                players.clock.advance(0.05)
            self.assertNobodyStuck(players)

    def test_floodIsSummedUpPerRead(self) -> None:
        h = LobbyHarness()
        events: list[dict[str, Any]] = []
        from twisted.logger import ILogObserver, LogEvent, globalLogPublisher
        from zope.interface import provider

        @provider(ILogObserver)
        def observer(event: LogEvent) -> None:
            events.append(event)

        globalLogPublisher.addObserver(observer)
        self.addCleanup(globalLogPublisher.removeObserver, observer)
        for pid in range(1000):
            h.word(pid, 7, 1, 1)
        h.lobby.endOfRead()
        drops = [e for e in events if e.get("log_namespace", "").endswith("Lobby")]
        self.assertEqual(len(drops), 16 + 1)
        self.assertEqual(drops[-1]["count"], 1000 - 16)
        self.assertEqual(drops[0]["reason"], "unknown opcode")


class RecordingChannel:
    """A participant as the game machine sees it: a pid, and every word sent to it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.words: list[tuple[int, int, int]] = []

    def send(self, word: ServerWord) -> None:
        self.words.append((word.opcode, word.x, word.y))

    def taken(self) -> list[tuple[int, int, int]]:
        words, self.words = self.words, []
        return words


STONE_B, STONE_W, ABORTED = ServerOp.BLACK_STONE, ServerOp.WHITE_STONE, ServerOp.ABORTED


class RoomMachineTests(SynchronousTestCase):
    """One game's machine alone: recording channels, every input in every state, every way out.

    The machine has no timer of its own (a dead player is noticed by the
    lobby's liveness check, see L{LobbyTests.test_deadPlayerDetected}); the
    clock here only proves that nothing is left scheduled.
    """

    def setUp(self) -> None:
        self.clock = Clock()
        self.overs: list[RoomCore] = []
        self.black, self.white, self.kibitzer = RecordingChannel(100), RecordingChannel(200), RecordingChannel(300)

    def tearDown(self) -> None:
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def game(self, rules: Any = TICTACTOE) -> tuple[Room, RoomCore]:
        core = RoomCore(1, rules, self.overs.append)
        return RoomMachine(core), core

    def playing(self, rules: Any = TICTACTOE) -> tuple[Room, RoomCore]:
        game, core = self.game(rules)
        game.seat(BLACK, self.black)
        game.seat(WHITE, self.white)
        game.kibitz(self.kibitzer)
        self.assertEqual(self.black.taken(), [(ASK, 0, 0)])
        self.assertEqual((self.white.taken(), self.kibitzer.taken()), ([], []))
        return game, core

    def everyone(self) -> list[list[tuple[int, int, int]]]:
        return [channel.taken() for channel in (self.black, self.white, self.kibitzer)]

    def assertOver(self, game: Room, core: RoomCore) -> None:
        """Over: the lobby was told once, and no input does anything any more."""
        self.assertEqual(self.overs, [core])
        self.everyone()
        game.seat(BLACK, RecordingChannel(400))
        game.kibitz(RecordingChannel(500))
        game.move(self.black, 1, 1)
        game.resign(self.black)
        game.leave(self.white, "gone")
        game.shutdown()
        self.assertEqual(self.everyone(), [[], [], []])
        self.assertEqual(self.overs, [core])

    def test_waitingForTheSecondPlayer(self) -> None:
        game, core = self.game()
        game.seat(WHITE, self.white)
        game.kibitz(self.kibitzer)
        game.move(self.white, 1, 1)
        game.resign(self.white)
        self.assertEqual(self.everyone(), [[], [], []])
        self.assertIsNone(core.state)
        game.seat(BLACK, self.black)
        self.assertEqual(self.everyone(), [[(ASK, 0, 0)], [], []])
        self.assertIsNotNone(core.state)

    def test_waitingKibitzerLeaves(self) -> None:
        game, core = self.game()
        game.kibitz(self.kibitzer)
        game.leave(self.kibitzer, "signed off")
        self.assertEqual(self.kibitzer.taken(), [(ABORTED, 0, 0)])  # told, in case the signoff was forged
        self.assertEqual((core.kibitzers, self.overs), ([], []))

    def test_waitingPlayerLeaves(self) -> None:
        game, core = self.game()
        game.seat(BLACK, self.black)
        game.kibitz(self.kibitzer)
        game.leave(self.black, "signed off")
        self.assertEqual(self.everyone(), [[(ABORTED, 0, 0)], [], [(ABORTED, 0, 0)]])
        self.assertOver(game, core)

    def test_waitingShutdown(self) -> None:
        game, core = self.game()
        game.seat(WHITE, self.white)
        game.shutdown()
        self.assertEqual(self.white.taken(), [(ABORTED, 0, 0)])
        self.assertOver(game, core)

    def test_playingTurnsStonesAndIllegalMoves(self) -> None:
        game, core = self.playing()
        game.move(self.white, 1, 1)  # out of turn: dropped
        game.resign(self.white)  # only the player to move may resign
        self.assertEqual(self.everyone(), [[], [], []])
        game.move(self.black, 2, 2)
        self.assertEqual(self.everyone(), [[(STONE_B, 2, 2)], [(STONE_B, 2, 2), (ASK, 0, 0)], [(STONE_B, 2, 2)]])
        for x, y in ((2, 2), (4, 1), (0, 0)):  # taken, off the board, no pass in tic-tac-toe
            game.move(self.white, x, y)
            self.assertEqual(self.white.taken(), [(ILLEGAL, x, y), (ASK, 0, 0)])
        self.assertEqual(self.overs, [])

    def test_lateKibitzerGetsTheMovesInTheOrderPlayed(self) -> None:
        game, core = self.playing(gobangRules(11))
        for channel, x, y in ((self.black, 6, 6), (self.white, 2, 2), (self.black, 0, 0), (self.white, 9, 1)):
            game.move(channel, x, y)
        late = RecordingChannel(301)
        game.kibitz(late)
        # Row by row it would be 9 1, 2 2, 6 6; the pass would be missing.
        self.assertEqual(late.taken(), [(STONE_B, 6, 6), (STONE_W, 2, 2), (STONE_B, 0, 0), (STONE_W, 9, 1)])

    def test_playingKibitzerCatchesUpAndLeaves(self) -> None:
        game, core = self.playing()
        game.move(self.black, 2, 2)
        game.move(self.white, 1, 3)
        late = RecordingChannel(301)
        game.kibitz(late)
        self.assertEqual(late.taken(), [(STONE_B, 2, 2), (STONE_W, 1, 3)])
        game.leave(late, "signed off")
        self.assertEqual(late.taken(), [(ABORTED, 0, 0)])
        self.assertEqual(self.overs, [])

    def test_playingLineWins(self) -> None:
        game, core = self.playing()
        for x, y in ((1, 1), (1, 2), (2, 1), (2, 2)):
            game.move(self.black if core.state.toMove == BLACK else self.white, x, y)  # type: ignore[union-attr]
        self.everyone()
        game.move(self.black, 3, 1)
        self.assertEqual(self.everyone(), [[(STONE_B, 3, 1), (ServerOp.BLACK_WINS, 0, 0)]] * 3)
        self.assertOver(game, core)

    def test_playingTwoPassesDraw(self) -> None:
        game, core = self.playing(gobangRules(7))
        game.move(self.black, 0, 0)
        game.move(self.white, 0, 0)
        self.assertEqual(self.kibitzer.taken()[-1], (ServerOp.DRAW, 0, 0))
        self.assertOver(game, core)

    def test_playingResign(self) -> None:
        game, core = self.playing()
        game.resign(self.black)
        self.assertEqual(self.everyone(), [[(ServerOp.WHITE_WINS, 0, 0)]] * 3)
        self.assertOver(game, core)

    def test_playingPlayerLeaves(self) -> None:
        game, core = self.playing()
        game.leave(self.white, "its process is gone")
        self.assertEqual(self.everyone(), [[(ABORTED, 0, 0)]] * 3)
        self.assertOver(game, core)

    def test_playingShutdown(self) -> None:
        game, core = self.playing()
        game.shutdown()
        self.assertEqual(self.everyone(), [[(ABORTED, 0, 0)]] * 3)
        self.assertOver(game, core)


class ConsoleTests(SynchronousTestCase):
    """What a person sees: the board from the start, one board per read, who resigned, no pass in tic-tac-toe."""

    def session(self, role: int) -> tuple[GobangSession, list[str], list[tuple[int, int, int]]]:
        lines: list[str] = []
        sent: list[tuple[int, int, int]] = []
        session = GobangSession(role, lambda *w: sent.append(w), lines.append, lambda code: None, Clock())
        return session, lines, sent

    def read(self, session: GobangSession, *words: tuple[int, int, int]) -> None:
        """The words of one read of the client FIFO."""
        for opcode, x, y in words:
            session.received(ServerWord(opcode, x, y))
        session.endOfRead()

    def test_emptyBoardBeforeTheFirstMove(self) -> None:
        empty = renderBoard(5, {})
        self.assertIn("X = black, O = white", empty)
        black, lines, _ = self.session(ClientOp.SIGNON_BLACK)
        self.read(black, (SIZE, 0, 5))
        self.read(black, (ASK, 0, 0))
        self.assertEqual(
            lines,
            [
                "Connection established, board size = 5.",
                empty,
                "Waiting for your partner to sign on ...",
                "Your move (x y, pass, resign):",
            ],
        )
        for role in (ClientOp.SIGNON_WHITE, ClientOp.SIGNON_KIBITZ):
            other, lines, _ = self.session(role)
            self.read(other, (SIZE, 0, 5))
            self.assertEqual(lines[:2], ["Connection established, board size = 5.", empty])

    def test_boardBeforeThePrompt(self) -> None:
        white, lines, _ = self.session(ClientOp.SIGNON_WHITE)
        self.read(white, (SIZE, 0, 5))
        lines.clear()
        self.read(white, (STONE_B, 3, 3), (ASK, 0, 0))
        self.assertEqual(lines, ["Black plays 3 3.", renderBoard(5, {(3, 3): 0}), "Your move (x y, pass, resign):"])

    def test_kibitzerJoiningSeesTheGameSoFarAsOneBoard(self) -> None:
        kibitzer, lines, _ = self.session(ClientOp.SIGNON_KIBITZ)
        self.read(kibitzer, (SIZE, 0, 9), (STONE_B, 5, 5), (STONE_W, 1, 1), (STONE_B, 0, 0), (STONE_W, 4, 4))
        board = {(5, 5): 0, (1, 1): 1, (4, 4): 1}
        self.assertEqual(
            lines,
            [
                "Connection established, board size = 9.",
                "Black plays 5 5.",
                "White plays 1 1.",
                "Black passes.",
                "White plays 4 4.",
                renderBoard(9, board),
            ],
        )
        lines.clear()
        self.read(kibitzer, (STONE_B, 6, 6))
        self.read(kibitzer, (STONE_W, 7, 7))
        self.assertEqual(
            lines,
            [
                "Black plays 6 6.",
                renderBoard(9, {**board, (6, 6): 0}),
                "White plays 7 7.",
                renderBoard(9, {**board, (6, 6): 0, (7, 7): 1}),
            ],
        )

    def test_whoResigned(self) -> None:
        black, blackLines, sent = self.session(ClientOp.SIGNON_BLACK)
        white, whiteLines, _ = self.session(ClientOp.SIGNON_WHITE)
        kibitzer, kibitzerLines, _ = self.session(ClientOp.SIGNON_KIBITZ)
        for session in (black, white, kibitzer):
            self.read(session, (SIZE, 0, 9), (STONE_B, 5, 5), (STONE_W, 1, 1))
        self.read(black, (ASK, 0, 0))
        black.command("resign")
        self.assertEqual(sent, [(ClientOp.RESIGN, 0, 0)])
        for session in (black, white, kibitzer):
            self.read(session, (ServerOp.WHITE_WINS, 0, 0))
        self.assertEqual(blackLines[-2:], ["You resigned. White wins.", "Game over!"])
        self.assertEqual(whiteLines[-2:], ["Black resigned. White wins.", "Game over!"])
        self.assertEqual(kibitzerLines[-2:], ["Black resigned. White wins.", "Game over!"])

    def test_aLineWinIsNoResignation(self) -> None:
        white, lines, _ = self.session(ClientOp.SIGNON_WHITE)
        self.read(white, (SIZE, 0, 9))
        for x in range(1, 5):
            self.read(white, (STONE_B, x, 1), (STONE_W, x, 2))
        lines.clear()
        self.read(white, (STONE_B, 5, 1), (ServerOp.BLACK_WINS, 0, 0))
        self.assertEqual(lines[-2:], ["Black wins.", "Game over!"])
        self.assertEqual(lines[0], "Black plays 5 1.")  # and the winning board before the result
        self.assertIn("X X X X X", lines[1])

    def test_noPassInTicTacToe(self) -> None:
        black, lines, sent = self.session(ClientOp.SIGNON_BLACK)
        self.read(black, (SIZE, 0, 3), (ASK, 0, 0))
        self.assertEqual(lines[-1], "Your move (x y, resign):")
        black.command("pass")
        self.assertEqual(lines[-1], "Passing is not allowed in tic-tac-toe; type 'x y' or 'resign'.")
        self.assertEqual(sent, [])
        black.command("2 2")  # still our move
        self.assertEqual(sent, [(ClientOp.MOVE, 2, 2)])

    def test_refusedPassInTicTacToeIsExplained(self) -> None:
        """A pass the server refuses (the bot's last resort) is explained as such, not as off the board."""
        black, lines, _ = self.session(ClientOp.SIGNON_BLACK)
        self.read(black, (SIZE, 0, 3), (ASK, 0, 0))
        black.play(0, 0)
        self.read(black, (ILLEGAL, 0, 0))
        self.assertEqual(lines[-1], "Illegal move 0 0: passing is not allowed in tic-tac-toe.")
        gobang, lines, _ = self.session(ClientOp.SIGNON_BLACK)
        self.read(gobang, (SIZE, 0, 9), (ASK, 0, 0))
        gobang.command("pass")
        self.read(gobang, (ILLEGAL, 0, 0))
        self.assertEqual(lines[-1], "Illegal move 0 0: the server refused the pass.")


class FirstWordsTests(TestCase):
    """The server's first words to a client leave in one write, so that the client reads them at once."""

    def test_sizeAndCatchUpInOneRead(self) -> None:
        from velhanet.gobang.protocol import FifoChannel
        from velhanet.tracing import noTrace

        readFd, writeFd = os.pipe()
        os.set_blocking(writeFd, False)
        chunks: list[bytes] = []
        firstRead: Deferred[None] = Deferred()

        def dataReceived(data: bytes) -> None:
            chunks.append(data)
            if not firstRead.called:
                firstRead.callback(None)

        reader = fifotransport.FifoReader(readFd, dataReceived, reactor=reactor)
        channel = FifoChannel(4242, writeFd, "big", noTrace, reactor)
        self.addCleanup(lambda: (reader.stopReading(), reader.connectionLost(None)))  # type: ignore[arg-type,func-returns-value]
        self.addCleanup(channel.writer.discard)
        words = [ServerWord(SIZE, 0, 11), ServerWord(STONE_B, 6, 6), ServerWord(STONE_W, 2, 2)]
        for word in words:
            channel.send(word)
        os.set_blocking(readFd, False)
        self.assertRaises(BlockingIOError, os.read, readFd, 64)  # nothing written word by word
        reader.startReading()

        def check(_: None) -> None:
            self.assertEqual(chunks, [b"".join(encodeServer(word, "big") for word in words)])
            channel.send(ServerWord(STONE_B, 1, 1))  # later words are written at once
            self.assertEqual(os.read(readFd, 64), encodeServer(ServerWord(STONE_B, 1, 1), "big"))

        return firstRead.addCallback(check)  # type: ignore[return-value]
