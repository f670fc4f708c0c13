"""One Gobang client process of a soak: plays game after game on a FIFO server until its time is over.

    python -m benchmarks.soak_gobang DIR SERVERPID black|white SECONDS

The server tells clients apart by pid, so each player of a soak is a process of its own; it signs
on again as soon as a game ended (``gobang-client --bot --bot-delay 0``'s session, once per game)
and prints ``games N unreachable M`` when it exits: the games that ended (by any end opcode), and
how often the server could not be reached (then it tried again 50 ms later). A game still
running (or still waiting for an opponent, who may have stopped already) 5 s after its time is
signed off.
"""

from __future__ import annotations

import os
import sys
import time

from twisted.internet import reactor
from twisted.python.failure import Failure

from velhanet.gobang.client import GobangClient, parseArguments


def main(argv: list[str]) -> None:
    directory, serverPid, colour, seconds = argv
    deadline = time.monotonic() + float(seconds)
    flag = "-b" if colour == "black" else "-w"
    arguments = parseArguments([flag, serverPid, "--bot", "--bot-delay", "0", "--fifo-dir", directory])
    silent = open(os.devnull, "w")  # noqa: SIM115 (the process's whole life)
    played, unreachable = [0], [0]
    running: list[GobangClient] = []

    def next(_: object = None) -> None:
        running.clear()
        if time.monotonic() >= deadline:
            reactor.stop()
            return
        client = GobangClient(reactor, arguments, out=silent)
        running.append(client)
        client.start().addBoth(ended)

    def signoff() -> None:
        for client in running:
            client.session.signoff()

    def ended(result: object) -> None:
        if isinstance(result, Failure) and not result.check(SystemExit):
            print("error", result.getErrorMessage(), flush=True)
        refused = isinstance(result, Failure) and isinstance(result.value, SystemExit) and result.value.code == 1
        (unreachable if refused else played)[0] += 1
        reactor.callLater(0.05 if refused else 0, next)

    reactor.callWhenRunning(next)
    reactor.callLater(float(seconds) + 5, signoff)
    reactor.run()
    print(f"games {played[0]} unreachable {unreachable[0]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
