"""The honest side of the abuse campaign (``benchmarks/abuse.py``): servers, clients, canaries.

An attack only means something if an honest game on the same server is
watched while it runs. This module holds what the campaign needs for that
and is not an attack itself:

- L{ServerProcess}: a real ``twistd -n`` process whose pid is the pid we
  measure (``/proc/PID/status`` VmRSS, ``/proc/PID/fd``);
- L{RawClient}: a TCP socket driven by asyncio where every operation has a
  time limit, so that no attack or canary can hang the campaign;
- L{GambitLink}, L{SochaLink}: that socket speaking JSON or XML;
- one canary per service, each playing honest games in a thread of its own
  (its own event loop, so that an attacker busy in the main loop does not
  show up as server latency), recording round-trip latencies and every
  way the game was disturbed.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import Element

import chess

from velhanet.games.chessgame import gameOutcome
from velhanet.socha.games import moveData, stateFromMemento
from velhanet.socha.wire import XmlError, XmlStreamReader

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
CANARY_ADDRESS = "127.0.0.10"
"""Canaries connect from here, so that a limit per address hit by an attacker on 127.0.0.1 is not theirs."""
READ_TIMEOUT = 12.0
"""Longest an honest client waits for an expected message (Socha's hard move timeout is 10 s)."""


# -- processes and what /proc says about them ----------------------------------------------------


def twistdCommand() -> list[str]:
    """``twistd`` of this checkout; exec'd directly so that the Popen pid is the server's pid."""
    twistd = VENV_BIN / "twistd"
    if twistd.exists():
        return [str(twistd)]
    return [sys.executable, "-c", "from twisted.scripts.twistd import run; run()"]


def rssMegabytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def openFds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def freePort() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """One ``twistd -n --pidfile= -l LOG <plugin> …`` process, started and always stopped by us."""

    def __init__(self, name: str, arguments: list[str], logPath: Path, cwd: Path | None = None) -> None:
        self.name, self.arguments, self.logPath, self.cwd = name, arguments, logPath, cwd or ROOT
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """``-l -`` into our file rather than ``-l FILE``: twistd rotates a log file every 1 MB, and a
        flood logs more than that, which would hide lines the campaign counts."""
        command = [*twistdCommand(), "-n", "--pidfile=", "-l", "-", *self.arguments]
        with self.logPath.open("ab") as log, self.logPath.with_suffix(".stderr").open("wb") as stderr:
            self.process = subprocess.Popen(
                command,
                cwd=self.cwd,
                env=dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1"),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=stderr,
            )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def measure(self) -> tuple[float, int]:
        """(RSS in MB, open fds) of the server process."""
        return rssMegabytes(self.pid), openFds(self.pid)

    def log(self, offset: int = 0) -> str:
        try:
            with self.logPath.open("rb") as file:
                file.seek(offset)
                return file.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def logSize(self) -> int:
        try:
            return self.logPath.stat().st_size
        except FileNotFoundError:
            return 0

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s: never leave a server behind."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


async def waitUntil(condition: object, timeout: float, step: float = 0.05) -> bool:
    """Poll ``condition()`` until it is true or ``timeout`` s have passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        await asyncio.sleep(step)
    return bool(condition())  # type: ignore[operator]


async def waitForTcp(port: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client = await RawClient.connect(port, source="127.0.0.20", timeout=1.0)
            client.close()
            return True
        except OSError:
            await asyncio.sleep(0.1)
    return False


# -- bounded sockets -------------------------------------------------------------------------------

SENT, CLOSED, STALLED = "sent", "closed", "stalled"


class RawClient:
    """A non-blocking TCP socket on the running loop; every operation ends within its timeout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.loop = asyncio.get_running_loop()

    @classmethod
    async def connect(
        cls, port: int, source: str = "127.0.0.1", host: str = "127.0.0.1", receiveBuffer: int = 0, timeout: float = 5.0
    ) -> RawClient:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            if receiveBuffer:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receiveBuffer)
            sock.bind((source, 0))
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (host, port)), timeout)
        except BaseException:
            sock.close()
            raise
        return cls(sock)

    async def send(self, data: bytes, timeout: float = 5.0) -> str:
        """SENT; CLOSED if the server closed or reset the connection; STALLED if it stopped reading."""
        try:
            await asyncio.wait_for(self.loop.sock_sendall(self.sock, data), timeout)
            return SENT
        except TimeoutError:
            return STALLED
        except OSError:
            return CLOSED

    async def receive(self, timeout: float) -> bytes | None:
        """Some bytes; b"" when the server closed or reset the connection; None if nothing came in time."""
        try:
            return await asyncio.wait_for(self.loop.sock_recv(self.sock, 65536), timeout)
        except TimeoutError:
            return None
        except OSError:
            return b""

    async def receiveAll(self, timeout: float) -> tuple[bytes, bool]:
        """Everything that arrives within ``timeout`` s, and whether the connection ended."""
        received = bytearray()
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            data = await self.receive(left)
            if data is None:
                return bytes(received), False
            if not data:
                return bytes(received), True
            received += data
        return bytes(received), False

    def close(self) -> None:
        self.sock.close()


class GambitLink:
    """A Gambit connection: JSON objects out, decoded objects in (keys lower-cased)."""

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.text = ""
        self.utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self.decoder = json.JSONDecoder()

    @classmethod
    async def open(cls, port: int, source: str) -> GambitLink:
        return cls(await RawClient.connect(port, source=source))

    async def send(self, cmd: int, user: str = "", args: str = "") -> None:
        await self.sendRaw(json.dumps({"cmd": cmd, "user": user, "args": args}).encode())

    async def sendRaw(self, data: bytes) -> None:
        if await self.client.send(data) != SENT:
            raise ConnectionError("the server closed the connection (or stopped reading) while we wrote")

    async def receive(self, timeout: float = READ_TIMEOUT) -> dict[str, object]:
        """The next object; TimeoutError if none in time, ConnectionError if the server closed."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text.lstrip()
            if text:
                try:
                    value, end = self.decoder.raw_decode(text)
                    self.text = text[end:]
                    return {str(key).lower(): item for key, item in value.items()}
                except json.JSONDecodeError:
                    pass
            left = deadline - time.monotonic()
            data = await self.client.receive(max(left, 0.0)) if left > 0 else None
            if data is None:
                raise TimeoutError(f"no message within {timeout:.0f} s")
            if not data:
                raise ConnectionError("the server closed the connection")
            self.text += self.utf8.decode(data)

    def close(self) -> None:
        self.client.close()


class SochaLink:
    """A Software-Challenge connection: bytes out, depth-1 elements of the server's stream in."""

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.reader = XmlStreamReader()
        self.pending: list[Element] = []

    @classmethod
    async def open(cls, port: int, source: str) -> SochaLink:
        return cls(await RawClient.connect(port, source=source))

    async def send(self, text: str) -> None:
        if await self.client.send(text.encode()) != SENT:
            raise ConnectionError("the server closed the connection (or stopped reading) while we wrote")

    async def packet(self, timeout: float = READ_TIMEOUT) -> Element:
        deadline = time.monotonic() + timeout
        while not self.pending:
            left = deadline - time.monotonic()
            data = await self.client.receive(left) if left > 0 else None
            if data is None:
                raise TimeoutError(f"no packet within {timeout:.0f} s")
            if not data:
                raise ConnectionError("the server closed the connection")
            try:
                self.pending.extend(self.reader.feed(data))
            except XmlError as error:
                raise ConnectionError(f"the server sent bad XML: {error}") from None
        return self.pending.pop(0)

    def close(self) -> None:
        self.client.close()


# -- canaries --------------------------------------------------------------------------------------


@dataclass
class CanaryResult:
    latencies: list[float] = field(default_factory=list)
    """Seconds per round trip (Gobang: per game; JogoVelha: per MSG01 probe)."""
    problems: list[str] = field(default_factory=list)
    """Every way the honest game was disturbed: disconnected, refused, timed out, lost irregularly."""
    games: int = 0


class Canary:
    """Honest games, one after another, until told to stop (the game in progress is finished first)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        """Set once a game is under way: the attack may begin."""
        self.result = CanaryResult()

    async def play(self, stop: threading.Event) -> CanaryResult:
        raise NotImplementedError


class CanaryThread:
    """Run a canary in a thread with its own event loop, so that attackers do not delay it client-side."""

    def __init__(self, canary: Canary) -> None:
        self.canary = canary
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=type(canary).__name__, daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self.canary.play(self.stop))
        except Exception as error:  # a canary bug must show in the table, not kill the campaign
            self.canary.result.problems.append(f"canary failed: {error!r}")
        finally:
            self.canary.started.set()

    def start(self) -> None:
        self.thread.start()

    async def untilStarted(self, timeout: float = 30.0) -> bool:
        return await asyncio.to_thread(self.canary.started.wait, timeout)

    async def finish(self, timeout: float = 60.0) -> CanaryResult:
        self.stop.set()
        await asyncio.to_thread(self.thread.join, timeout)
        if self.thread.is_alive():
            self.canary.result.problems.append(f"the canary game did not end within {timeout:.0f} s")
        return self.canary.result


class GambitCanary(Canary):
    """Two honest clients play seeded random legal chess in lock step; latency = move write → opponent read."""

    PAUSE = 0.02
    """Between moves: a game, not a load test (and no write waits for the server's 10 ms pacing)."""

    def __init__(self, port: int, seed: int = 1) -> None:
        super().__init__()
        self.port, self.seed = port, seed

    async def play(self, stop: threading.Event) -> CanaryResult:
        game = 0
        while True:
            game += 1
            try:
                await self.playGame(stop, random.Random(self.seed * 1000 + game))
            except (ConnectionError, TimeoutError, OSError, ValueError) as error:
                self.result.problems.append(f"game {game}: {error}")
                return self.result
            if stop.is_set():
                return self.result

    async def playGame(self, stop: threading.Event, rng: random.Random) -> None:
        white = await GambitLink.open(self.port, CANARY_ADDRESS)
        black = await GambitLink.open(self.port, CANARY_ADDRESS)
        try:
            await white.send(2, "canaryWhite")
            gameId = str(expect(await white.receive(), 1, "OK to CREATE")["args"])
            await black.send(3, "canaryBlack", gameId)
            expect(await black.receive(), 1, "OK to JOIN")
            expect(await white.receive(), 1, "OK naming the opponent")
            self.started.set()
            board, players, names = chess.Board(), (white, black), ("canaryWhite", "canaryBlack")
            while not stop.is_set():
                side = 0 if board.turn == chess.WHITE else 1
                move = rng.choice(list(board.legal_moves))
                sent = f"{gameId}:{move.uci()}"
                started = time.perf_counter()
                await players[side].send(4, names[side], sent)
                relayed = expect(await players[1 - side].receive(), 4, "the relayed MOVE")
                self.result.latencies.append(time.perf_counter() - started)
                if relayed["args"] != sent:
                    raise ValueError(f"relayed {relayed['args']!r}, sent {sent!r}")
                board.push(move)
                if gameOutcome(board) is not None:  # the server ends it: END to both
                    expect(await white.receive(), 5, "END after the last move")
                    expect(await black.receive(), 5, "END after the last move")
                    self.result.games += 1
                    return
                await asyncio.sleep(self.PAUSE)
            await white.send(5, "canaryWhite", "")  # asked to stop: White resigns
            expect(await black.receive(), 5, "the END of the resignation")
            self.result.games += 1
        finally:
            white.close()
            black.close()


def expect(message: dict[str, object], cmd: int, what: str) -> dict[str, object]:
    if message.get("cmd") != cmd:
        raise ValueError(f"expected {what}, got {message}")
    return message


class SochaCanary(Canary):
    """Two honest Piranhas players (``<join/>``); latency = a move's write → the opponent's moveRequest."""

    def __init__(self, port: int, seed: int = 1) -> None:
        super().__init__()
        self.port, self.seed = port, seed
        self.lastMoveWritten: float | None = None

    async def play(self, stop: threading.Event) -> CanaryResult:
        game = 0
        while not self.result.problems:
            game += 1
            try:
                await self.playGame(random.Random(self.seed * 1000 + game))
            except (ConnectionError, TimeoutError, OSError, ValueError) as error:
                self.result.problems.append(f"game {game}: {error}")
            if stop.is_set():
                break
        return self.result

    async def playGame(self, rng: random.Random) -> None:
        one = await SochaLink.open(self.port, CANARY_ADDRESS)
        two = await SochaLink.open(self.port, CANARY_ADDRESS)
        try:
            await one.send("<protocol><join/>\n")
            roomId = (await one.packet()).get("roomId")
            await two.send("<protocol><join/>\n")
            if (await two.packet()).get("roomId") != roomId:
                raise ValueError("the two canary players were put in different rooms")
            self.started.set()
            self.lastMoveWritten = None
            await asyncio.gather(self.drive(one, rng), self.drive(two, rng))
            self.result.games += 1
        finally:
            one.close()
            two.close()

    async def drive(self, link: SochaLink, rng: random.Random) -> None:
        """Play one side until ``<left/>``; raise on anything an honest player should never see."""
        state = None
        while True:
            packet = await link.packet()
            if packet.tag == "left":
                return
            if packet.tag == "errorpacket":
                raise ValueError(f"errorpacket {packet.get('message')!r}")
            data = packet.find("data")
            kind = data.get("class") if data is not None else None
            if data is None or kind is None:
                continue
            if kind == "memento":
                state = stateFromMemento(data)
            elif kind == "error":
                raise ValueError(f"our move was refused: {data.get('message')}")
            elif kind == "result":
                winner = data.find("winner")
                if winner is not None and winner.get("regular") == "false":
                    raise ValueError(f"game ended irregularly: {winner.get('reason')}")
            elif kind == "moveRequest":
                if state is None:
                    raise ValueError("moveRequest before any memento")
                if self.lastMoveWritten is not None:
                    self.result.latencies.append(time.perf_counter() - self.lastMoveWritten)
                move = rng.choice(state.legalMoves())
                self.lastMoveWritten = time.perf_counter()
                await link.send(f'<room roomId="{packet.get("roomId")}">{moveData(move)}</room>\n')


class GobangCanary(Canary):
    """Two ``gobang-client --bot`` processes play a seeded game; its duration is the 'latency'."""

    BOT_DELAY = "0.05"
    """The clients' default 0.2 s per move makes a game last 18 s; 0.05 s keeps it near 5 s."""

    def __init__(self, serverPid: int, fifoDir: Path, outputDir: Path) -> None:
        super().__init__()
        self.serverPid, self.fifoDir, self.outputDir = serverPid, fifoDir, outputDir
        self.clientPids: set[int] = set()
        """Every client the canary started (B1 spares them all)."""
        self.currentPids: set[int] = set()
        """The clients of the game in progress."""
        self.outputs: dict[int, Path] = {}
        self.colours: dict[int, str] = {}

    def client(self, colour: str, seed: int, game: int) -> subprocess.Popen[bytes]:
        program = shutil.which("gobang-client", path=str(VENV_BIN)) or "gobang-client"
        command = [program, colour, str(self.serverPid), "--fifo-dir", str(self.fifoDir), "--bot"]
        command += ["--seed", str(seed), "--bot-delay", self.BOT_DELAY]
        path = self.outputDir / f"gobang{colour}-{time.monotonic_ns()}.out"
        with path.open("wb") as output:
            client = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
        self.outputs[client.pid] = path
        self.colours[client.pid] = "black" if colour == "-b" else "white"
        return client

    @staticmethod
    def gameOver(clients: list[subprocess.Popen[bytes]]) -> bool:
        """Both clients have exited, or one has failed (its partner would wait for it forever)."""
        return all(c.poll() is not None for c in clients) or any(c.poll() not in (None, 0) for c in clients)

    def describe(self, client: subprocess.Popen[bytes]) -> str:
        status = "still running" if client.poll() is None else f"exited {client.returncode}"
        return f"{self.colours[client.pid]} {status}: {self.lastLine(client)!r}"

    def lastLine(self, client: subprocess.Popen[bytes]) -> str:
        """The client's last words, without its closing 'Signed off.'."""
        lines = self.outputs[client.pid].read_text(errors="replace").strip().splitlines()
        lines = [line for line in lines if line.strip() != "Signed off."]
        return lines[-1] if lines else "(no output)"

    async def play(self, stop: threading.Event) -> CanaryResult:
        game = 0
        while True:
            game += 1
            started = time.perf_counter()
            clients = [self.client("-b", 1, game), self.client("-w", 2, game)]
            self.currentPids = {client.pid for client in clients}
            self.clientPids |= self.currentPids
            try:
                await asyncio.sleep(0.3)
                self.started.set()
                over = await waitUntil(lambda: self.gameOver(clients), 30.0)  # noqa: B023
                await waitUntil(lambda: all(c.poll() is not None for c in clients), 1.0)  # noqa: B023
                states = [self.describe(client) for client in clients]
            finally:
                for client in clients:
                    if client.poll() is None:
                        client.kill()
                    client.wait()
            if not over or any(client.returncode != 0 for client in clients):
                timeout = "" if over else "no end within 30 s: "
                self.result.problems.append(f"game {game}: {timeout}{'; '.join(states)}")
                return self.result
            self.result.latencies.append(time.perf_counter() - started)
            self.result.games += 1
            if stop.is_set():
                return self.result


PROBE = b"01010Probe"
"""MSG01 from a third peer. (``01008Probe`` has a wrong length: the header counts itself, 5 + 5 = 10.)"""


class VelhaCanary(Canary):
    """A fresh Ana invites Bo and plays a best-of-5; MSG01 probes to Bo give the latency.

    The probe is what a third peer sees: L{PROBE} from 127.0.0.67:20181,
    answered by ``02…Bo`` to that address and port.
    """

    ANA_DONE = re.compile(r"\] series \w+ \d-\d|match ended: |invitation with Bo: (declined|timeout|failed|cancelled)")
    """Ana's log says her match is over, or will never be."""
    PROBE_ADDRESS = ("127.0.0.67", 20181)
    BO = ("127.0.0.2", 20181)

    def __init__(self, startAna: Callable[[], ServerProcess], boLog: ServerProcess, anaDelay: float = 0.0) -> None:
        super().__init__()
        self.startAna = startAna
        self.boLog, self.anaDelay = boLog, anaDelay
        self.boLogOffset = boLog.logSize()
        self.ana = ServerProcess("velha-Ana", [], Path("/nonexistent"))
        """Until Ana starts: a process never started, with no log and nothing to stop."""

    async def play(self, stop: threading.Event) -> CanaryResult:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.setblocking(False)
        probe.bind(self.PROBE_ADDRESS)
        try:
            self.started.set()
            await asyncio.sleep(self.anaDelay)
            self.ana = self.startAna()
            started = time.monotonic()
            while True:
                await self.probe(probe)
                over = self.ANA_DONE.search(self.ana.log()) is not None
                if stop.is_set() and (over or time.monotonic() - started > 60):
                    break
                await asyncio.sleep(0.1)
        finally:
            probe.close()
            self.ana.stop()
        self.judgeAnasLog(self.ana.log())
        return self.result

    async def probe(self, probe: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        sent = time.perf_counter()
        await loop.sock_sendto(probe, PROBE, self.BO)
        deadline = time.monotonic() + 2.0
        while (left := deadline - time.monotonic()) > 0:
            try:
                data, _ = await asyncio.wait_for(loop.sock_recvfrom(probe, 2048), left)
            except TimeoutError:
                break
            if data.startswith(b"02") and data.rstrip(b"\0\r\n ").endswith(b"Bo"):
                self.result.latencies.append(time.perf_counter() - sent)
                return
        self.result.problems.append("Bo did not answer a MSG01 within 2 s")

    def judgeAnasLog(self, log: str) -> None:
        if "match against Bo begins" not in log:
            why = re.findall(r"invitation with Bo: ([^\n]*)", log)
            self.result.problems.append(f"Ana's match never began ({'; '.join(why) or 'no invitation outcome'})")
        elif re.search(r"\] series \w+ \d-\d", log) is None:
            ended = re.findall(r"match ended: ([^\n]*)", log)
            self.result.problems.append(f"Ana's match did not finish ({'; '.join(ended) or 'no end'})")
        else:
            self.result.games += 1
