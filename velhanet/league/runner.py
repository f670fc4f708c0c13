"""Playing a league's games on a Dask cluster and recording each in the database as it ends.

The run (``Run.play``):

1. every worker must run the same velhanet (``codeVersion``); one that does
   not is named and the run refused;
2. each player version's folder is packed once and held by a task of the
   cluster (``velhanet.cluster``: the pool of tasks every command shares):
   the workers need no shared file system, and an archive lost with a worker
   is computed again;
3. the games not yet finished in the database are submitted, one task each
   (``task.playGame``), as many at a time as the cluster has worker threads
   (a few more queued, so that no worker waits);
4. each outcome is recorded at once, in one transaction; a loss on time the
   machine caused (``game.overloaded``) is not recorded but played again, at
   most ``MAX_REPLAYS`` times; a game whose process failed is tried again,
   then recorded void with the reason;
5. a sequential test submits pair after pair and stops, cancelling the rest,
   as soon as its log-likelihood ratio crosses a bound.

A worker killed in the middle of a game loses its task to the scheduler,
which gives it to another worker: the game is played again and recorded once.
Ctrl-C cancels what runs; the database keeps what finished, and ``run``
again goes on from there.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from velhanet.cluster.pool import NO_WORKERS_GRACE, NoWorkers, TaskPool
from velhanet.cluster.workers import RunRefused, WrongVersion, checkWorkers, workerCount
from velhanet.i18n import _, current, ngettext
from velhanet.league.config import League, Player
from velhanet.league.ratings import SprtBounds, llrLogistic, pentanomial
from velhanet.league.schedule import Scheduled, schedule, sprtPairs
from velhanet.league.store import Outcome, Store
from velhanet.league.task import playGame
from velhanet.sandbox.limits import SandboxSettings

MAX_REPLAYS = 3
MAX_ATTEMPTS = 3
"""Tries of a game whose process failed (not a player's fault) before it is recorded void."""
JOIN_TIMEOUT = 60.0
"""Seconds both players have to join: includes a fresh worker unpacking them and their sandboxes' start."""


@dataclass
class RunReport:
    played: int = 0
    replays: int = 0
    voids: int = 0
    interrupted: bool = False
    decision: str = ""
    llr: float | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def specOf(league: League, game: Scheduled, settings: SandboxSettings, live: bool) -> dict[str, Any]:
    """What a worker needs to play ``game``; ``language``, the command's, is the one the game's texts are made in
    (its reasons, the sandbox's causes): a worker's own environment says nothing of who reads them."""
    limits = settings.limits
    return {
        "seed": game.seed,
        "moveTimeout": league.moveTimeout,
        "gameTimeout": league.gameTimeout,
        "joinTimeout": JOIN_TIMEOUT,
        "sandbox": settings.mode,
        "limits": {
            "memory": limits.memory,
            "cpu": limits.cpu,
            "processes": limits.processes,
            "disk": limits.disk,
            "output": limits.output,
        },
        "teams": [{"name": p.name, "version": p.version, "command": p.command} for p in game.teams],
        "live": live,
        "language": current().code,
    }


def outcomeOf(result: dict[str, Any], game: Scheduled) -> Outcome:
    team = result["winnerTeam"]
    winner = None if team is None or result["void"] else game.teams[team].name
    return Outcome(
        winner=winner,
        void=bool(result["void"]),
        lossKind=result["lossKind"],
        reason=result["reason"],
        moves=int(result["moves"]),
        seconds=float(result["seconds"]),
        worker=str(result.get("worker", "")),
        notes="; ".join(result.get("notes", [])),
    )


def plannedGames(league: League, players: list[Player], store: Store) -> list[Scheduled]:
    """Every game the league plays (a sequential test: all the pairs it may need), each now in the database."""
    if league.sprt is None:
        games = schedule(league, players)
    else:
        games = list(sprtPairs(league, players, 0, league.sprt.maxPairs))
    store.schedule(games)
    return games


def everyGamePlayed(league: League, players: list[Player], store: Store) -> bool:
    """Nothing left for a cluster: every game of a round robin is in the database (a sequential test may
    stop early, which only its run can tell)."""
    return league.sprt is None and not store.pending(plannedGames(league, players, store))


class Run:
    noWorkersGrace = NO_WORKERS_GRACE
    watchEvery = 1.0
    """Seconds between two looks at the number of workers, while games are played."""

    def __init__(
        self,
        league: League,
        players: list[Player],
        store: Store,
        client: Any,
        settings: SandboxSettings,
        say: Callable[[str], None],
        live: bool = False,
        onFinished: Callable[[int, dict[str, Any]], None] | None = None,
        task: Callable[..., dict[str, Any]] = playGame,
    ) -> None:
        """``task`` plays one game on a worker (``task.playGame``; a test gives a quicker one)."""
        self.league, self.players, self.store, self.client = league, players, store, client
        self.settings, self.say, self.live = settings, say, live
        self.onFinished = onFinished or (lambda gameId, result: None)
        self.task = task
        self.report = RunReport()
        self.pool: TaskPool[tuple[int, Scheduled, int]] | None = None
        self.stopping = threading.Event()
        self.began = time.monotonic()
        self.total = 0
        self.finished = 0

    # -- before any game --------------------------------------------------------------

    def checkWorkers(self) -> str:
        return checkWorkers(self.client, _("this league"))

    def workerCount(self) -> int:
        return workerCount(self.client)

    # -- the games ------------------------------------------------------------------------

    def play(self) -> RunReport:
        expected = self.checkWorkers()
        pool: TaskPool[tuple[int, Scheduled, int]] = TaskPool(
            self.client, self.progress, self.noWorkersGrace, self.watchEvery
        )
        pool.stopping = self.stopping
        self.pool = pool
        archives = {p.version: pool.hold(p.version, p.folder) for p in self.players}
        sprt = self.league.sprt
        games = plannedGames(self.league, self.players, self.store)
        pending = self.store.pending(games)
        if sprt is not None and self.sprtDecided():
            pending = []  # decided in an earlier run
        self.total = len(games)
        self.finished = self.total - len(pending)
        ahead = max(2, self.workerCount() * 2)
        queue = list(pending)

        def submit(gameId: int, game: Scheduled, attempt: int) -> None:
            spec = specOf(self.league, game, self.settings, self.live)
            teams = [archives[p.version] for p in game.teams]
            pool.submit((gameId, game, attempt), f"game-{gameId}-{attempt}", self.task, gameId, spec, teams, expected)

        def refill() -> None:
            while queue and pool.inFlight < ahead and not self.stopping.is_set():
                gameId, game = queue.pop(0)
                submit(gameId, game, 0)

        try:
            for (gameId, game, attempt), future in pool.results(refill):
                self.settle(future, gameId, game, attempt, submit)
                if sprt is not None and self.sprtDecided():
                    queue.clear()
                    self.cancelAll()
                self.progress()
        except KeyboardInterrupt:
            self.stopping.set()
        except NoWorkers as gone:
            left = self.total - self.finished
            raise RunRefused(
                ngettext(
                    "no worker for {seconds:.0f} s, {n} game(s) still to play: the cluster lost its workers (see its"
                    " log); start workers and run again, it goes on where it stopped",
                    "no worker for {seconds:.0f} s, {n} game(s) still to play: the cluster lost its workers (see its"
                    " log); start workers and run again, it goes on where it stopped",
                    left,
                ).format(seconds=gone.seconds, n=left)
            ) from None
        if self.stopping.is_set():
            self.report.interrupted = True
            self.cancelAll()
        self.report.seconds = time.monotonic() - self.began
        print("", file=sys.stderr)
        return self.report

    def settle(
        self, future: Any, gameId: int, game: Scheduled, attempt: int, submit: Callable[[int, Scheduled, int], None]
    ) -> None:
        """One task came back: record its game, play it again, or note why it could not be played."""
        try:
            result = future.result()
        except WrongVersion as error:
            self.stopping.set()
            raise RunRefused(_("{error}: install the same velhanet on every worker").format(error=error)) from None
        except Exception as error:  # the game's process failed, or Dask gave up on the task
            if attempt + 1 < MAX_ATTEMPTS:
                submit(gameId, game, attempt + 1)
                return
            self.store.finish(
                gameId,
                Outcome(None, True, "void", _("could not be played: {error}").format(error=error), 0, 0.0, ""),
                game.a.name,
            )
            self.report.voids += 1
            self.finished += 1
            return
        if result.get("overloaded"):
            replays = self.store.replayed(gameId, result["overloaded"])
            self.report.replays += 1
            if replays <= MAX_REPLAYS:
                self.say(_("game {id} played again: {reason}").format(id=gameId, reason=result["overloaded"]))
                submit(gameId, game, attempt)
                return
            counted = _("counted after {n} replays: {reason}").format(n=MAX_REPLAYS, reason=result["overloaded"])
            result["notes"] = [*result.get("notes", []), counted]
        outcome = outcomeOf(result, game)
        if result.get("xml"):
            self.league.logs.mkdir(parents=True, exist_ok=True)
            log = self.league.logs / f"game-{gameId:05d}.xml"
            log.write_text(result["xml"], encoding="utf-8")
            outcome = dataclasses.replace(outcome, log=str(log))
        if self.store.finish(gameId, outcome, game.a.name):
            self.finished += 1
            self.report.played += 1
            self.report.voids += outcome.void
        self.onFinished(gameId, result)  # recorded: the site's standings count it

    def sprtDecided(self) -> bool:
        sprt = self.league.sprt
        assert sprt is not None
        pairs: dict[int, list[float]] = {}
        current = {p.name: p.version for p in self.players}
        for row in self.store.games("done"):
            if current.get(row["a"]) == row["a_version"] and current.get(row["b"]) == row["b_version"]:
                pairs.setdefault(row["pair"], []).append(row["score"])
        points = [sum(scores) for scores in pairs.values() if len(scores) == 2]
        if not points:
            return False
        llr = llrLogistic(sprt.elo0, sprt.elo1, pentanomial(points))
        self.report.llr = llr
        decision = SprtBounds.of(sprt.alpha, sprt.beta).decision(llr)
        if decision:
            self.report.decision = decision
        return bool(decision)

    def cancelAll(self) -> None:
        if self.pool is not None:
            self.pool.cancelAll()

    def progress(self) -> None:
        elapsed = time.monotonic() - self.began
        played = self.report.played
        rate = played / elapsed * 3600 if elapsed > 0 else 0.0
        left = (self.total - self.finished) / (played / elapsed) if played else 0.0
        line = (
            "\r"
            + _("games {finished}/{total}  {rate:.0f}/h  left ~{minutes:.0f} min  workers {workers}").format(
                finished=self.finished, total=self.total, rate=rate, minutes=left / 60, workers=self.workerCount()
            )
            + (f"  LLR {self.report.llr:.2f}" if self.report.llr is not None else "")
            + "   "
        )
        print(line, end="", file=sys.stderr, flush=True)
