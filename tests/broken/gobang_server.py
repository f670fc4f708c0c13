"""velhanet's Gobang server with one fault, chosen on the command line, for the conformance tests.

    python -m tests.broken.gobang_server FIFODIR FAULT

Prints its pid, then serves. Each fault breaks exactly one rule of
``docs/gobang.md`` (its anchor is the fault's name).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from twisted.internet import reactor

from velhanet.gobang import fifo, game, server, table
from velhanet.gobang.wire import ServerOp, ServerWord, byteOrder


def patchOutput(rewrite: object) -> None:
    """Every word to a client passes through ``rewrite(channel, word)``, which returns the words to send."""
    original = server.FifoChannel.send

    def send(self: server.FifoChannel, word: ServerWord) -> None:
        for each in rewrite(self, word):  # type: ignore[operator]
            original(self, each)

    server.FifoChannel.send = send  # type: ignore[method-assign]


def patchResult(change: object) -> None:
    original = game._result

    def result(state: object) -> tuple[int, str]:
        opcode, why = original(state)  # type: ignore[arg-type]
        return change(state, opcode), why  # type: ignore[operator]

    game._result = result  # type: ignore[assignment]


def wronglyNamedServerFifo() -> None:
    original = fifo.fifoPath

    def fifoPath(directory: str | Path, prefix: str, pid: int) -> Path:
        return Path(directory) / f"gbs-{pid}" if prefix == "gbs" else original(directory, prefix, pid)

    fifo.fifoPath = fifoPath  # type: ignore[assignment]
    server.fifo.fifoPath = fifoPath  # type: ignore[attr-defined]


def sizeInX() -> None:
    def rewrite(channel: object, word: ServerWord) -> list[ServerWord]:
        if word.opcode == ServerOp.BOARD_SIZE:
            return [ServerWord(ServerOp.BOARD_SIZE, word.y, 0)]
        return [word]

    patchOutput(rewrite)


def sizeAgainBeforeTheFirstRequest() -> None:
    asked: set[int] = set()

    def rewrite(channel: server.FifoChannel, word: ServerWord) -> list[ServerWord]:
        if word.opcode == ServerOp.YOUR_MOVE and channel.pid not in asked:
            asked.add(channel.pid)
            return [ServerWord(ServerOp.BOARD_SIZE, 0, 11), word]
        return [word]

    patchOutput(rewrite)


def noRequestAfterIllegal() -> None:
    refused: set[int] = set()

    def rewrite(channel: server.FifoChannel, word: ServerWord) -> list[ServerWord]:
        if word.opcode == ServerOp.ILLEGAL:
            refused.add(channel.pid)
        elif word.opcode == ServerOp.YOUR_MOVE and channel.pid in refused:
            refused.discard(channel.pid)
            return []
        return [word]

    patchOutput(rewrite)


def reason(state: object) -> str:
    return state.outcome.reason  # type: ignore[attr-defined,no-any-return]


def lineWonByWhite() -> None:
    patchResult(lambda state, op: ServerOp.WHITE_WINS if reason(state) == "line" else op)


def passesAbort() -> None:
    patchResult(lambda state, op: ServerOp.ABORTED if reason(state) == "passes" else op)


def resignerWins() -> None:
    def change(state: object, opcode: int) -> int:
        if reason(state) != "resign":
            return opcode
        return ServerOp.BLACK_WINS if opcode == ServerOp.WHITE_WINS else ServerOp.WHITE_WINS

    patchResult(change)


def signoffIsADraw() -> None:
    original = game.GameCore.end

    def end(self: game.GameCore, opcode: int, why: str) -> None:
        original(self, ServerOp.DRAW if opcode == ServerOp.ABORTED and "left" in why else opcode, why)

    game.GameCore.end = end  # type: ignore[method-assign]


def noKibitz() -> None:
    original = table.Table.signon

    def signon(self: table.Table, word: object) -> None:
        if word.opcode != 3:  # type: ignore[attr-defined]
            original(self, word)  # type: ignore[arg-type]

    table.Table.signon = signon  # type: ignore[method-assign]


def killIgnored() -> None:
    table.Table.kill = lambda self, pid: None  # type: ignore[method-assign]


FAULTS = {
    "gobang-fifo-name": wronglyNamedServerFifo,
    "gobang-signon": sizeInX,
    "gobang-black-first": sizeAgainBeforeTheFirstRequest,
    "gobang-five": lineWonByWhite,
    "gobang-illegal": noRequestAfterIllegal,
    "gobang-passes": passesAbort,
    "gobang-resign": resignerWins,
    "gobang-signoff": signoffIsADraw,
    "gobang-kibitz": noKibitz,
    "gobang-kill": killIgnored,
}


def main() -> None:
    FAULTS[sys.argv[2]]()
    options = {
        "byte-order": byteOrder("native"),
        "fifo-dir": sys.argv[1],
        "game": "gobang",
        "size": 11,
        "once": False,
        "trace": False,
    }
    service = server.GobangServerService(options, reactor)
    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)  # type: ignore[attr-defined]
    print(os.getpid(), flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
