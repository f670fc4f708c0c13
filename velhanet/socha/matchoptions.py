"""``socha-match``'s command line: its options, their checks, and the server command it starts."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from velhanet.sandbox import addSandboxArguments
from velhanet.sandbox.jail import programFolder


def matchParser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
        parser.error("--server needs --password")
    if arguments.server and arguments.web:
        parser.error("--web is for the server socha-match starts; a --server has its own")
    if not 0 <= arguments.seed < 10**17:
        parser.error(f"--seed must be a number from 0 to 10**17 - 1, not {arguments.seed}")
    return arguments


def serverCommand(arguments: argparse.Namespace, port: int, password: str) -> list[str]:
    """The ``twistd -n socha-server`` the runner starts (``--web``: prepared games shown, they are the match)."""
    twistd = "from twisted.scripts.twistd import run; run()"
    listen = f"tcp:{port}:interface=127.0.0.1"
    argv = [sys.executable, "-c", twistd, "-n", "--pidfile=", "-l", "-", "socha-server", "--listen", listen]
    argv += ["--password", password]
    if arguments.no_timeout:
        argv.append("--no-timeout")
    if arguments.web:
        argv += ["--web", arguments.web, "--web-show-prepared"]
    return argv
