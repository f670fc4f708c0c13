"""``velhanet-league``: ratings and the sequential test against known values, the schedule, the
database, and runs on a Dask cluster in this process's machine (pairing and sides, resume without
double counting, a worker killed in the middle of a game, a loss on time the machine caused).

The cluster tests give the runner a quick fake game (``quickGame``: a result from the seed, after a
short sleep) so that they test the run itself; ``RealGameTests`` plays real games of velhanet's example
players through the real task, and the command end to end.
"""

from __future__ import annotations

import http.client
import itertools
import json
import math
import os
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.processes import ENVIRONMENT, PYTHON, ROOT
from velhanet.cluster.workers import codeVersion, localCluster
from velhanet.league import game as gamemodule
from velhanet.league.config import League, LeagueError, Player, discoverPlayers, folderVersion, loadLeague
from velhanet.league.ratings import ELO_PER_NATURAL, Game, SprtBounds, expected, fitRatings, llrLogistic, pentanomial
from velhanet.league.runner import Run, RunRefused, outcomeOf
from velhanet.league.schedule import pairSeed, schedule, sprtPairs
from velhanet.league.standings import asCsv, asJson, asText, standingsOf
from velhanet.league.store import SCHEMA_VERSION, Outcome, Store, StoreError
from velhanet.sandbox.limits import SandboxSettings

EXAMPLE = "python3 -m velhanet.socha.example --host {host} --port {port} --reservation {reservation}"


# -- ratings -----------------------------------------------------------------------------------


def logLikelihood(games: list[Game], ratings: list[float]) -> float:
    total = 0.0
    for game in games:
        p = expected(ratings[game.first] - ratings[game.second])
        total += game.score * math.log(p) + (1 - game.score) * math.log(1 - p)
    return total


class RatingTests(SynchronousTestCase):
    def test_twoPlayersTheClosedForm(self) -> None:
        """Two players: the difference is elo(score), the margin the normal approximation's."""
        games = [Game(0, 1, 1.0)] * 6 + [Game(0, 1, 0.0)] * 2 + [Game(0, 1, 0.5)] * 2
        a, b = fitRatings(2, games, prior=0)
        self.assertAlmostEqual(a.elo - b.elo, -400 * math.log10(1 / 0.7 - 1), places=6)  # 147.19
        self.assertAlmostEqual(a.elo, -b.elo, places=9)  # the mean is 0
        p = 0.7  # the fitted expectation; information n p (1 - p) for the difference, a quarter for each
        self.assertAlmostEqual(
            a.margin, 1.959963984540054 * ELO_PER_NATURAL / math.sqrt(4 * 10 * p * (1 - p)), places=3
        )

    def test_threePlayersAgainstAGridSearch(self) -> None:
        """An independent maximum: the log-likelihood on a 1-Elo grid around the fit, mean fixed at 0."""
        games = (
            [Game(0, 1, 1.0)] * 3
            + [Game(0, 1, 0.0)] * 1
            + [Game(1, 2, 1.0)] * 3
            + [Game(1, 2, 0.5)] * 2
            + [Game(0, 2, 0.5)] * 2
            + [Game(0, 2, 1.0)] * 1
            + [Game(2, 0, 1.0)] * 1
        )
        fitted = [r.elo for r in fitRatings(3, games, prior=0)]
        best = max(
            (
                (fitted[0] + d0, fitted[1] + d1, -(fitted[0] + d0) - (fitted[1] + d1))
                for d0 in range(-8, 9)
                for d1 in range(-8, 9)
            ),
            key=lambda ratings: logLikelihood(games, list(ratings)),
        )
        for mine, grid in zip(fitted, best, strict=True):
            self.assertLess(abs(mine - grid), 1.0)
        # At the maximum each player's expected score is its real one.
        for player in range(3):
            real = sum(g.score if g.first == player else 1 - g.score for g in games if player in (g.first, g.second))
            want = sum(
                expected(fitted[g.first] - fitted[g.second])
                if g.first == player
                else expected(fitted[g.second] - fitted[g.first])
                for g in games
                if player in (g.first, g.second)
            )
            self.assertAlmostEqual(real, want, places=6)

    def test_aPlayerThatWonEverything(self) -> None:
        games = [Game(0, 1, 1.0)] * 5 + [Game(1, 2, 0.5)] * 4
        pure = fitRatings(3, games, prior=0)
        self.assertTrue(pure[0].clipped)
        self.assertTrue(math.isinf(pure[0].margin))
        regular = fitRatings(3, games)  # the prior: finite, ahead of the others
        self.assertFalse(regular[0].clipped)
        self.assertGreater(regular[0].elo, regular[1].elo)
        self.assertTrue(math.isfinite(regular[0].margin))


class SprtTests(SynchronousTestCase):
    """Known values: fishtest's own LLRcalc.LLR_logistic (official-stockfish/fishtest b8eecff2)."""

    KNOWN = [
        ([10, 20, 30, 25, 15], 0, 10, 0.48228615632662875),
        ([5, 30, 50, 30, 5], 0, 5, -0.05961915002743113),
        ([3, 40, 120, 50, 7], -1, 3, 0.6582186754708794),
        ([0, 2, 10, 30, 20], 0, 20, 3.4661878325901547),
        ([20, 30, 10, 2, 0], 0, 20, -3.671542972050825),
    ]

    def test_llrAsFishtest(self) -> None:
        for counts, elo0, elo1, want in self.KNOWN:
            self.assertAlmostEqual(llrLogistic(elo0, elo1, counts), want, places=9, msg=str(counts))

    def test_boundsAndDecisions(self) -> None:
        bounds = SprtBounds.of(0.05, 0.05)
        self.assertAlmostEqual(bounds.upper, 2.9444389791664403)
        self.assertAlmostEqual(bounds.lower, -2.9444389791664403)
        self.assertEqual([bounds.decision(llr) for _, _, _, llr in self.KNOWN], ["", "", "", "H1", "H0"])
        self.assertEqual(pentanomial([0, 0.5, 1, 1, 1.5, 2, 2]), [1, 1, 2, 1, 2])


# -- players, schedule, database --------------------------------------------------------------


def makePlayers(testCase: SynchronousTestCase, names: list[str], command: str = EXAMPLE) -> tuple[League, list[Player]]:
    root = Path(testCase.mktemp()).resolve()
    for name in names:
        (root / "players" / name).mkdir(parents=True)
        (root / "players" / name / "velhanet-run").write_text(command + f" --seed {len(name)}\n")
    (root / "league.toml").write_text('name = "test"\nplayers = "players"\npairs = 2\nseed = 7\n')
    league = loadLeague(root / "league.toml")
    return league, discoverPlayers(league)


class ScheduleTests(SynchronousTestCase):
    def test_roundRobinPairsAndSides(self) -> None:
        league, players = makePlayers(self, ["dan", "ana", "cy", "bo"])
        games = schedule(league, players)
        self.assertEqual(len(games), 6 * 2 * 2)  # 6 pairings, 2 pairs, both sides
        self.assertEqual(
            [(g.a.name, g.b.name) for g in games[:12:2]], list(itertools.combinations(["ana", "bo", "cy", "dan"], 2))
        )
        for first, second in zip(games[::2], games[1::2], strict=True):
            self.assertEqual((first.a, first.b, first.pair, first.seed), (second.a, second.b, second.pair, second.seed))
            self.assertEqual(first.teams, tuple(reversed(second.teams)))  # the same position, sides swapped
        self.assertEqual(len({g.seed for g in games}), 12)
        again = schedule(loadLeague(league.path), discoverPlayers(loadLeague(league.path)))
        self.assertEqual(again, games)  # read again: the very same games

    def test_gauntletAndSprt(self) -> None:
        league, players = makePlayers(self, ["ana", "bo", "cy"])
        gauntlet = League(**{**league.__dict__, "format": "gauntlet", "gauntlet": "bo"})
        self.assertEqual({(g.a.name, g.b.name) for g in schedule(gauntlet, players)}, {("ana", "bo"), ("bo", "cy")})
        games = list(sprtPairs(league, players[:2], 3, 2))
        self.assertEqual([(g.pair, g.side) for g in games], [(3, 0), (3, 1), (4, 0), (4, 1)])

    def test_aNewVersionMeetsTheSamePositions(self) -> None:
        league, players = makePlayers(self, ["ana", "bo"])
        before = players[0].version
        (players[0].folder / "strategy.py").write_text("# better\n")
        changed = discoverPlayers(league)
        self.assertNotEqual(changed[0].version, before)
        self.assertEqual(folderVersion(players[1].folder), players[1].version)
        self.assertEqual(pairSeed(league, players[0], players[1], 0), pairSeed(league, changed[0], changed[1], 0))

    def test_leagueFileErrors(self) -> None:
        root = Path(self.mktemp())
        root.mkdir()
        for text, said in (
            ("format = 'swiss'", "format must be"),
            ("pairs = 'ten'", "pairs must be a whole number"),
            ('format = "gauntlet"', "needs gauntlet"),
            ("[broken", "is not TOML"),
        ):
            (root / "l.toml").write_text(text)
            with self.assertRaises(LeagueError) as raised:
                loadLeague(root / "l.toml")
            self.assertIn(said, str(raised.exception))


class StoreTests(SynchronousTestCase):
    def test_eachGameScheduledAndFinishedOnce(self) -> None:
        league, players = makePlayers(self, ["ana", "bo"])
        store = Store(league.databasePath)
        games = schedule(league, players)
        self.assertEqual(store.schedule(games), 4)
        self.assertEqual(store.schedule(games), 0)
        (gameId, first), *_ = store.pending(games)
        win = Outcome("ana", False, "", "r", 60, 3.0, "w1")
        self.assertTrue(store.finish(gameId, win, first.a.name))
        self.assertFalse(store.finish(gameId, Outcome("bo", False, "", "r", 60, 3.0, "w2"), first.a.name))
        self.assertEqual(store.counts(), {"done": 1, "scheduled": 3})
        self.assertEqual([row["winner"] for row in store.games("done")], ["ana"])
        self.assertEqual(len(store.pending(games)), 3)


# -- runs on a cluster ----------------------------------------------------------------------


def leagueCommand(command: str, leagueFile: Path, *options: str) -> str:
    """``velhanet-league COMMAND LEAGUE.toml OPTIONS``: what it printed."""
    arguments = [PYTHON, "-m", "velhanet.league.cli", command, str(leagueFile), *options]
    return subprocess.run(arguments, cwd=ROOT, env=ENVIRONMENT, capture_output=True, text=True, timeout=120).stdout


def quickGame(gameId: int, spec: dict[str, Any], archives: list[bytes], expectedVersion: str) -> dict[str, Any]:
    """A fake game for the runner: team ONE wins when its name sorts first, after a short sleep.

    ``VELHANET_TEST_DIE_ONCE`` (a folder): the first attempt of each odd-numbered game kills its own
    worker process in the middle; ``VELHANET_TEST_OVERLOAD_ONCE``: the first attempt of every game
    reports an overload.
    """
    assert archives and all(isinstance(a, bytes) for a in archives)
    assert expectedVersion == codeVersion()
    marker = os.environ.get("VELHANET_TEST_DIE_ONCE") or os.environ.get("VELHANET_TEST_OVERLOAD_ONCE")
    first = False
    if marker:
        flag = Path(marker) / f"game-{gameId}"
        first = not flag.exists()
        flag.touch()
    time.sleep(0.2)
    if first and gameId % 2 and os.environ.get("VELHANET_TEST_DIE_ONCE"):
        (Path(str(marker)) / f"died-{gameId}").touch()
        os.kill(os.getpid(), signal.SIGKILL)
    one, two = (team["name"] for team in spec["teams"])
    overloaded = "machine overloaded (test)" if first and os.environ.get("VELHANET_TEST_OVERLOAD_ONCE") else ""
    return {
        "winnerTeam": 0 if one < two else 1,
        "void": False,
        "lossKind": "time" if overloaded else "",
        "reason": "test",
        "moves": 10,
        "seconds": 0.2,
        "notes": [],
        "overloaded": overloaded,
        "worker": os.environ.get("DASK_WORKER_NAME", str(os.getpid())),
        "xml": "",
    }


class ClusterRuns(SynchronousTestCase):
    """A LocalCluster of two worker processes on 127.0.0.1, made by this test."""

    def cluster(self, workers: int = 2, **environment: str) -> Any:
        previous = {key: os.environ.get(key) for key in environment}
        os.environ.update(environment)  # worker processes inherit it, restarted ones too (their nannies are here)

        def restore() -> None:
            for key, value in previous.items():
                if value is None:
                    os.environ.pop(key)
                else:
                    os.environ[key] = value

        self.addCleanup(restore)
        client, local = localCluster(workers)
        self.addCleanup(local.close)
        self.addCleanup(client.close)
        return client

    def runLeague(self, client: Any, league: League, players: list[Player], store: Store, **kwargs: Any) -> Run:
        run = Run(
            league, players, store, client, SandboxSettings("off"), say=lambda line: None, task=quickGame, **kwargs
        )
        run.play()
        return run


class RunTests(ClusterRuns):
    def test_everyGameOnceWithItsSides(self) -> None:
        league, players = makePlayers(self, ["ana", "bo", "cy"])
        store = Store(league.databasePath)
        run = self.runLeague(self.cluster(), league, players, store)
        rows = list(store.games())
        self.assertEqual(len(rows), 3 * 2 * 2)
        self.assertTrue(all(row["state"] == "done" for row in rows))
        self.assertEqual(run.report.played, 12)
        for row in rows:
            teamOne = row["a"] if row["side"] == 0 else row["b"]
            teamTwo = row["b"] if row["side"] == 0 else row["a"]
            self.assertEqual(row["winner"], min(teamOne, teamTwo))  # quickGame's rule: the side was what we sent
        self.assertEqual(len({row["worker"] for row in rows}), 2)  # both workers played

    def test_resumeNeverPlaysOrCountsAGameTwice(self) -> None:
        league, players = makePlayers(self, ["ana", "bo", "cy"])
        store = Store(league.databasePath)
        client = self.cluster()

        class StoppedAfterThree(Run):  # Ctrl-C after the third game was recorded
            def settle(self, *args: Any) -> None:
                super().settle(*args)
                if self.report.played >= 3:
                    self.stopping.set()

        first = StoppedAfterThree(
            league, players, store, client, SandboxSettings("off"), say=lambda line: None, task=quickGame
        )
        first.play()
        self.assertTrue(first.report.interrupted)
        done = store.counts().get("done", 0)
        self.assertGreaterEqual(done, 3)
        self.assertLess(done, 12)
        again = self.runLeague(client, league, players, store)
        self.assertEqual(again.report.played, 12 - done)
        self.assertEqual(store.counts(), {"done": 12})
        finished = [row["finished"] for row in store.games()]
        self.assertEqual(len(finished), len(set(finished)))  # each recorded once, at its own moment

    def test_aWorkerKilledInTheMiddleOfAGame(self) -> None:
        """A game's first attempt kills its worker: the scheduler gives it to another, it counts once.

        Two of the four games kill theirs, on a cluster of three: a worker is always left for the
        games again, however long the nannies take to start new workers on a loaded machine."""
        league, players = makePlayers(self, ["ana", "bo"])
        store = Store(league.databasePath)
        markers = tempfile.mkdtemp()
        run = self.runLeague(self.cluster(workers=3, VELHANET_TEST_DIE_ONCE=markers), league, players, store)
        self.assertEqual(store.counts(), {"done": 4})
        self.assertEqual(run.report.played, 4)
        ids = sorted(row["id"] for row in store.games())
        died = sorted(name for name in os.listdir(markers) if name.startswith("died-"))
        self.assertEqual(died, [f"died-{n}" for n in ids if n % 2])  # the odd ones did kill their workers
        self.assertEqual(len(ids), 4)  # and each game is recorded once

    def test_aLossOnTimeTheMachineCausedIsPlayedAgain(self) -> None:
        league, players = makePlayers(self, ["ana", "bo"])
        store = Store(league.databasePath)
        markers = tempfile.mkdtemp()
        run = self.runLeague(self.cluster(VELHANET_TEST_OVERLOAD_ONCE=markers), league, players, store)
        self.assertEqual(run.report.replays, 4)
        rows = list(store.games())
        self.assertEqual([row["replays"] for row in rows], [1, 1, 1, 1])
        self.assertEqual({row["loss_kind"] for row in rows}, {""})  # the recorded results are the replays'
        self.assertEqual({row["replayed_because"] for row in rows}, {"machine overloaded (test)"})

    def test_aRunWithNoWorkerLeftStopsAndSaysSo(self) -> None:
        """Never stuck: a cluster that lost every worker stops the run, its games still scheduled."""
        league, players = makePlayers(self, ["ana", "bo"])
        store = Store(league.databasePath)
        client, local = localCluster(0)
        self.addCleanup(local.close)
        self.addCleanup(client.close)

        class WorkersGone(Run):
            noWorkersGrace = 1.0
            watchEvery = 0.1

            def checkWorkers(self) -> str:  # they were there when the run began
                return codeVersion()

        run = WorkersGone(league, players, store, client, SandboxSettings("off"), say=print, task=quickGame)
        with self.assertRaises(RunRefused) as refused:
            run.play()
        self.assertIn("no worker for 1 s, 4 game(s) still to play", str(refused.exception))
        self.assertEqual(store.counts(), {"scheduled": 4})

    def test_aWorkerOfAnotherVelhanetIsRefused(self) -> None:
        league, players = makePlayers(self, ["ana", "bo"])

        class OtherVersion:
            def run(self, function: Any) -> dict[str, str]:
                return {"tcp://127.0.0.1:40001": codeVersion(), "tcp://127.0.0.1:40002": "0.0.9+0123456789"}

        run = Run(league, players, Store(league.databasePath), OtherVersion(), SandboxSettings("off"), say=print)
        with self.assertRaises(RunRefused) as refused:
            run.play()
        self.assertIn("the worker at tcp://127.0.0.1:40002 runs velhanet 0.0.9+0123456789", str(refused.exception))


class OverloadRuleTests(SynchronousTestCase):
    def test_starvedNotSleeping(self) -> None:
        self.assertTrue(gamemodule.overloaded(turnWall=2.2, ran=0.4, waited=1.5))  # ready, not run: the machine
        self.assertFalse(gamemodule.overloaded(turnWall=2.2, ran=0.01, waited=0.0))  # slept or hung: its own
        self.assertFalse(gamemodule.overloaded(turnWall=2.2, ran=2.1, waited=0.6))  # it had a core
        self.assertEqual(
            gamemodule.named("p2 exited with status 1", [{"name": "ana"}, {"name": "bo"}]), "bo exited with status 1"
        )


class StandingsTests(SynchronousTestCase):
    def test_textCsvJson(self) -> None:
        league, players = makePlayers(self, ["ana", "bo", "cy"])
        store = Store(league.databasePath)
        games = schedule(league, players)
        store.schedule(games)
        for gameId, game in store.pending(games):
            winner = "ana" if "ana" in (game.a.name, game.b.name) else None
            kind = "time" if winner and "bo" in (game.a.name, game.b.name) else ""
            store.finish(gameId, Outcome(winner, False, kind, "r", 40, 2.0, "w"), game.a.name)
        table = standingsOf(store, players)
        self.assertEqual([line.name for line in table.lines], ["ana", "bo", "cy"][:1] + sorted(["bo", "cy"]))
        ana = table.lines[0]
        self.assertEqual((ana.wins, ana.draws, ana.losses), (8, 0, 0))
        bo = next(line for line in table.lines if line.name == "bo")
        self.assertEqual(bo.lossesBy, {"time": 4})
        text = asText(table)
        self.assertIn("head to head", text)
        self.assertIn("1.00*", text)  # ana against either: 4 of 4, significant
        self.assertIn("12 games counted", text)
        rows = asCsv(table).splitlines()
        self.assertEqual(rows[0].split(",")[:4], ["rank", "player", "version", "elo"])
        data = json.loads(asJson(table))
        self.assertEqual(data["players"][0]["name"], "ana")
        self.assertEqual(len(data["head_to_head"]), 3)
        self.assertEqual(
            outcomeOf(
                {"winnerTeam": 1, "void": False, "lossKind": "", "reason": "", "moves": 1, "seconds": 1}, games[1]
            ).winner,
            games[1].teams[1].name,
        )


class RealGameTests(SynchronousTestCase):
    """Real games: velhanet's example players through the real task and the real command."""

    def test_theCommandEndToEnd(self) -> None:
        root = Path(self.mktemp()).resolve()
        for name, strategy in (("greedy", " --greedy"), ("random", " --seed {seed}"), ("random2", " --seed 5")):
            (root / "players" / name).mkdir(parents=True)
            (root / "players" / name / "velhanet-run").write_text(EXAMPLE + strategy + "\n")
        (root / "league.toml").write_text('name = "real"\npairs = 1\nseed = 2\n')
        command = [PYTHON, "-m", "velhanet.league.cli", "run", str(root / "league.toml"), "--workers", "2"]
        result = subprocess.run(command, cwd=ROOT, env=ENVIRONMENT, capture_output=True, text=True, timeout=600)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("on a LocalCluster on 127.0.0.1, 2 worker(s)", result.stdout)
        self.assertIn("6 games counted, 0 still to play, 0 void", result.stdout)
        logs = sorted((root / "league-logs").glob("game-*.xml"))
        self.assertEqual(len(logs), 6)
        again = subprocess.run(command, cwd=ROOT, env=ENVIRONMENT, capture_output=True, text=True, timeout=600)
        self.assertIn("6 games counted", again.stdout)  # nothing played twice
        self.assertIn("every game is played, no cluster started", again.stdout)
        self.assertNotIn("LocalCluster", again.stdout)
        data = json.loads(leagueCommand("standings", root / "league.toml", "--format", "json"))
        self.assertEqual(sum(p["games"] for p in data["players"]), 12)
        self.assertEqual(data["players"][0]["name"], "greedy")
        rows = json.loads(leagueCommand("export", root / "league.toml", "--format", "json"))
        self.assertEqual(len(rows), 6)
        self.assertTrue(all(row["worker"].startswith("tcp://127.0.0.1:") for row in rows))

    def test_aWebPortInUseIsSaidBeforeAnyClusterStarts(self) -> None:
        root = Path(self.mktemp()).resolve()
        for name in ("ana", "bo"):
            (root / "players" / name).mkdir(parents=True)
            (root / "players" / name / "velhanet-run").write_text(EXAMPLE + "\n")
        (root / "league.toml").write_text('name = "busy"\n')
        taken = socket.socket()
        self.addCleanup(taken.close)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [PYTHON, "-m", "velhanet.league.cli", "run", str(root / "league.toml"), f"--web={port}"]
        result = subprocess.run(command, cwd=ROOT, env=ENVIRONMENT, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertRegex(result.stderr, rf"^velhanet-league: --web {port}: .*[Aa]ddress already in use")
        self.assertNotIn("cluster", result.stderr)  # it once said "the cluster cannot be reached"
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)  # one line, no traceback

    def test_theRunOnTheWeb(self) -> None:
        """``--web``: the standings as they stand, a running game watchable, a finished one replayable."""
        root = Path(self.mktemp()).resolve()
        for name, strategy in (("greedy", " --greedy"), ("random", "")):
            (root / "players" / name).mkdir(parents=True)
            (root / "players" / name / "velhanet-run").write_text(EXAMPLE + strategy + " --think 0.02\n")
        (root / "league.toml").write_text('name = "watched"\npairs = 2\nseed = 4\n')
        errors = root / "stderr.txt"
        with errors.open("w") as errorFile:  # the child has its own copy
            run = subprocess.Popen(
                [PYTHON, "-m", "velhanet.league.cli", "run", str(root / "league.toml"), "--workers=1", "--web=0"],
                cwd=ROOT,
                env=ENVIRONMENT,
                stdout=subprocess.PIPE,
                stderr=errorFile,
                text=True,
            )
        self.addCleanup(run.kill)
        assert run.stdout is not None
        first = run.stdout.readline().strip()  # a port the site chose: no other test can take it first
        self.assertRegex(
            first, r"^velhanet-league: standings and games at http://127\.0\.0\.1:\d+/$", errors.read_text()
        )
        port = int(first.rsplit(":", 1)[1].split("/")[0])
        self.assertNotEqual(port, 0)
        seen: dict[str, set[str]] = {"playing": set(), "replayable": set()}
        site = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        site.request("GET", "/events")
        stream = site.getresponse()
        self.assertEqual(stream.status, 200)
        while not (seen["playing"] and seen["replayable"]):
            line = stream.readline()
            self.assertTrue(line, "the site closed its event stream before a game was replayable")
            if not line.startswith(b"data: "):
                continue
            payload = json.loads(line[6:])
            for game in payload if isinstance(payload, list) else [payload]:  # the whole list first, then changes
                if game.get("state") == "playing" and game["moves"] > 0:
                    self.assertEqual(sorted(game["players"]), ["greedy", "random"])
                    seen["playing"].add(game["id"])
                elif game.get("state") == "over" and game["id"] not in seen["playing"]:  # from its log
                    board = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    board.request("GET", f"/game/{game['id']}/board/1")
                    self.assertEqual(board.getresponse().status, 200)
                    seen["replayable"].add(game["id"])
        site.close()
        page = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        page.request("GET", "/standings.json")
        standings = json.loads(page.getresponse().read())
        self.assertGreaterEqual(sum(p["games"] for p in standings["players"]), 2)  # one game, counted for both
        self.assertEqual(run.wait(timeout=600), 0)
        self.assertIn("4 games counted, 0 still to play, 0 void", run.stdout.read())


class SchemaTests(SynchronousTestCase):
    OLD_SCHEMA = """
    CREATE TABLE players (name TEXT NOT NULL, version TEXT NOT NULL, command TEXT NOT NULL, first_seen REAL NOT NULL,
        PRIMARY KEY (name, version));
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        a TEXT NOT NULL, a_version TEXT NOT NULL, b TEXT NOT NULL, b_version TEXT NOT NULL,
        pair INTEGER NOT NULL, side INTEGER NOT NULL, seed INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'scheduled', score REAL,
        winner TEXT, loser TEXT, loss_kind TEXT, reason TEXT,
        moves INTEGER, seconds REAL, worker TEXT, finished REAL,
        UNIQUE (a, a_version, b, b_version, pair, side));
    INSERT INTO players VALUES ('ana', 'v1', 'run', 1.0), ('bo', 'v2', 'run', 1.0);
    INSERT INTO games (a, a_version, b, b_version, pair, side, seed, state, score, winner, loser, loss_kind,
        reason, moves, seconds, worker, finished)
        VALUES ('ana', 'v1', 'bo', 'v2', 0, 0, 7, 'done', 1.0, 'ana', 'bo', 'time', 'slow', 40, 12.5, 'w', 2.0);
    """
    """A league.db as the first league runs made it: no schema version, and no replays, notes or logs yet."""

    def test_anOldDatabaseIsMigratedAndKeepsItsGames(self) -> None:
        path = Path(self.mktemp())
        path.parent.mkdir(parents=True, exist_ok=True)
        old = sqlite3.connect(path)
        old.executescript(self.OLD_SCHEMA)
        old.commit()
        old.close()
        store = Store(path)
        self.addCleanup(store.close)
        self.assertEqual(store.db.execute("PRAGMA user_version").fetchone()[0], SCHEMA_VERSION)
        [row] = list(store.games())
        self.assertEqual(
            (row["winner"], row["loss_kind"], row["moves"], row["replays"], row["log"]), ("ana", "time", 40, 0, None)
        )
        self.assertEqual(store.counts(), {"done": 1})
        again = Store(path)  # opened again: nothing to do
        again.close()

    def test_aDatabaseOfANewerVelhanetIsRefused(self) -> None:
        path = Path(self.mktemp())
        path.parent.mkdir(parents=True, exist_ok=True)
        newer = sqlite3.connect(path)
        newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        newer.close()
        with self.assertRaises(StoreError) as refused:
            Store(path)
        self.assertIn(f"written by a newer velhanet (schema {SCHEMA_VERSION + 1}", str(refused.exception))
