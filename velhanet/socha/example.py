"""An example Piranhas player, ready to run against any Software-Challenge server::

    python -m velhanet.socha.example [--host HOST] [--port PORT] [--reservation CODE] [--seed N] [--greedy] [--think S]

The player is velhanet's own L{BotPlayer} (``velhanet/socha/player.py``,
about sixty lines to read and copy): on connecting it writes ``<protocol>``
and ``<join/>`` (or ``<joinPrepared reservationCode="…"/>``), keeps the
position of every memento, answers every moveRequest with a legal move
(random among them, or with ``--greedy`` the one that leaves its heaviest
swarm heaviest: ``BotPlayer.chooseMove``, replace it with your strategy) and closes
the connection after ``<left/>``. With ``--think S`` it waits S seconds before
every answer without using the processor, as a player that thinks on another
machine would: for trying the time limit, and for benchmarks whose limit
should be the workers, not the cores. This module only starts it and says how
the game went; it exits 0 when the game ended with ``<left/>``, 1 when it
could not connect or the server closed the connection first.
"""

from __future__ import annotations

import argparse
import sys
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.interfaces import IReactorTime

from velhanet.i18n import _
from velhanet.socha.player import BotPlayer
from velhanet.startup import ArgumentParser

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 13050


class ExamplePlayer(BotPlayer):
    """L{BotPlayer}, telling on standard output what happens to it, answering after C{think} seconds."""

    def __init__(
        self, seed: int, reservation: str | None, greedy: bool, think: float = 0.0, clock: IReactorTime | None = None
    ) -> None:
        super().__init__(seed, reservation, greedy)
        self.think = think
        self.clock = clock

    def moveRequested(self, roomId: str) -> None:
        if self.think and self.clock is not None:
            self.clock.callLater(self.think, super().moveRequested, roomId)
        else:
            super().moveRequested(roomId)

    def handle(self, message: Element) -> None:
        super().handle(message)
        data = message.find("data")
        kind = message.tag if data is None else data.get("class")
        if kind == "joined":
            say(_("joined room {room}").format(room=self.roomId))
        elif kind == "welcomeMessage":
            say(_("playing team {team}").format(team=self.team))
        elif kind == "result" and data is not None:
            say(_("game over: {outcome}").format(outcome=outcomeFor(self.team, data.find("winner"))))
        elif kind == "errorpacket":
            say(
                _("the server refused <{request}>: {reason}").format(
                    request=self.refusedRequest(message), reason=message.get("message", "")
                )
            )
            if not self.roomId:  # the join itself was refused (an unknown reservation code): nothing to wait for
                self.refused = True
                self.transport.loseConnection()  # type: ignore[union-attr]

    refused = False
    """The server refused to let us join."""

    @staticmethod
    def refusedRequest(errorpacket: Element) -> str:
        original = errorpacket.find("originalRequest")
        return original.get("class", "?") if original is not None else "?"


def outcomeFor(team: str, winner: Element | None) -> str:
    """``won``, ``lost``, ``a draw`` or ``no winner`` (a cancelled game), with the server's reason."""
    if winner is None:
        return _("no winner")
    reason, winning = winner.get("reason", ""), winner.get("team")
    if winning is not None:
        outcome = _("won") if winning == team else _("lost")
    else:
        outcome = _("a draw") if winner.get("regular") == "true" else _("no winner")
    return _("{outcome} ({reason})").format(outcome=outcome, reason=reason)


def say(text: str) -> None:
    print(text, flush=True)


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="python -m velhanet.socha.example",
        description="Play one game of Piranhas (swc_2026_piranhas) on a Software-Challenge server, "
        "choosing random legal moves.",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"server host (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"server port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--reservation",
        metavar="CODE",
        default=None,
        help="join the prepared game this reservation code belongs to (default: <join/>, any open room)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random move choice (default 0)")
    parser.add_argument(
        "--greedy",
        action="store_true",
        help="play the move that makes its own heaviest swarm heaviest (the Piranhas goal), not a random one",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long before every answer, without using the processor (default 0)",
    )
    return parser.parse_args(argv)


async def play(reactor: object, arguments: argparse.Namespace) -> int:
    """Connect, play one game, and return the exit status."""
    clock = IReactorTime(reactor)
    player = ExamplePlayer(arguments.seed, arguments.reservation, arguments.greedy, arguments.think, clock)
    endpoint = TCP4ClientEndpoint(reactor, arguments.host, arguments.port, timeout=10)
    try:
        await connectProtocol(endpoint, player)
    except Exception as error:  # a refused or timed-out connection: say so, do not print a traceback
        print(
            _("cannot connect to {host}:{port}: {error}").format(host=arguments.host, port=arguments.port, error=error),
            file=sys.stderr,
        )
        return 1
    await player.done
    if player.refused:
        return 1
    if not player.left:
        print(_("the server closed the connection before the game was over"), file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)

    def run(reactor: object) -> Deferred[None]:
        def exit(status: int) -> None:
            if status:
                raise SystemExit(status)

        return Deferred.fromCoroutine(play(reactor, arguments)).addCallback(exit)

    react(run)


if __name__ == "__main__":
    main()
