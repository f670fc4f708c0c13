"""velhanet's Gobang server with one fault, chosen on the command line, for the conformance tests.

    python -m standins.faulty.gobang_server FIFODIR FAULT

Prints its pid, then serves. Each fault breaks exactly one rule of
``docs/gobang.md`` (its anchor is the fault's name).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from twisted.internet import reactor

from velhanet.games.kinarow import KInARowState
from velhanet.gobang.lobby import Lobby
from velhanet.gobang.protocol import FifoChannel
from velhanet.gobang.room import RoomCore
from velhanet.gobang.service import GobangService
from velhanet.gobang.tap import Options
from velhanet.gobang.wire import ClientWord, ServerOp, ServerWord

# Each fault is a subclass of the server's service that replaces one of its
# seams (lobbyType, channelType, the lobby's coreType, serverFifoPath): no
# global monkeypatch, so the variant is exactly the server plus one change.


def withChannel(channelType: type[FifoChannel]) -> type[GobangService]:
    return type("BrokenService", (GobangService,), {"channelType": channelType})


def withLobby(lobbyType: type[Lobby]) -> type[GobangService]:
    return type("BrokenService", (GobangService,), {"lobbyType": lobbyType})


def withCore(coreType: type[RoomCore]) -> type[GobangService]:
    return withLobby(type("BrokenLobby", (Lobby,), {"coreType": coreType}))


class WronglyNamedServerFifo(GobangService):
    def serverFifoPath(self, pid: int) -> Path:
        return self.directory / f"gbs-{pid}"


class SizeInX(FifoChannel):
    def send(self, word: ServerWord) -> None:
        if word.opcode == ServerOp.BOARD_SIZE:
            word = ServerWord(ServerOp.BOARD_SIZE, word.y, 0)
        super().send(word)


class SizeAgainBeforeTheFirstRequest(FifoChannel):
    asked = False

    def send(self, word: ServerWord) -> None:
        if word.opcode == ServerOp.YOUR_MOVE and not self.asked:
            self.asked = True
            super().send(ServerWord(ServerOp.BOARD_SIZE, 0, 11))
        super().send(word)


class NoRequestAfterIllegal(FifoChannel):
    refused = False

    def send(self, word: ServerWord) -> None:
        if word.opcode == ServerOp.ILLEGAL:
            self.refused = True
        elif word.opcode == ServerOp.YOUR_MOVE and self.refused:
            self.refused = False
            return
        super().send(word)


def reason(state: KInARowState) -> str:
    assert state.outcome is not None
    return state.outcome.reason


class LineWonByWhite(RoomCore):
    def result(self, state: KInARowState) -> tuple[int, str]:
        opcode, why = super().result(state)
        return (ServerOp.WHITE_WINS if reason(state) == "line" else opcode), why


class PassesAbort(RoomCore):
    def result(self, state: KInARowState) -> tuple[int, str]:
        opcode, why = super().result(state)
        return (ServerOp.ABORTED if reason(state) == "passes" else opcode), why


class ResignerWins(RoomCore):
    def result(self, state: KInARowState) -> tuple[int, str]:
        opcode, why = super().result(state)
        if reason(state) == "resign":
            opcode = ServerOp.BLACK_WINS if opcode == ServerOp.WHITE_WINS else ServerOp.WHITE_WINS
        return opcode, why


class SignoffIsADraw(RoomCore):
    def end(self, opcode: int, why: str) -> None:
        super().end(ServerOp.DRAW if opcode == ServerOp.ABORTED and "left" in why else opcode, why)


class NoKibitz(Lobby):
    def signon(self, word: ClientWord) -> None:
        if word.opcode != 3:
            super().signon(word)


class KillIgnored(Lobby):
    def kill(self, pid: int) -> None:
        pass


FAULTS: dict[str, type[GobangService]] = {
    "gobang-fifo-name": WronglyNamedServerFifo,
    "gobang-signon": withChannel(SizeInX),
    "gobang-black-first": withChannel(SizeAgainBeforeTheFirstRequest),
    "gobang-five": withCore(LineWonByWhite),
    "gobang-illegal": withChannel(NoRequestAfterIllegal),
    "gobang-passes": withCore(PassesAbort),
    "gobang-resign": withCore(ResignerWins),
    "gobang-signoff": withCore(SignoffIsADraw),
    "gobang-kibitz": withLobby(NoKibitz),
    "gobang-kill": withLobby(KillIgnored),
}


def main() -> None:
    options = Options()
    options.parseOptions(["--fifo-dir", sys.argv[1]])
    service = FAULTS[sys.argv[2]](options, reactor)
    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    print(os.getpid(), flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
