"""Load a real Gambit server on loopback: relay rate, relay latency, memory per connection.

    python -m benchmarks.gambit_relay [--games 50] [--moves 40] [--connections 1000]
                                      [--no-validate] [--server "HOST:PORT"]

Starts ``twistd -n gambit-server`` on a free loopback port (unless --server
points at one already running, e.g. the original Go server built by hand
from its public source), then:

1. plays N games at once, M moves each, every move answered as soon as it
   arrives (one move in flight per game), and prints moves relayed per
   second and the median and 99th-percentile relay latency (sender's write
   to the opponent's read);
2. opens K more connections that each CREATE a game and stay idle, and
   prints the server's resident memory per open connection (from
   /proc/PID/status; only when the script started the server).

Moves are taken from random legal games (seeded) so that validation has
real work to do and no game ends early.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import chess

from velhanet.games.chessgame import gameOutcome

ROOT = Path(__file__).resolve().parent.parent


def legalGame(moves: int, seed: int) -> list[str]:
    """A random legal game of exactly ``moves`` plies that is not over before the last one."""
    rng = random.Random(seed)
    while True:
        board = chess.Board()
        played: list[str] = []
        while len(played) < moves and gameOutcome(board) is None:
            move = rng.choice(list(board.legal_moves))
            board.push(move)
            played.append(move.uci())
        if len(played) == moves:
            return played
        seed += 1000


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.decoder = json.JSONDecoder()
        self.buffer = ""

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    def send(self, cmd: int, user: str, args: str) -> None:
        self.writer.write(json.dumps({"Cmd": cmd, "User": user, "Args": args}).encode())

    async def receive(self) -> dict[str, object]:
        while True:
            text = self.buffer.lstrip()
            if text:
                try:
                    value, end = self.decoder.raw_decode(text)
                    self.buffer = text[end:]
                    return {k.lower(): v for k, v in value.items()}
                except json.JSONDecodeError:
                    pass
            data = await self.reader.read(65536)
            if not data:
                raise ConnectionError("server closed the connection")
            self.buffer += data.decode()


async def playGame(host: str, port: int, moves: list[str], latencies: list[float]) -> int:
    white = await Connection.open(host, port)
    black = await Connection.open(host, port)
    white.send(2, "white", "")
    gameId = str((await white.receive())["args"])
    black.send(3, "black", gameId)
    await black.receive()
    await white.receive()
    players = (white, black)
    names = ("white", "black")  # the original server routes a MOVE by its User field
    for ply, move in enumerate(moves):
        sender, receiver = players[ply % 2], players[1 - ply % 2]
        started = time.perf_counter()
        sender.send(4, names[ply % 2], f"{gameId}:{move}")
        message = await receiver.receive()
        latencies.append(time.perf_counter() - started)
        if message["cmd"] != 4:
            raise RuntimeError(f"expected a MOVE, got {message}")
    for connection in players:
        connection.writer.close()
    return len(moves)


async def idleConnections(host: str, port: int, count: int) -> list[Connection]:
    opened = []
    for i in range(count):
        connection = await Connection.open(host, port)
        connection.send(2, f"idle{i}", "")
        await connection.receive()
        opened.append(connection)
    return opened


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def freePort() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def main(arguments: argparse.Namespace) -> None:
    process = None
    if arguments.server:
        host, port = arguments.server.rsplit(":", 1)[0], int(arguments.server.rsplit(":", 1)[1])
    else:
        host, port = "127.0.0.1", freePort()
        command = [
            sys.executable,
            "-c",
            "from twisted.scripts.twistd import run; run()",
            "-n",
            "--pidfile=",
            "-l",
            os.devnull,
            "gambit-server",
            "--listen",
            f"tcp:{port}:interface=127.0.0.1",
        ]
        if arguments.no_validate:
            command.append("--no-validate")
        if arguments.spacing is not None:
            command += ["--spacing", str(arguments.spacing)]
        process = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        for _ in range(100):
            try:
                socket.create_connection((host, port)).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
    try:
        games = [legalGame(arguments.moves, seed) for seed in range(arguments.games)]
        latencies: list[float] = []
        started = time.perf_counter()
        relayed = sum(await asyncio.gather(*(playGame(host, port, game, latencies) for game in games)))
        elapsed = time.perf_counter() - started
        latencies.sort()
        mode = "without validation" if arguments.no_validate else "with validation"
        print(f"{arguments.games} games x {arguments.moves} moves at once, {mode}:")
        print(f"  {relayed / elapsed:,.0f} moves relayed per second ({relayed} in {elapsed:.2f} s)")
        print(
            f"  relay latency median {statistics.median(latencies) * 1000:.2f} ms, "
            f"p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.2f} ms"
        )
        if process is not None and arguments.connections:
            await asyncio.sleep(0.5)
            before = rss(process.pid)
            opened = await idleConnections(host, port, arguments.connections)
            await asyncio.sleep(0.5)
            after = rss(process.pid)
            print(
                f"  memory: {(after - before) / len(opened) / 1024:.1f} KiB per open connection "
                f"({len(opened)} connections each holding a created game; RSS {before >> 20} -> {after >> 20} MiB)"
            )
            for connection in opened:
                connection.writer.close()
    finally:
        if process is not None:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Gambit relay benchmark")
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--no-validate", action="store_true")
    parser.add_argument("--spacing", type=float, default=None, help="--spacing for the server started here")
    parser.add_argument("--server", default=None, help="HOST:PORT of a server already running")
    asyncio.run(main(parser.parse_args()))
