"""``socha-match``: play N Software-Challenge games between two player programs and say which is stronger.

    socha-match "COMMAND 1" "COMMAND 2" [--games N] [--parallel K] [--server HOST:PORT]
                [--password PW] [--seed S] [--log-dir DIR] [--no-timeout]

Each command is split like a shell would (``shlex``) and these placeholders
are filled in for every game: ``{host}``, ``{port}``, ``{reservation}`` (the
code of the player's reserved slot) and ``{seed}`` (``S + game // 2``: both
games of a pair get the same seed). Without ``--server`` the runner starts its
own ``twistd -n socha-server`` on a free loopback port with a random admin
password.

For each game the runner prepares a room through the admin protocol
(L{velhanet.socha.adminprotocol}), observes it, and starts both programs.
Player 1 plays team ONE (and starts) in even games, player 2 in odd games.
Both games of a pair also get the same start position: the runner prepares
them with the pair's seed (``<prepare seed>``, velhanet's addition), so each
position is played from both sides. A server that ignores the seed (the
official one) gives each game its own position; the report says so. A player that exits before its game ended
loses it (after a grace of ``--grace`` seconds for the server's own result); a
game not started after ``--join-timeout`` or not over after ``--game-timeout``
is cancelled: the player that never joined (when known) or the one to move
loses. Ctrl-C cancels the running games and prints the partial result.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from twisted.internet.defer import Deferred, DeferredList, ensureDeferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import deferLater

from velhanet.sandbox import Sandbox, SandboxUnavailable, settingsFrom
from velhanet.sandbox.bench import enterBench
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.socha.adminprotocol import TEAMS, AdminError
from velhanet.socha.matchgame import ObservingAdmin, PlayerProcess
from velhanet.socha.matchoptions import folderOf, matchParser, parseArguments, serverCommand
from velhanet.socha.matchstats import GameResult, commandLine, gameSeed, otherTeam, report, sides, statsOf, summary
from velhanet.socha.wire import LEFT_THE_GAME

__all__ = ["Match", "ObservingAdmin", "PlayerProcess", "main", "matchParser", "parseArguments", "serverCommand"]


class Match:
    """The games of a match, K at a time, and their results."""

    def __init__(
        self,
        reactor: Any,
        arguments: argparse.Namespace,
        host: str,
        port: int,
        password: str,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.reactor, self.arguments = reactor, arguments
        self.sandbox = sandbox or Sandbox.forCommand(settingsFrom(arguments), say=lambda line: None)
        self.folders = [folderOf(arguments.dir1, arguments.command1), folderOf(arguments.dir2, arguments.command2)]
        self.host, self.port, self.password = host, port, password
        self.results: list[GameResult] = []
        self.next = 0
        self.stopping = False
        self.watchers: set[ObservingAdmin] = set()
        self.begun = time.monotonic()
        self.logDir = Path(arguments.log_dir) if arguments.log_dir else None
        if self.logDir is not None:
            self.logDir.mkdir(parents=True, exist_ok=True)

    finished = False
    """Every game is over (the server may stop now)."""

    async def run(self) -> list[GameResult]:
        workers = [ensureDeferred(self.worker()) for _ in range(max(1, self.arguments.parallel))]
        await DeferredList(workers, consumeErrors=True)
        self.finished = True
        return sorted(self.results, key=lambda result: result.game)

    def interrupt(self) -> None:
        self.stopping = True
        for watcher in list(self.watchers):
            watcher.cancel()

    async def worker(self) -> None:
        while not self.stopping and self.next < self.arguments.games:
            game, self.next = self.next, self.next + 1
            packets = ""
            try:
                result, packets = await self.play(game)
            except Exception as error:  # AdminError, or the server cannot be reached: this game is void
                reason = f"admin: {error}" if isinstance(error, AdminError) else f"server unreachable: {error}"
                result = GameResult(game, sides(game)[0], void=True, reason=reason, lossKind="void")
            if not (self.stopping and result.lossKind == "cancelled"):  # else interrupted by Ctrl-C: not a game
                self.results.append(result)
                self.writeSummary(interrupted=False)
                self.progress()
            if self.logDir is not None and packets:
                # After summary.json: a replay that finds the log finds its answer times too.
                xml = "<protocol>\n" + packets + "\n</protocol>\n"
                (self.logDir / f"game-{game:04d}.xml").write_text(xml, encoding="utf-8")

    def summaryData(self, interrupted: bool) -> dict[str, Any]:
        commands = (self.arguments.command1, self.arguments.command2)
        results = sorted(self.results, key=lambda result: result.game)
        data = summary(results, commands, self.arguments.games, interrupted)
        data["sandbox"] = self.sandbox.describe()
        return data

    def writeSummary(self, interrupted: bool) -> None:
        """``summary.json`` as it stands, rewritten after each game (replaced at once, never half written)."""
        if self.logDir is not None:
            partial = self.logDir / "summary.json.partial"
            partial.write_text(json.dumps(self.summaryData(interrupted), indent=2) + "\n", encoding="utf-8")
            os.replace(partial, self.logDir / "summary.json")

    # -- what a game is made of (a league's game changes these) --------------------------

    def newWatcher(self, names: tuple[str, str], seed: int) -> ObservingAdmin:
        a = self.arguments
        return ObservingAdmin(self.password, names, not a.no_timeout, self.reactor, seed)

    def commandOf(self, player: int, reservation: str, seed: int) -> list[str]:
        """Player ``player``'s command line, its placeholders filled in (split like a shell would)."""
        template = [self.arguments.command1, self.arguments.command2][player]
        return commandLine(template, self.host, self.port, reservation, seed)

    def workingDirectoryOf(self, player: int) -> Path:
        return Path.cwd()

    def playing(self, watcher: ObservingAdmin, players: list[Any]) -> None:
        """Both programs are started (or failed to start)."""

    async def play(self, game: int) -> tuple[GameResult, str]:
        """Play one game; its result and its room packets (the XML log's content)."""
        a = self.arguments
        order = sides(game)
        names = (f"p{order[0] + 1}", f"p{order[1] + 1}")
        watcher = self.newWatcher(names, gameSeed(a.seed, game))
        await connectProtocol(TCP4ClientEndpoint(self.reactor, self.host, self.port, timeout=10), watcher)
        codes = await watcher.reserved
        self.watchers.add(watcher)
        done: Deferred[None] = Deferred()
        watcher.done.addBoth(lambda _: None if done.called else done.callback(None))
        players: list[SandboxedProgram | PlayerProcess] = [PlayerProcess(None), PlayerProcess(None)]
        crashed: list[int] = []
        brokeAt: dict[int, int] = {}
        for team, player in enumerate(order):
            log = open(self.logDir / f"game-{game:04d}-p{player + 1}.log", "wb") if self.logDir else None  # noqa: SIM115
            argv = self.commandOf(player, codes[team], gameSeed(a.seed, game))
            try:
                process: SandboxedProgram | PlayerProcess = spawn(
                    self.sandbox,
                    self.reactor,
                    argv,
                    folder=self.folders[player],
                    cwd=self.workingDirectoryOf(player),
                    reach=[(self.host, self.port)],
                    output=log,
                )
            except OSError as error:
                process = PlayerProcess(None)
                process.status = 127
                process.ended.callback(127)
                print(f"\ncannot start p{player + 1}: {error}", file=sys.stderr)
            players[player] = process

            def exited(ending: object, player: int = player) -> None:
                if getattr(players[player], "verdict", None) is not None and players[player].verdict.brokeALimit:  # type: ignore[union-attr]
                    brokeAt[player] = max(len(watcher.moments) - 1, 0)
                if watcher.result is None and not done.called:
                    self.reactor.callLater(a.grace, crashedIfNoResult, player)

            process.ended.addCallback(exited)
        self.playing(watcher, players)

        def crashedIfNoResult(player: int) -> None:
            if watcher.result is None and not done.called:
                # Every player gone by now: when both are, neither lost to the other.
                crashed.extend(p for p in (0, 1) if players[p].status is not None)
                watcher.cancel()

        timers = [
            self.reactor.callLater(a.join_timeout, lambda: None if watcher.started else watcher.cancel()),
            self.reactor.callLater(a.game_timeout, watcher.cancel),
        ]
        await done
        for timer in timers:
            if timer.active():
                timer.cancel()
        self.watchers.discard(watcher)
        for process in players:
            if process.status is None:
                self.reactor.callLater(a.grace, process.stop)
        await DeferredList([process.ended for process in players], consumeErrors=True)  # type: ignore[misc]
        return self.judge(game, watcher, players, crashed, brokeAt), "".join(watcher.packets)

    def judge(
        self,
        game: int,
        watcher: ObservingAdmin,
        players: list[Any],
        crashed: list[int],
        brokeAt: dict[int, int] | None = None,
    ) -> GameResult:
        """What the game was: who won and why, from what the observer saw and how the programs ended."""
        order = sides(game)
        result = GameResult(game, order[0], moves=max(len(watcher.moments) - 1, 0), position=watcher.position)
        for turn in range(1, len(watcher.moments)):
            mover = order[TEAMS.index(watcher.startTeam if turn % 2 == 1 else otherTeam(watcher.startTeam))]
            result.answerTimes[mover].append(watcher.moments[turn] - watcher.moments[turn - 1])
        verdicts = [getattr(process, "verdict", None) for process in players]
        for player, verdict in enumerate(verdicts):
            if verdict is not None:
                result.notes += [f"p{player + 1}: {note}" for note in verdict.notes()]
        winner = watcher.result.find("winner") if watcher.result is not None else None
        reason = " ".join((winner.get("reason", "") if winner is not None else "").split())
        broke = [player for player, verdict in enumerate(verdicts) if verdict is not None and verdict.brokeALimit]
        if len(broke) == 1:
            loser = broke[0]
            cause = verdicts[loser].cause  # type: ignore[union-attr]
            result.winner, result.lossKind = 1 - loser, "limit"
            result.reason = f"p{loser + 1} {cause} (move {(brokeAt or {}).get(loser, result.moves)})"
            return result
        if len(broke) == 2:
            result.void, result.lossKind = True, "void"
            result.reason = "both players broke a limit: " + "; ".join(
                f"p{player + 1} {verdicts[player].cause}" for player in broke  # type: ignore[union-attr]
            )
            return result
        if len(set(crashed)) == 1:
            loser = crashed[0]
            status = players[loser].status
            result.winner, result.lossKind = 1 - loser, "crash"
            result.reason = f"p{loser + 1} exited with status {status} before the game ended"
            return result
        if len(set(crashed)) == 2:
            statuses = " and ".join(str(process.status) for process in players)
            result.void, result.lossKind = True, "void"
            result.reason = f"both players exited before the game ended (status {statuses})"
            return result
        team = winner.get("team") if winner is not None else None
        regular = winner is not None and winner.get("regular", "true") == "true"
        result.reason = reason
        if regular:
            result.winner = order[TEAMS.index(team)] if team in TEAMS else None
            return result
        if self.stopping:
            result.void, result.lossKind = True, "cancelled"
        elif not watcher.started:  # a waiting room's cancel has no result, only <left/>
            # A player that had joined left with the room; one still running then never joined.
            stuck = [player for player in (0, 1) if players[player].killed]
            if watcher.players == 1 and len(stuck) == 1:
                result.winner, result.lossKind = 1 - stuck[0], "no-join"
                result.reason = f"p{stuck[0] + 1} did not join within {self.arguments.join_timeout:g} s"
            else:
                result.void, result.lossKind, result.reason = True, "no-join", "no player joined in time"
        elif crashed or watcher.result is None:
            result.void, result.lossKind, result.reason = True, "void", reason or "no result"
        elif team in TEAMS:
            result.winner = order[TEAMS.index(team)]
            if watcher.errors:
                result.lossKind, result.reason = "rule", watcher.errors[-1]
            elif reason.endswith(LEFT_THE_GAME):  # it closed its connection in mid-game: crashed, to its author
                loser = 1 - result.winner
                result.lossKind = "crash"
                result.reason = f"p{loser + 1} closed its connection before the game ended ({reason})"
            else:
                lowered = reason.lower()
                result.lossKind = "time" if any(w in lowered for w in ("zeit", "time", "sekunden")) else "irregular"
        else:  # cancelled by us at the game deadline: the player to move loses
            loser = order[TEAMS.index(watcher.teamToMove())]
            result.winner, result.lossKind = 1 - loser, "deadline"
            result.reason = f"p{loser + 1} did not move within the game deadline ({self.arguments.game_timeout:g} s)"
        return result

    def progress(self) -> None:
        stats = statsOf(self.results)
        elapsed = time.monotonic() - self.begun
        done = len(self.results)
        left = elapsed / done * (self.arguments.games - done) if done else 0.0
        line = (
            f"\rgames {done}/{self.arguments.games}  p1 {stats.wins}-{stats.losses}-{stats.draws}"
            f"  score {stats.score:.3f}  elapsed {elapsed:.0f} s  left ~{left:.0f} s  "
        )
        print(line, end="", file=sys.stderr, flush=True)


async def startServer(reactor: Any, arguments: argparse.Namespace) -> tuple[str, int, str, PlayerProcess | None]:
    if arguments.server:
        host, _, port = arguments.server.rpartition(":")
        return host or "127.0.0.1", int(port), arguments.password, None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    password = secrets.token_hex(8)
    argv = serverCommand(arguments, port, password)
    logDir = Path(arguments.log_dir) if arguments.log_dir else None
    if logDir is not None:
        logDir.mkdir(parents=True, exist_ok=True)
    server = PlayerProcess(open(logDir / "server.log", "wb") if logDir else None)  # noqa: SIM115
    reactor.spawnProcess(server, sys.executable, argv, env=dict(os.environ))
    for _ in range(400):
        if server.status is not None:
            raise AdminError(f"the server {server.exitedSaying()}")
        try:
            listening = await TCP4ClientEndpoint(reactor, "127.0.0.1", port, timeout=1).connect(
                Factory.forProtocol(Protocol)
            )
            listening.transport.loseConnection()  # type: ignore[attr-defined]
            return "127.0.0.1", port, password, server
        except Exception:
            await deferLater(reactor, 0.05, lambda: None)
    raise AdminError("the server did not listen within 20 s")


async def run(reactor: Any, arguments: argparse.Namespace) -> None:
    try:
        settings = settingsFrom(arguments)
        sandbox = Sandbox.forCommand(settings, say=lambda line: print(f"socha-match: {line}", file=sys.stderr))
    except SandboxUnavailable as error:
        print(f"socha-match: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    try:
        host, port, password, server = await startServer(reactor, arguments)
    except AdminError as error:
        print(f"socha-match: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    match = Match(reactor, arguments, host, port, password, sandbox)
    interrupted = False

    def onSignal(signum: int, frame: object) -> None:
        nonlocal interrupted
        if interrupted:
            os._exit(130)
        interrupted = True
        reactor.callFromThread(match.interrupt)

    signal.signal(signal.SIGINT, onSignal)
    serverGone: list[str] = []

    def ended(status: int) -> None:
        if not match.finished:
            assert server is not None
            serverGone.append(f"socha-match: the server {server.exitedSaying(status)}")
            match.interrupt()

    if server is not None:
        server.ended.addCallback(ended)
    try:
        results = await match.run()
    finally:
        if server is not None:
            server.stop("TERM")
            await server.ended
    print("", file=sys.stderr)
    for line in report(match.summaryData(interrupted), results):
        print(line, flush=True)
    match.writeSummary(interrupted or bool(serverGone))
    if match.logDir is not None:
        where = shlex.quote(str(match.logDir))
        print(f"logs and summary.json in {where}; step through the games: twistd -n socha-replay --web 8080 {where}")
    if serverGone:
        print(serverGone[0], file=sys.stderr)
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    if arguments.sandbox != "off":
        enterBench()  # before the reactor starts a thread: an ordinary user's sandboxes need it
    react(lambda reactor: ensureDeferred(run(reactor, arguments)))


if __name__ == "__main__":
    main()
