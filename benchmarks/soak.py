"""Does a long-running velhanet service keep its memory flat? N rounds of load and churn against a real process.

    python -m benchmarks.soak [--only socha,gambit,gobang,velha,web] [--rounds 10] [--seconds 15]
                              [--games 40] [--churn 300] [--rest 2] [--out FILE]

Each service gets a fresh ``twistd -n`` process on loopback (the JogoVelha peer on 127.0.0.71, its
inviter and the storm's senders on .72 to .79), then rounds: ``--games`` games at once for
``--seconds``, each played to its end and a new one started as each ends, while ``--churn`` clients
vanish mid-way (``benchmarks/soak_load.py`` says how for each service); then ``--rest`` seconds of
nothing, and one line: the server's resident memory and open descriptors (``/proc/PID``), the
games and churn of the round. The first round is the warm-up; the summary says how far memory rose
above it by the last round, and what that is per game.

``--churn 0`` soaks with load alone. ``web`` is ``gambit-server --web`` with spectators coming and
going (``--churn`` of them per round) beside its games; ``velha`` counts best-of-5 series as games
and ``--churn`` datagrams from other nicks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.internet import task
from twisted.internet.defer import ensureDeferred
from twisted.logger import globalLogBeginner, globalLogPublisher, textFileLogObserver

from benchmarks.abuse_clients import ServerProcess, freePort
from benchmarks.soak_inside import (
    VELHA_INVITER,
    VELHA_SOAKED,
    VELHA_STORM,
    InsideResult,
    measureInside,
    started,
    velhaOptions,
)
from benchmarks.soak_load import (
    PIRANHAS_GAME,
    TICTACTOE_GAME,
    GambitLoad,
    GobangLoad,
    RoundCount,
    SochaLoad,
    SpectatorLoad,
    VelhaLoad,
    freeUdpPort,
    sleep,
)

SERVICES = ("socha", "gambit", "gobang", "velha", "web")


@dataclass
class Reading:
    round: int
    rss: float
    fds: int
    count: RoundCount


def line(text: str, out: Any = None) -> None:
    print(text, flush=True)
    if out is not None:
        out.write(text + "\n")
        out.flush()


async def until(reactor: Any, condition: Any, seconds: float, what: str) -> None:
    """Poll ``condition()`` every 50 ms (a process we started, whose readiness has no event for us)."""
    waited = 0.0
    while not condition():
        if waited >= seconds:
            raise SystemExit(f"soak: {what} not ready within {seconds:.0f} s")
        await sleep(reactor, 0.05)
        waited += 0.05


def tcpListening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def startService(reactor: Any, name: str, work: Path, sochaGame: str) -> tuple[ServerProcess, Any, Any]:
    """The server process, the load that drives it, and what to stop afterwards (or None)."""
    if name in ("socha", "gambit", "web"):
        port = freePort()
        family = "socha-server" if name == "socha" else "gambit-server"
        arguments = [family, "--listen", f"tcp:{port}:interface=127.0.0.1"]
        webPort = freePort() if name == "web" else None
        if webPort is not None:
            arguments += ["--web", str(webPort)]
        server = ServerProcess(name, arguments, work / f"{name}.log")
        server.start()
        await until(reactor, lambda: tcpListening(port) and (webPort is None or tcpListening(webPort)), 30, name)
        if name == "socha":
            return server, SochaLoad(reactor, port, gameType=sochaGame), None
        games = GambitLoad(reactor, port)
        return server, (SpectatorLoad(reactor, games, webPort) if webPort is not None else games), None
    if name == "gobang":
        fifos = work / "fifos"
        fifos.mkdir()
        server = ServerProcess(name, ["gobang-server", "--fifo-dir", str(fifos)], work / "gobang.log")
        server.start()
        await until(reactor, lambda: (fifos / f"gbs.{server.pid}").exists(), 30, name)
        return server, GobangLoad(reactor, str(fifos), server.pid), None
    port = freeUdpPort(VELHA_SOAKED, VELHA_INVITER)
    soaked = ["velha", "--nick", "Soak", "--interface", VELHA_SOAKED, "--announce", VELHA_INVITER, *velhaOptions(port)]
    server = ServerProcess(name, soaked, work / "velha.log", cwd=work)
    server.start()
    inviter = started(
        reactor,
        "velha",
        "--nick",
        "Inviter",
        "--interface",
        VELHA_INVITER,
        "--announce",
        VELHA_SOAKED,
        *velhaOptions(port),
    )
    await until(reactor, lambda: inviter.peer.roster.get("Soak") is not None, 30, "the soaked velha peer")
    load = VelhaLoad(reactor, inviter.peer, "Soak", (VELHA_SOAKED, port), VELHA_STORM)
    return server, load, inviter


async def soak(reactor: Any, name: str, arguments: argparse.Namespace, out: Any) -> list[Reading]:
    with tempfile.TemporaryDirectory(prefix=f"velhanet-soak-{name}-") as directory:
        work = Path(directory)
        server, load, inviter = await startService(reactor, name, work, arguments.socha_game)
        readings: list[Reading] = []
        try:
            rss, fds = server.measure()
            line(f"{name}: started, {rss:.1f} MB, {fds} fds (pid {server.pid})", out)
            for number in range(1, arguments.rounds + 1):
                count = await load.round(arguments.seconds, arguments.games, arguments.churn)
                await sleep(reactor, arguments.rest)
                if not server.alive():
                    raise SystemExit(f"soak: the {name} server died in round {number}; its log: {server.logPath}")
                rss, fds = server.measure()
                readings.append(Reading(number, rss, fds, count))
                problems = f"  problems: {'; '.join(count.problems[:3])}" if count.problems else ""
                line(
                    f"{name} round {number:2d}: {rss:6.1f} MB {fds:4d} fds  "
                    f"games {count.games:5d}  churn {count.churned:5d}{problems}",
                    out,
                )
        finally:
            if isinstance(load, VelhaLoad):
                await load.stop()
            if inviter is not None:
                await inviter.stopService()
            server.stop()
    line(summary(name, readings), out)
    return readings


def summary(name: str, readings: list[Reading]) -> str:
    """How far memory rose above the warm-up round by the last round, and per game after the warm-up."""
    if len(readings) < 2:
        return f"{name}: too few rounds for a summary"
    warm, last = readings[0], readings[-1]
    games = sum(reading.count.games for reading in readings[1:])
    churn = sum(reading.count.churned for reading in readings[1:])
    grown = last.rss - warm.rss
    peak = max(reading.rss for reading in readings[1:]) - warm.rss
    perGame = grown * 1024 * 1024 / games if games else 0.0
    return (
        f"{name}: after the warm-up {warm.rss:.1f} MB, last {last.rss:.1f} MB "
        f"({grown:+.1f} MB, highest {peak:+.1f} MB) "
        f"over {games} games and {churn} churned; {perGame:+.0f} bytes per game; fds {warm.fds} -> {last.fds}"
    )


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SERVICES), help="services, comma-separated (default: all)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds, the first being the warm-up (default: 10)")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds of load per round (default: 15)")
    parser.add_argument("--games", type=int, default=40, help="games at once (default: 40)")
    parser.add_argument("--churn", type=int, default=300, help="clients that vanish per round (default: 300)")
    parser.add_argument("--rest", type=float, default=2.0, help="seconds of rest before each reading (default: 2)")
    parser.add_argument("--out", type=Path, default=None, help="also write the lines to this file")
    parser.add_argument(
        "--inside",
        action="store_true",
        help="run each service in this process and count, with tracemalloc and the collector, what it keeps "
        "(benchmarks/soak_inside.py) instead of a server process's resident memory",
    )
    parser.add_argument("--json", action="store_true", help="with --inside: one JSON object per service")
    parser.add_argument(
        "--min-games",
        type=int,
        default=0,
        help="with --inside: measured rounds after --rounds until they played this many games (at most 16 rounds)",
    )
    parser.add_argument(
        "--socha-game",
        default=PIRANHAS_GAME,
        choices=(PIRANHAS_GAME, TICTACTOE_GAME),
        help="socha: the game the players play (default: %(default)s, the real players' game; "
        f"{TICTACTOE_GAME} is the same protocol at a tenth of the cost a game)",
    )
    arguments = parser.parse_args(argv)
    arguments.services = [name.strip() for name in arguments.only.split(",") if name.strip()]
    unknown = set(arguments.services) - set(SERVICES)
    if unknown:
        parser.error(f"unknown service(s): {', '.join(sorted(unknown))}; choose from {', '.join(SERVICES)}")
    return arguments


def main(argv: list[str] | None = None) -> None:
    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    out = arguments.out.open("a") if arguments.out else None
    began = time.monotonic()
    if not arguments.json:
        line(
            f"soak {time.strftime('%Y-%m-%d %H:%M')}{' inside' if arguments.inside else ''}: "
            f"{arguments.rounds} rounds of {arguments.seconds:g} s, {arguments.games} games at once, "
            f"churn {arguments.churn}, rest {arguments.rest:g} s; {os.cpu_count()} CPUs",
            out,
        )

    async def run(reactor: Any) -> None:
        for name in arguments.services:
            if arguments.inside:
                inside(await insideOnce(reactor, name, arguments), arguments.json, out)
            else:
                await soak(reactor, name, arguments, out)
        if not arguments.json:
            line(f"soak: {time.monotonic() - began:.0f} s", out)

    task.react(lambda reactor: ensureDeferred(run(reactor)))


async def insideOnce(reactor: Any, name: str, arguments: argparse.Namespace) -> InsideResult:
    """One service measured inside this process, its log in a file of a temporary directory (as twistd's)."""
    with tempfile.TemporaryDirectory(prefix=f"velhanet-soak-{name}-") as directory:
        work = Path(directory)
        # Line-buffered: a text file's pending writes are the log lines' own strings until 8 KiB are due, which
        # a snapshot would count as kept whenever the buffer is fuller at the end than at the reference.
        with (work / "service.log").open("w", buffering=1) as log:
            observer = textFileLogObserver(log)
            globalLogPublisher.addObserver(observer)
            globalLogBeginner.beginLoggingTo([], discardBuffer=True, redirectStandardIO=False)
            try:
                return await measureInside(
                    reactor,
                    name,
                    arguments.rounds,
                    arguments.seconds,
                    arguments.games,
                    arguments.churn,
                    work,
                    arguments.socha_game,
                    arguments.min_games,
                )
            finally:
                globalLogPublisher.removeObserver(observer)


def inside(result: InsideResult, asJson: bool, out: Any) -> None:
    if asJson:
        line(json.dumps(dataclasses.asdict(result)), out)
        return
    perGame = result.grown / result.games if result.games else 0.0
    line(
        f"{result.service} inside: rounds (games, churned) {result.rounds}; kept {result.grown} bytes over "
        f"{result.games} games ({perGame:.0f} a game); cycles {result.cycles or 'none'}; "
        f"descriptors {'back' if not result.descriptors else result.descriptors}; "
        f"problems {result.problems or 'none'}; ran {result.ran:.1f} s, waited {result.waited:.1f} s for a processor",
        out,
    )
    for top in result.top:
        line(f"    {top}", out)


if __name__ == "__main__":
    main()
