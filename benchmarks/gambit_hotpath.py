"""CPU cost of the Gambit server's hot path, per message, without the network.

    python -m benchmarks.gambit_hotpath [--games 200] [--moves 60] [--no-validate]

Feeds MOVE messages straight into server protocols on in-memory transports
(read → parse → route → validate → encode → write) and prints the mean time
per relayed message. The same path the loopback benchmark exercises, minus
the kernel and the client.
"""

from __future__ import annotations

import argparse
import json
import time

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from benchmarks.gambit_relay import legalGame
from velhanet.gambit.protocol import GambitServerFactory


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--no-validate", action="store_true")
    arguments = parser.parse_args()
    factory = GambitServerFactory(Clock(), validate=not arguments.no_validate, spacing=0)
    tables = []
    for seed in range(arguments.games):
        white, black = factory.buildProtocol(None), factory.buildProtocol(None)
        whiteTransport = StringTransport()
        white.makeConnection(whiteTransport)
        black.makeConnection(StringTransport())
        white.dataReceived(b'{"Cmd":2,"User":"w","Args":""}')
        gameId = json.loads(whiteTransport.value())["Args"]
        black.dataReceived(json.dumps({"Cmd": 3, "User": "b", "Args": gameId}).encode())
        payloads = [
            json.dumps({"Cmd": 4, "User": "x", "Args": f"{gameId}:{m}"}).encode()
            for m in legalGame(arguments.moves, seed)
        ]
        tables.append(((white, black), payloads))
    started = time.perf_counter()
    count = 0
    for ply in range(arguments.moves):
        for players, payloads in tables:
            players[ply % 2].dataReceived(payloads[ply])
            count += 1
    elapsed = time.perf_counter() - started
    mode = "without validation" if arguments.no_validate else "with validation"
    print(
        f"hot path {mode}: {elapsed / count * 1e6:.1f} us per relayed MOVE ({count} moves, "
        f"{count / elapsed:,.0f} per second on one core)"
    )


if __name__ == "__main__":
    main()
