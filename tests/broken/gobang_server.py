"""A Gobang server that asks white for the first move.

python -m tests.broken.gobang_server FIFODIR
"""

from __future__ import annotations

import os
import sys

from twisted.internet import reactor

from velhanet.gobang import game
from velhanet.gobang.server import GobangServerService
from velhanet.gobang.wire import ServerOp, ServerWord, byteOrder

_original = game.GameCore.askToMove


def askWhiteFirst(self: game.GameCore) -> None:
    if self.state is not None and self.state.moveCount == 0 and self.seats[1] is not None:
        self.seats[1].send(ServerWord(ServerOp.YOUR_MOVE))
        return
    _original(self)


def main() -> None:
    game.GameCore.askToMove = askWhiteFirst  # type: ignore[method-assign]
    options = {
        "byte-order": byteOrder("native"),
        "fifo-dir": sys.argv[1],
        "game": "gobang",
        "size": 11,
        "once": False,
        "trace": False,
    }
    service = GobangServerService(options, reactor)
    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)  # type: ignore[attr-defined]
    print(os.getpid(), flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
