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

from velhanet.cluster.workers import DaskMissing, connect, requireDask
from velhanet.i18n import _, ngettext
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
        version = next(p.version for p in players if p.name == name)
        print("velhanet-league: " + _("{name} has a new version ({version})").format(name=name, version=version))
    if everyGamePlayed(league, players, store):  # run again after the end: no cluster to start and stop
        print("velhanet-league: " + _("{league}: every game is played, no cluster started").format(league=league.name))
        print(asText(standingsOf(store, players)))
        print(whereText(league))
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
        print("velhanet-league: " + _("standings and games at {address}").format(address=site.address), flush=True)
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
        where = arguments.scheduler or ngettext(
            "a LocalCluster on 127.0.0.1, {n} worker(s)", "a LocalCluster on 127.0.0.1, {n} worker(s)", workers
        ).format(n=workers)
        said = ngettext(
            "{league}: {n} player, {format}, on {where}", "{league}: {n} players, {format}, on {where}", len(players)
        ).format(league=league.name, n=len(players), format=league.format, where=where)
        print(f"velhanet-league: {said}", flush=True)
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
        said = _("the cluster cannot be reached: {error}; run again to go on").format(error=error)
        print(f"velhanet-league: {said}", file=sys.stderr)
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
        verdict = {
            "H1": _("H1: {player} is {elo:g} Elo stronger").format(player=players[0].name, elo=sprt.elo1),
            "H0": _("H0: not stronger"),
        }
        decided = verdict.get(report.decision, _("undecided"))
        print(f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g}: LLR {report.llr:.2f}, {decided}")
    if report.replays:
        print(
            ngettext(
                "{n} game played again: a loss on time the machine caused (see docs/league.md)",
                "{n} games played again: a loss on time the machine caused (see docs/league.md)",
                report.replays,
            ).format(n=report.replays)
        )
    if report.interrupted:
        print(
            ngettext(
                "interrupted after {n} game this run; velhanet-league run {league} goes on",
                "interrupted after {n} games this run; velhanet-league run {league} goes on",
                report.played,
            ).format(n=report.played, league=arguments.league)
        )
    print(whereText(league))
    return 130 if report.interrupted else 0


def whereText(league: Any) -> str:
    return _("database: {database}; game logs: {logs}").format(database=league.databasePath, logs=league.logs)


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
        said = _("standings and games of {league} at {address} (Ctrl-C stops)").format(
            league=league.name, address=site.home
        )
        print(f"velhanet-league: {said}", flush=True)
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
    if arguments.command == "run":  # standings and export read the database: no cluster, no Dask
        try:
            requireDask("velhanet-league run", install="pip install 'velhanet[league]'")
        except DaskMissing as missing:
            print(f"velhanet-league: {missing}", file=sys.stderr)
            sys.exit(2)
    try:
        status = {"run": run, "standings": standings, "export": export}[arguments.command](arguments)
    except (LeagueError, SandboxUnavailable) as error:
        print(f"velhanet-league: {error}", file=sys.stderr)
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
