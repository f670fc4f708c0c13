"""A Gambit server with one bug, chosen on the command line.

python -m tests.broken.gambit_server PORT silent-join|echo-move
"""

from __future__ import annotations

import sys

from twisted.internet import reactor

from velhanet.gambit.server import GambitServerFactory, GambitServerProtocol
from velhanet.gambit.wire import Cmd, Message


class SilentJoin(GambitServerProtocol):
    """Like the original server: a JOIN for an unknown game gets no answer at all."""

    def join(self, user: str, args: str) -> None:
        if args.strip().lower() not in self.factory.games:
            return
        super().join(user, args)


class EchoMove(GambitServerProtocol):
    """Relays every MOVE back to its sender as well."""

    def inGame(self, cmd: int, args: str) -> None:
        super().inGame(cmd, args)
        if cmd == Cmd.MOVE:
            self.send(Message(Cmd.MOVE, self.name, args))


BUGS = {"silent-join": SilentJoin, "echo-move": EchoMove}


def main() -> None:
    port, bug = int(sys.argv[1]), sys.argv[2]
    factory = GambitServerFactory(reactor, validate=False)
    factory.buildProtocol = lambda addr: BUGS[bug](factory)  # type: ignore[method-assign]
    reactor.listenTCP(port, factory, interface="127.0.0.1")  # type: ignore[attr-defined]
    print("ready", flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
