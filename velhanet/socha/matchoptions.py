"""``socha-match``'s command line: its options, their checks, the server command it starts, and the frozen
L{MatchSettings} the games are played with (a league's game makes its own, with no command line)."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from velhanet import i18n
from velhanet.i18n import _
from velhanet.sandbox import addSandboxArguments
from velhanet.sandbox.jail import programFolder
from velhanet.startup import ArgumentParser


def matchParser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="socha-match",
        description="Play games between two Software-Challenge player programs and say which is stronger. "
        "Placeholders in the commands: {host}, {port}, {reservation}, {seed}.",
    )
    parser.add_argument(
        "command1",
        metavar="COMMAND1",
        help="player 1's command line, e.g. 'python -m "
        "velhanet.socha.example --host {host} --port {port} --reservation {reservation}'",
    )
    parser.add_argument("command2", metavar="COMMAND2", help="player 2's command line, the same placeholders")
    parser.add_argument("--games", type=int, default=10, help="how many games (default: %(default)s)")
    parser.add_argument("--parallel", type=int, default=1, help="games played at once (default: %(default)s)")
    parser.add_argument(
        "--server", default=None, help="HOST:PORT of a running server; needs --password (default: start one)"
    )
    parser.add_argument("--password", default=None, help="the --server's admin password (default: %(default)s)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the first pair's seed: the {seed} of both players and the start position; each pair of games "
        "shares one, the next pair adds 1 (default: %(default)s)",
    )
    parser.add_argument(
        "--log-dir", default=None, help="where game XML logs and summary.json go (default: %(default)s)"
    )
    parser.add_argument("--no-timeout", action="store_true", help="no move time limits (default: off)")
    parser.add_argument(
        "--web",
        default=None,
        metavar="ENDPOINT",
        help="watch the games live: the started server's spectators' site on this endpoint, a bare port "
        "on 127.0.0.1 only; not with --server (default: off)",
    )
    parser.add_argument(
        "--grace", type=float, default=3.0, help="seconds a result may follow a player's exit (default: %(default)s)"
    )
    parser.add_argument(
        "--join-timeout", type=float, default=30.0, help="seconds for both to join (default: %(default)s)"
    )
    parser.add_argument(
        "--game-timeout", type=float, default=900.0, help="seconds a game may take (default: %(default)s)"
    )
    parser.add_argument(
        "--dir1",
        default=None,
        metavar="DIR",
        help="player 1's folder, which it sees as a private writable copy (default: the folder of the first "
        "file its command names, else none)",
    )
    parser.add_argument(
        "--dir2",
        default=None,
        metavar="DIR",
        help="player 2's folder, the same way (default: the folder of the first file its command names, else none)",
    )
    addSandboxArguments(parser)
    return parser


def folderOf(given: str | None, command: str) -> Path | None:
    """A player's folder: ``--dirN``, else the folder of the first file its command names."""
    if given is not None:
        return Path(given).resolve()
    return programFolder(shlex.split(command), Path.cwd())


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = matchParser()
    arguments = parser.parse_args(argv)
    if arguments.server and not arguments.password:
        parser.error(_("--server needs --password"))
    if arguments.server and arguments.web:
        parser.error(_("--web is for the server socha-match starts; a --server has its own"))
    if not 0 <= arguments.seed < 10**17:
        parser.error(_("--seed must be a number from 0 to 10**17 - 1, not {seed}").format(seed=arguments.seed))
    return arguments


def serverCommand(arguments: argparse.Namespace, port: int, password: str) -> list[str]:
    """The ``twistd -n socha-server`` the runner starts (``--web``: prepared games shown, they are the match)."""
    twistd = "from twisted.scripts.twistd import run; run()"
    listen = f"tcp:{port}:interface=127.0.0.1"
    argv = [sys.executable, "-c", twistd, "-n", "--pidfile=", "-l", "-", "socha-server", "--listen", listen]
    argv += ["--password", password, "--language", i18n.current().code]  # its server.log speaks the match's
    if arguments.no_timeout:
        argv.append("--no-timeout")
    if arguments.web:
        argv += ["--web", arguments.web, "--web-show-prepared"]
    return argv


@dataclass(frozen=True)
class MatchSettings:
    """What a match's games are played with, as the command line (or a league's game) gave them."""

    commands: tuple[str, str]
    folders: tuple[Path | None, Path | None]
    games: int = 10
    parallel: int = 1
    seed: int = 0
    moveTimeouts: bool = True
    grace: float = 3.0
    joinTimeout: float = 60.0
    gameTimeout: float = 900.0
    logDir: Path | None = None

    def logOf(self, game: int, player: int) -> IO[bytes] | None:
        """Where player ``player``'s program's output goes in game ``game`` (opened now), if the match keeps logs."""
        if self.logDir is None:
            return None
        return open(self.logDir / f"game-{game:04d}-p{player + 1}.log", "wb")


def settingsOf(arguments: argparse.Namespace) -> MatchSettings:
    return MatchSettings(
        commands=(arguments.command1, arguments.command2),
        folders=(folderOf(arguments.dir1, arguments.command1), folderOf(arguments.dir2, arguments.command2)),
        games=arguments.games,
        parallel=max(1, arguments.parallel),
        seed=arguments.seed,
        moveTimeouts=not arguments.no_timeout,
        grace=arguments.grace,
        joinTimeout=arguments.join_timeout,
        gameTimeout=arguments.game_timeout,
        logDir=Path(arguments.log_dir) if arguments.log_dir else None,
    )
