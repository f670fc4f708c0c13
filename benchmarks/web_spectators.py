"""What watching costs the players: gambit-server's relay with 0 and 50 spectators, and memory per spectator.

    python benchmarks/web_spectators.py relay [--games 100] [--spectators 50]   (root: the bench's namespace)
    python benchmarks/web_spectators.py memory [--spectators 250]

``relay`` runs the course's ``gambit-bench`` (``BENCH``, default
``../shared/bench``, as ``benchmarks/compare.sh``) three times in one run,
on the same load: ``gambit-server`` without ``--web``; with ``--web`` and
nobody watching; with ``--web`` and N spectators. Each spectator follows the
list's event stream (an event for every move of every game) and, one at a
time, the page stream of a game it saw start. The spectators run in a
process forked by the server command before it becomes the server (so
gambit-bench measures the server's CPU and RSS only), moved to core 1
beside the load generator. Compare the ratios; the machine is shared.

``memory`` starts a server with ``--web`` on loopback, opens N spectators
(half on the list, half on one game's page) and prints the server's RSS
growth per spectator (from ``/proc/PID/status``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TWISTD = [sys.executable, "-c", "from twisted.scripts.twistd import run; run()"]


async def _stream(port: int, path: str, stopAt: bytes | None = None) -> list[bytes]:
    """Read one event stream to its end (or the first ``stopAt``); the ``data`` lines of its ``game`` events."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    found: list[bytes] = []
    try:
        while line := await reader.readline():
            if line.startswith(b"data: {") and b'"state": "playing"' in line:
                found.append(line)
            if stopAt is not None and stopAt in line:
                break
    finally:
        writer.close()
    return found


async def _spectator(port: int) -> None:
    """The list, and one game's page at a time: a new game is watched once the previous one ended."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
    watching: asyncio.Task[list[bytes]] | None = None
    while line := await reader.readline():
        if watching is not None and not watching.done():
            continue
        match = re.match(rb'data: \{"id": "(\d+)".*"state": "playing"', line)
        if match:
            watching = asyncio.ensure_future(_stream(port, f"/game/{match.group(1).decode()}/events", b'"result"'))
    writer.close()


def _waitForPort(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)  # another process's port: nothing to await
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def serve(port: int, spectators: int, web: bool) -> None:
    """The server command given to gambit-bench: fork the spectators, then become ``gambit-server``."""
    webPort = port + 1
    arguments = [
        "-n",
        "--pidfile=",
        "--logfile=/dev/null",
        "gambit-server",
        "--listen",
        f"tcp:{port}:interface=127.0.0.1",
    ]
    if web:
        arguments += ["--web", str(webPort)]
    if spectators and os.fork() == 0:
        os.sched_setaffinity(0, {1} if os.cpu_count() and os.cpu_count() > 1 else {0})  # type: ignore[operator]
        _waitForPort(webPort)

        async def everyone() -> None:
            await asyncio.gather(*(_spectator(webPort) for _ in range(spectators)), return_exceptions=True)

        asyncio.run(everyone())
        os._exit(0)
    os.execv(TWISTD[0], [*TWISTD, *arguments])


def relay(games: int, spectators: int) -> None:
    bench = Path(os.environ.get("BENCH", ROOT.parent / "shared" / "bench"))
    port = 22022
    os.environ.setdefault("XDG_CACHE_HOME", str(ROOT / ".cache"))
    rows = [
        ("no --web", 0, False),
        ("--web, 0 spectators", 0, True),
        (f"--web, {spectators} spectators", spectators, True),
    ]
    rates: dict[str, float] = {}
    for name, count, web in rows:
        command = [sys.executable, __file__, "serve", str(port), str(count), "web" if web else "noweb"]
        out = subprocess.run(
            [str(bench / "gambit-bench"), str(port), str(games), *command], capture_output=True, text=True
        )
        line = next(
            (x for x in out.stdout.splitlines() if "moves_per_s=" in x or "rate=" in x), out.stdout + out.stderr
        )
        print(f"## {name}\n{line.strip()}")
        found = re.search(r"(?:moves_per_s|rate)=([\d.]+)", line)
        if found:
            rates[name] = float(found.group(1))
    base = rates.get("--web, 0 spectators")
    watched = rates.get(f"--web, {spectators} spectators")
    if base and watched:
        print(f"ratio {spectators} spectators / 0 spectators: {watched / base:.3f}")
    if base and rates.get("no --web"):
        print(f"ratio --web (0 spectators) / no --web: {base / rates['no --web']:.3f}")


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("no VmRSS")


async def _openMany(webPort: int, count: int) -> list[asyncio.StreamWriter]:
    writers = []
    for n in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", webPort)
        path = "/events" if n % 2 == 0 else "/game/1/events"
        writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        await reader.readuntil(b"\n\n")  # the headers, then the first event: the spectator is in
        await reader.readuntil(b"\n\n")
        writers.append(writer)
    return writers


def memory(spectators: int) -> None:
    from velhanet.listening import freePort

    port, webPort = freePort(), freePort()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen(
        [
            *TWISTD,
            "-n",
            "--pidfile=",
            "--logfile=/dev/null",
            "gambit-server",
            "--listen",
            f"tcp:{port}:interface=127.0.0.1",
            "--web",
            str(webPort),
        ],
        env=env,
        cwd=ROOT,
    )
    try:
        _waitForPort(webPort)
        players = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        players[0].sendall(b'{"cmd":2,"user":"alice","args":""}\n')
        gameId = re.search(rb'"args":\s*"([0-9a-f]{4})"', players[0].recv(4096), re.IGNORECASE)
        assert gameId is not None
        players[1].sendall(b'{"cmd":3,"user":"bob","args":"' + gameId.group(1) + b'"}\n')
        players[1].recv(4096)
        time.sleep(0.5)  # let the server settle before the first reading
        before = rss(server.pid)

        async def measure() -> int:
            writers = await _openMany(webPort, spectators)
            after = rss(server.pid)
            for writer in writers:
                writer.close()
            return after

        after = asyncio.run(measure())
        print(f"server RSS {before} kB -> {after} kB with {spectators} spectators open")
        print(f"memory per spectator: {(after - before) / spectators:.1f} kB")
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "web")
        return
    parser = argparse.ArgumentParser(prog="benchmarks/web_spectators.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    relayParser = sub.add_parser("relay")
    relayParser.add_argument("--games", type=int, default=100)
    relayParser.add_argument("--spectators", type=int, default=50)
    memoryParser = sub.add_parser("memory")
    memoryParser.add_argument("--spectators", type=int, default=250)  # the site takes 256 at most
    arguments = parser.parse_args()
    if arguments.mode == "relay":
        relay(arguments.games, arguments.spectators)
    else:
        memory(arguments.spectators)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
