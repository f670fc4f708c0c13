"""A scripted Gobang client process for the conformance suite (each needs its own pid).

    python -m velhanet.checks.gobang.agent DIR SERVERPID OPCODE [MOVE ...]

OPCODE is the signon (1 black, 2 white, 3 kibitz; for a kibitz the first
MOVE may be ``game=N``). Each MOVE answers one move request: ``x,y``,
``pass``, ``resign`` or ``signoff``. Every word received is printed as
``op x y``, and every word sent and received once more, for the checker's exchange, as
``@ MONOTONIC sent|received HEX meaning`` (the machine's monotonic clock, the checker's too); the exit
status is the end opcode (0–3), 10 when the server
cannot be reached, 11 when the script runs out of moves, 12 on a timeout.
"""

from __future__ import annotations

import os
import select
import sys
import time

from velhanet.gobang import fifo
from velhanet.gobang.wire import (
    ClientOp,
    ClientWord,
    Refused,
    ServerOp,
    WordReader,
    byteOrder,
    decodeServer,
    encodeClient,
)
from velhanet.i18n import _


def clientMeaning(op: int, x: int, y: int) -> str:
    name = ClientOp(op).name if op in ClientOp._value2member_map_ else "unknown"
    return f"op {op} {name} x={x} y={y}"


def serverMeaning(op: int, x: int, y: int) -> str:
    name = ServerOp(op).name if op in ServerOp._value2member_map_ else "unknown"
    return f"op {op} {name} x={x} y={y}"


def main(argv: list[str]) -> int:
    directory, serverPid, opcode, *script = argv
    order = byteOrder(os.environ.get("GOBANG_BYTE_ORDER", "native"))
    timeout = float(os.environ.get("GOBANG_AGENT_TIMEOUT", "20"))
    delay = float(os.environ.get("GOBANG_AGENT_DELAY", "0"))
    pid = os.getpid()
    own = fifo.fifoPath(directory, "gbc", pid)
    fifo.createFifo(own)
    readFd = fifo.openForReading(own)
    try:
        serverFd = fifo.openForWriting(fifo.fifoPath(directory, "gbs", int(serverPid)))
    except Refused as error:
        print(_("unreachable {error}").format(error=error), flush=True)  # in the checker's language (LANGUAGE)
        fifo.removeFifo(own)
        return 10

    def send(op: int, x: int = 0, y: int = 0) -> None:
        data = encodeClient(ClientWord(pid & 0xFFFF, op, x, y), order)
        print(f"@ {time.monotonic():.6f} sent {data.hex()} {clientMeaning(op, x, y)}", flush=True)
        os.write(serverFd, data)

    x = 0
    if script and script[0].startswith("game="):
        x = int(script.pop(0)[5:])
    send(int(opcode), x, 0)
    words = WordReader(2)
    first = True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _writable, _failed = select.select([readFd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            continue
        for raw in words.feed(os.read(readFd, 64)):
            word = decodeServer(raw, order)
            print(f"@ {time.monotonic():.6f} received {raw.hex()} {serverMeaning(word.opcode, word.x, word.y)}")
            print(word.opcode, word.x, word.y, flush=True)
            if first:
                first = False
                fifo.removeFifo(own)
            if word.opcode <= 3:
                return word.opcode
            if word.opcode == 8:
                time.sleep(delay)  # a slower player, so that a kibitzer can join mid-game
                if not script:
                    return 11
                move = script.pop(0)
                if move == "pass":
                    send(ClientOp.MOVE, 0, 0)
                elif move == "resign":
                    send(ClientOp.RESIGN)
                elif move == "signoff":
                    send(ClientOp.SIGNOFF)
                else:
                    mx, my = (int(v) for v in move.split(","))
                    send(ClientOp.MOVE, mx, my)
    fifo.removeFifo(own)
    return 12


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
