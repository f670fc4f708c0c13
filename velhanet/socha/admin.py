"""``socha-admin``: administer a Software-Challenge server from a terminal, without typing XML.

    socha-admin [--host H] [--port P] --password PW prepare --name alice --name bob [--paused] [--observe]
    socha-admin [--host H] [--port P] --password PW observe|pause|resume|step|cancel ROOM

The command line and the terminal; what goes over the wire, and why each
command is sent the way it is, is in L{velhanet.socha.adminprotocol}.
"""

from __future__ import annotations

import argparse
import os
import sys

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.python.failure import Failure

from velhanet.i18n import _
from velhanet.socha.adminprotocol import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    PASSWORD_VARIABLE,
    AdminError,
    AdminProtocol,
    Command,
)
from velhanet.socha.games import DEFAULT_GAME, GAME_TYPES
from velhanet.startup import ArgumentParser


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="socha-admin",
        description="Administer a Software-Challenge server (twistd socha-server, or the official one): "
        "prepare a game with reservations, observe a room, pause, resume, step or cancel it.",
        epilog="Exit status 0 when the command worked, 1 on any error (wrong password, unknown room, "
        "server not reachable, no answer).",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="server host (default: %(default)s)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="server port (default: %(default)s)")
    parser.add_argument(
        "--password",
        default=os.environ.get(PASSWORD_VARIABLE),
        help=f"the server's administrator password (default: ${PASSWORD_VARIABLE}; one of them is required)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="seconds to wait for each answer the server owes; watching a game has no limit (default: %(default)s)",
    )
    parser.add_argument("--trace", action="store_true", help="print every message in and out on standard error")
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="what to do: prepare, observe, pause, resume, step or cancel",
    )
    prepare = commands.add_parser(
        "prepare",
        help="prepare a game for two named players and print their reservation codes",
        description="Prepare a room with two reserved slots; print the room id and one reservation code per "
        "player (the first --name plays team ONE). Each player joins with its code.",
    )
    prepare.add_argument(
        "--name",
        action="append",
        required=True,
        metavar="NAME",
        help="a player's display name; give it twice, team ONE first (required)",
    )
    prepare.add_argument(
        "--game-type",
        default=DEFAULT_GAME,
        help=f"the game; velhanet's server offers {', '.join(GAME_TYPES)} (default: %(default)s)",
    )
    prepare.add_argument(
        "--paused", action="store_true", help="the room starts paused: no move until step or resume (default: off)"
    )
    prepare.add_argument(
        "--no-timeout",
        action="store_true",
        help="the players may take as long as they like (canTimeout=false); without it the server's limits apply",
    )
    prepare.add_argument(
        "--seed",
        type=int,
        default=None,
        help="fix the start position: the same seed gives the same board on velhanet's server (default: random)",
    )
    prepare.add_argument("--observe", action="store_true", help="then watch the room as 'observe' does (default: off)")
    texts = {
        "observe": "print the room's moves as they are played, and the result",
        "pause": "pause a room: no new move is requested until step or resume",
        "resume": "let a paused room go on",
        "step": "let a paused room play exactly one move, and print it",
        "cancel": "end a room's game now, without a winner, and print the result",
    }
    for name, text in texts.items():
        sub = commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        sub.add_argument("room", metavar="ROOM", help="the room id (as prepare printed it)")
    arguments = parser.parse_args(argv)
    if not arguments.password:
        parser.error(_("--password is required (or set ${variable})").format(variable=PASSWORD_VARIABLE))
    if arguments.command == "prepare" and len(arguments.name) != 2:
        parser.error(_("prepare needs exactly two --name, not {count}").format(count=len(arguments.name)))
    if arguments.command == "prepare" and arguments.seed is not None and not 0 <= arguments.seed < 10**18:
        parser.error(_("--seed must be a number from 0 to 10**18 - 1, not {seed}").format(seed=arguments.seed))
    return arguments


def commandOf(arguments: argparse.Namespace) -> Command:
    if arguments.command == "prepare":
        return Command(
            "prepare",
            names=tuple(arguments.name),
            gameType=arguments.game_type,
            paused=arguments.paused,
            timeouts=not arguments.no_timeout,
            observe=arguments.observe,
            seed=arguments.seed,
        )
    return Command(arguments.command, roomId=arguments.room)


def say(text: str) -> None:
    print(text, flush=True)


def complain(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(reactor: object, arguments: argparse.Namespace) -> Deferred[None]:
    """Connect, run the command; a failure becomes one line on standard error and exit status 1."""
    where = f"{arguments.host}:{arguments.port}"
    protocol = AdminProtocol(
        arguments.password,
        commandOf(arguments),
        clock=reactor,  # type: ignore[arg-type]
        say=say,
        timeout=arguments.timeout,
        trace=complain if arguments.trace else None,
    )
    endpoint = TCP4ClientEndpoint(reactor, arguments.host, arguments.port, timeout=10)

    def unreachable(failure: Failure) -> Failure:
        return Failure(
            AdminError(
                _("cannot reach the server at {address}: {error}").format(
                    address=where, error=failure.getErrorMessage()
                )
            )
        )

    def exitOnError(failure: Failure) -> None:
        failure.trap(AdminError)
        complain(f"socha-admin: {failure.getErrorMessage()}")
        raise SystemExit(1)

    connected = connectProtocol(endpoint, protocol)
    connected.addCallbacks(lambda _: protocol.done, unreachable)
    connected.addErrback(exitOnError)
    return connected


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    react(run, (arguments,))


if __name__ == "__main__":
    main()
