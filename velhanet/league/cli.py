"""``velhanet-league``: a whole class's Software-Challenge players against each other, on one machine or a cluster.

    velhanet-league run LEAGUE.toml [--workers N | --scheduler tcp://HOST:8786] [--web ENDPOINT] [--sandbox …]
    velhanet-league standings LEAGUE.toml [--format text|csv|json]
    velhanet-league export LEAGUE.toml [--format csv|json] [--out FILE]

``run`` plays every game of the league not yet in its database (SQLite,
``league.db`` beside the league file) and prints the standings; run it again
after Ctrl-C, a crash or a dead scheduler and it goes on where it stopped.
Without ``--scheduler`` it starts a Dask ``LocalCluster`` on this machine,
bound to 127.0.0.1, with ``--workers`` workers of one thread each (by default
as many games as the cores hold with every player thinking: half the cores);
with ``--scheduler`` the same league runs on a cluster started with ``dask
scheduler`` and ``dask worker`` (docs/league.md). ``standings`` reads the
database; ``export`` writes every game.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from velhanet.cluster.workers import connect
from velhanet.league.config import LeagueError, discoverPlayers, loadLeague
from velhanet.league.store import Store, asDict
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments, settingsFrom
from velhanet.startup import ArgumentParser


def defaultWorkers() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


LEAGUE_FILE = "the league file; its database and game logs live beside it (docs/league.md)"


def parser() -> argparse.ArgumentParser:
    top = ArgumentParser(prog="velhanet-league", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True, metavar="run|standings|export", help="what to do")
    run = commands.add_parser("run", help="play the games not yet played, then print the standings")
    run.add_argument("league", metavar="LEAGUE.toml", help=LEAGUE_FILE)
    run.add_argument(
        "--workers",
        type=int,
        default=defaultWorkers(),
        help="games at once on this machine, one Dask worker each (default: half the cores, %(default)s here)",
    )
    run.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:8786",
        help="a running Dask scheduler (default: a LocalCluster)",
    )
    run.add_argument(
        "--web",
        default=None,
        metavar="ENDPOINT",
        help="the standings live, every running game watchable, every finished one replayable (a bare port: "
        "127.0.0.1 only) (default: off)",
    )
    addSandboxArguments(run)
    for name, help in (("standings", "the standings from the database"), ("export", "every game from the database")):
        command = commands.add_parser(name, help=help)
        command.add_argument("league", metavar="LEAGUE.toml", help=LEAGUE_FILE)
        formats = ("text", "csv", "json") if name == "standings" else ("csv", "json")
        command.add_argument("--format", choices=formats, default=formats[0], help="(default: %(default)s)")
        if name == "export":
            command.add_argument("--out", default="-", metavar="FILE", help="(default: standard output)")
        else:
            command.add_argument(
                "--web",
                default=None,
                metavar="ENDPOINT",
                help="serve the standings and every finished game, replayable, until Ctrl-C, instead of printing "
                "(a bare port: 127.0.0.1 only; no cluster is started) (default: off)",
            )
    return top


def cluster(arguments: argparse.Namespace) -> tuple[Any, Any]:
    """(the client, the LocalCluster it runs on or None)."""
    return connect(arguments.scheduler, arguments.workers)


def run(arguments: argparse.Namespace) -> int:
    from velhanet.league.runner import Run, RunRefused, everyGamePlayed
    from velhanet.league.standings import asText, standingsOf

    league = loadLeague(Path(arguments.league))
    players = discoverPlayers(league, say=lambda line: print(f"velhanet-league: {line}", flush=True))
    settings = settingsFrom(arguments)
    # Here only to say it before any cluster starts: the games' processes each make their own (task.py).
    Sandbox.forCommand(settings, say=lambda line: print(f"velhanet-league: {line}", file=sys.stderr))
    store = Store(league.databasePath)
    for name in store.addPlayers(players):
        print(f"velhanet-league: {name} has a new version ({next(p.version for p in players if p.name == name)})")
    if everyGamePlayed(league, players, store):  # run again after the end: no cluster to start and stop
        print(f"velhanet-league: {league.name}: every game is played, no cluster started")
        print(asText(standingsOf(store, players)))
        print(f"database: {league.databasePath}; game logs: {league.logs}")
        return 0
    site = None
    live = arguments.web is not None
    if live:
        from velhanet.league.site import LeagueSite, SiteUnavailable

        try:
            site = LeagueSite(arguments.web, league, players)
        except SiteUnavailable as error:
            print(f"velhanet-league: {error}", file=sys.stderr)
            return 1
        print(f"velhanet-league: standings and games at {site.address}", flush=True)
    try:
        client, local = cluster(arguments)
    except BaseException:
        if site is not None:
            site.stop()
        raise
    try:
        say = lambda line: print(f"\nvelhanet-league: {line}", file=sys.stderr)  # noqa: E731
        onFinished = None
        if site is not None:
            site.follow(client)
            onFinished = site.finished
        workers = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
        where = arguments.scheduler or f"a LocalCluster on 127.0.0.1, {workers} worker(s)"
        print(f"velhanet-league: {league.name}: {len(players)} players, {league.format}, on {where}", flush=True)
        play = Run(league, players, store, client, settings, say, live=live, onFinished=onFinished)
        previous = signal.getsignal(signal.SIGINT)

        def interrupt(*_: object) -> None:
            play.stopping.set()
            play.cancelAll()

        signal.signal(signal.SIGINT, interrupt)
        try:
            report = play.play()
        except RunRefused as error:
            print(f"velhanet-league: {error}", file=sys.stderr)
            return 1
        finally:
            signal.signal(signal.SIGINT, previous)
    except OSError as error:
        print(f"velhanet-league: the cluster cannot be reached: {error}; run again to go on", file=sys.stderr)
        return 1
    finally:
        if site is not None:
            site.stop()
        client.close()
        if local is not None:
            local.close()
    print(asText(standingsOf(store, players)))
    if report.llr is not None and league.sprt is not None:
        sprt = league.sprt
        verdict = {"H1": f"H1: {players[0].name} is {sprt.elo1:g} Elo stronger", "H0": "H0: not stronger"}
        decided = verdict.get(report.decision, "undecided")
        print(f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g}: LLR {report.llr:.2f}, {decided}")
    if report.replays:
        print(f"{report.replays} game(s) played again: a loss on time the machine caused (see docs/league.md)")
    if report.interrupted:
        print(f"interrupted after {report.played} game(s) this run; velhanet-league run {arguments.league} goes on")
    print(f"database: {league.databasePath}; game logs: {league.logs}")
    return 130 if report.interrupted else 0


def standings(arguments: argparse.Namespace) -> int:
    from velhanet.league.standings import asCsv, asJson, asText, standingsOf

    league = loadLeague(Path(arguments.league))
    players = discoverPlayers(league)
    if arguments.web is not None:  # the site of `run --web` over the database alone: a league over, or stopped
        from velhanet.league.site import LeagueSite, SiteUnavailable

        try:
            site = LeagueSite(arguments.web, league, players, running=False)
        except SiteUnavailable as error:
            print(f"velhanet-league: {error}", file=sys.stderr)
            return 1
        print(f"velhanet-league: standings and games of {league.name} at {site.home} (Ctrl-C stops)", flush=True)
        site.serveUntilInterrupted()
        return 0
    store = Store(league.databasePath)
    table = standingsOf(store, players)
    print(
        {"text": asText, "csv": asCsv, "json": asJson}[arguments.format](table),
        end="" if arguments.format == "csv" else "\n",
    )
    return 0


def export(arguments: argparse.Namespace) -> int:
    league = loadLeague(Path(arguments.league))
    rows = [asDict(row) for row in Store(league.databasePath).games()]
    if arguments.format == "json":
        text = json.dumps(rows, indent=2) + "\n"
    else:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["id"])
        writer.writeheader()
        writer.writerows(rows)
        text = out.getvalue()
    if arguments.out == "-":
        sys.stdout.write(text)
    else:
        Path(arguments.out).write_text(text, encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> None:
    arguments = parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        status = {"run": run, "standings": standings, "export": export}[arguments.command](arguments)
    except (LeagueError, SandboxUnavailable) as error:
        print(f"velhanet-league: {error}", file=sys.stderr)
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
