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
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

from twisted.internet.defer import DeferredList, ensureDeferred

from velhanet.i18n import _
from velhanet.sandbox import Sandbox, SandboxUnavailable, settingsFrom
from velhanet.sandbox.userns import enterUserNamespace
from velhanet.socha.adminprotocol import AdminError
from velhanet.socha.matchgame import GameSetup, ObservingAdmin, playGame
from velhanet.socha.matchoptions import MatchSettings, matchParser, parseArguments, serverCommand, settingsOf
from velhanet.socha.matchserver import startServer
from velhanet.socha.matchstats import GameResult, commandLine, report, sides, statsOf, summary

__all__ = ["Match", "ObservingAdmin", "main", "matchParser", "parseArguments", "serverCommand"]


class Match:
    """The games of a match, ``parallel`` at a time, their results and the summary kept as they come."""

    def __init__(
        self,
        reactor: Any,
        settings: MatchSettings,
        server: tuple[str, int, str],
        sandbox: Sandbox,
    ) -> None:
        self.reactor, self.settings, self.sandbox = reactor, settings, sandbox
        self.host, self.port, self.password = server
        self.results: list[GameResult] = []
        self.next = 0
        self.stopping = False
        self.watchers: set[ObservingAdmin] = set()
        self.begun = time.monotonic()
        self.logDir = settings.logDir
        if self.logDir is not None:
            self.logDir.mkdir(parents=True, exist_ok=True)
        self.setup = GameSetup(
            commandOf=lambda player, reservation, seed: commandLine(
                settings.commands[player], self.host, self.port, reservation, seed
            ),
            folders=settings.folders,
            workingDirectoryOf=lambda player: Path.cwd(),
            newWatcher=lambda names, seed: ObservingAdmin(self.password, names, settings.moveTimeouts, reactor, seed),
        )

    finished = False
    """Every game is over (the server may stop now)."""

    async def run(self) -> list[GameResult]:
        workers = [ensureDeferred(self.worker()) for _ in range(self.settings.parallel)]
        await DeferredList(workers, consumeErrors=True)
        self.finished = True
        return sorted(self.results, key=lambda result: result.game)

    def interrupt(self) -> None:
        self.stopping = True
        for watcher in list(self.watchers):
            watcher.cancel()

    async def play(self, game: int) -> tuple[GameResult, str]:
        server = (self.host, self.port)
        return await playGame(
            self.reactor, self.sandbox, self.settings, server, self.setup, game, self.watchers, lambda: self.stopping
        )

    async def worker(self) -> None:
        while not self.stopping and self.next < self.settings.games:
            game, self.next = self.next, self.next + 1
            packets = ""
            try:
                result, packets = await self.play(game)
            except Exception as error:  # AdminError, or the server cannot be reached: this game is void
                if isinstance(error, AdminError):
                    reason = _("admin: {error}").format(error=error)
                else:
                    reason = _("server unreachable: {error}").format(error=error)
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
        results = sorted(self.results, key=lambda result: result.game)
        data = summary(results, self.settings.commands, self.settings.games, interrupted)
        data["sandbox"] = self.sandbox.describe()
        return data

    def writeSummary(self, interrupted: bool) -> None:
        """``summary.json`` as it stands, rewritten after each game (replaced at once, never half written)."""
        if self.logDir is not None:
            partial = self.logDir / "summary.json.partial"
            partial.write_text(json.dumps(self.summaryData(interrupted), indent=2) + "\n", encoding="utf-8")
            os.replace(partial, self.logDir / "summary.json")

    def progress(self) -> None:
        stats = statsOf(self.results)
        elapsed = time.monotonic() - self.begun
        done = len(self.results)
        left = elapsed / done * (self.settings.games - done) if done else 0.0
        line = _(
            "games {done}/{games}  p1 {wins}-{losses}-{draws}  score {score:.3f}"
            "  elapsed {elapsed:.0f} s  left ~{left:.0f} s"
        ).format(
            done=done,
            games=self.settings.games,
            wins=stats.wins,
            losses=stats.losses,
            draws=stats.draws,
            score=stats.score,
            elapsed=elapsed,
            left=left,
        )
        print(f"\r{line}  ", end="", file=sys.stderr, flush=True)


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
    match = Match(reactor, settingsOf(arguments), (host, port, password), sandbox)
    interrupted = False

    def onSignal(signum: int, frame: object) -> None:
        nonlocal interrupted
        if interrupted:
            os._exit(130)
        interrupted = True
        reactor.callFromThread(match.interrupt)

    signal.signal(signal.SIGINT, onSignal)
    serverGone: list[str] = []

    def ended(verdict: object) -> None:
        if not match.finished:
            assert server is not None
            serverGone.append(_("socha-match: the server {ended}").format(ended=server.exitedSaying()))
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
        print(
            _(
                "logs and summary.json in {where}; step through the games: twistd -n socha-replay --web 8080 {where}"
            ).format(where=where)
        )
    if serverGone:
        print(serverGone[0], file=sys.stderr)
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    if arguments.sandbox != "off":
        enterUserNamespace()  # before the reactor starts a thread: an ordinary user's sandboxes need it
    react(lambda reactor: ensureDeferred(run(reactor, arguments)))


if __name__ == "__main__":
    main()
