"""The floor: the least a Twisted Gambit relay can do, for the side-by-side bench.

    python benchmarks/gambit_floor.py PORT

No validation, no limits, no pacing, no logging: CREATE, JOIN and MOVE on
newline-terminated objects, each relayed with one ``transport.write``. It
is not a server anyone should run; it shows how much of velhanet's CPU per
move is Twisted's own reactor and the kernel (``docs/performance.md``).
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

from twisted.internet import reactor
from twisted.internet.protocol import Factory
from twisted.protocols.basic import LineOnlyReceiver

games: dict[str, list[FloorRelay]] = {}
ids = itertools.count(1)


class FloorRelay(LineOnlyReceiver):
    delimiter = b"\n"
    opponent: FloorRelay | None = None

    def lineReceived(self, line: bytes) -> None:
        assert self.transport is not None
        message = json.loads(line)
        cmd = message.get("Cmd", message.get("cmd"))
        if cmd == 2:
            gameId = f"{next(ids) % 65536:04x}"
            games[gameId] = [self]
            self.transport.write(b'{"Cmd":1,"User":"","Args":"%s"}\n' % gameId.encode())
        elif cmd == 3:
            white = games.pop(message.get("Args", message.get("args")))[0]
            self.opponent, white.opponent = white, self
            self.transport.write(b'{"Cmd":1,"User":"","Args":"w"}\n')
            white.transport.write(b'{"Cmd":1,"User":"","Args":"b"}\n')  # type: ignore[union-attr]
        elif cmd == 4 and self.opponent is not None:
            args = message.get("Args", message.get("args"))
            self.opponent.transport.write(b'{"Cmd":4,"User":"","Args":%s}\n' % json.dumps(args).encode())  # type: ignore[union-attr]


if __name__ == "__main__":
    factory: Any = Factory.forProtocol(FloorRelay)
    reactor.listenTCP(int(sys.argv[1]), factory, backlog=1024, interface="127.0.0.1")
    reactor.run()
