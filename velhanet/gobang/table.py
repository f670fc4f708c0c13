"""The Gobang server's routing: words from the one server FIFO to the right game.

Many games share one server FIFO. Black and white signons pair up in
arrival order: a signon joins the oldest game that waits for its colour,
or opens a new one. A kibitzer names a game with x (the game number the
server logs, 1, 2, …) or sends x = 0 for the oldest game in progress (or,
if none is playing yet, the oldest waiting one).

The table only sees pids and L{Channel}s; opening a client's FIFO (with
its security checks), telling whether a process is alive and whether it
may kill the server are injected, so all of this runs in memory in tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from twisted.logger import Logger

from velhanet.games.kinarow import KInARowRules
from velhanet.gobang.game import BLACK, WHITE, Channel, Game, GameCore, GameMachine
from velhanet.gobang.wire import ClientOp, ClientWord, ServerOp, ServerWord


class Refused(Exception):
    """A signon that cannot be accepted (no FIFO, not a FIFO, wrong owner, …); the text says why."""


class ClientChannel(Channel, Protocol):
    """A channel the table can also close."""

    def close(self) -> None: ...


@dataclass
class _Seat:
    game: Game
    core: GameCore
    channel: ClientChannel


class Table:
    log = Logger()

    def __init__(
        self,
        rules: KInARowRules,
        openChannel: Callable[[int], ClientChannel],
        killRefusal: Callable[[int, ClientChannel | None], str | None],
        stopServer: Callable[[], None],
        once: bool = False,
    ) -> None:
        self.rules = rules
        self.openChannel = openChannel
        self.killRefusal = killRefusal
        """Why a Kill from these pid bits (and the participant's channel, if any) is not honoured."""
        self.stopServer = stopServer
        self.once = once
        self.games: dict[int, tuple[Game, GameCore]] = {}
        self.bySender: dict[int, _Seat] = {}
        """Participants by the 16 pid bits their words carry."""
        self.nextNumber = 1
        self.finishedGames = 0

    # -- words in -------------------------------------------------------------

    def received(self, word: ClientWord) -> None:
        opcode = word.opcode
        if opcode in (ClientOp.SIGNON_BLACK, ClientOp.SIGNON_WHITE, ClientOp.SIGNON_KIBITZ):
            self.signon(word)
        elif opcode == ClientOp.KILL:
            self.kill(word.pid)
        elif opcode in (ClientOp.MOVE, ClientOp.RESIGN, ClientOp.SIGNOFF):
            seat = self.bySender.get(word.pid)
            if seat is None:
                self.log.info("{word}: this pid is in no game; dropped", word=word.describe())
            elif opcode == ClientOp.MOVE:
                seat.game.move(seat.channel, word.x, word.y)
            elif opcode == ClientOp.RESIGN:
                seat.game.resign(seat.channel)
            else:
                self.forget(seat, "signed off")
                seat.game.leave(seat.channel, "signed off")
        else:
            self.log.warn("{word}: unknown opcode; dropped", word=word.describe())

    def signon(self, word: ClientWord) -> None:
        if word.pid in self.bySender:
            self.log.info("{word}: this pid is already in a game; dropped", word=word.describe())
            return
        try:
            channel = self.openChannel(word.pid)
        except Refused as error:
            self.log.warn("signon from pid {pid} refused: {why}", pid=word.pid, why=str(error))
            return
        channel.send(ServerWord(ServerOp.BOARD_SIZE, 0, self.rules.height))
        if word.opcode == ClientOp.SIGNON_KIBITZ:
            found = self._gameToWatch(word.x)
            if found is None:
                self.log.info("kibitzer pid {pid}: no game {which} to watch", pid=word.pid, which=word.x or "")
                channel.send(ServerWord(ServerOp.ABORTED))
                channel.close()
                return
            game, core = found
            self.bySender[word.pid] = _Seat(game, core, channel)
            self.log.info("pid {pid} watches game {number}", pid=word.pid, number=core.number)
            game.kibitz(channel)
            return
        colour = BLACK if word.opcode == ClientOp.SIGNON_BLACK else WHITE
        game, core = self._gameFor(colour)
        self.bySender[word.pid] = _Seat(game, core, channel)
        self.log.info(
            "pid {pid} plays {colour} in game {number}",
            pid=word.pid,
            colour=("black", "white")[colour],
            number=core.number,
        )
        game.seat(colour, channel)

    def _gameFor(self, colour: int) -> tuple[Game, GameCore]:
        for game, core in self.games.values():  # dicts keep creation order: oldest first
            if core.state is None and core.seats[colour] is None:
                return game, core
        core = GameCore(self.nextNumber, self.rules, self._gameOver)
        self.nextNumber += 1
        game = GameMachine(core)
        self.games[core.number] = (game, core)
        return game, core

    def _gameToWatch(self, number: int) -> tuple[Game, GameCore] | None:
        if number:
            return self.games.get(number)
        playing = [entry for entry in self.games.values() if entry[1].state is not None]
        candidates = playing or list(self.games.values())
        return candidates[0] if candidates else None

    def kill(self, pid: int) -> None:
        seat = self.bySender.get(pid)
        refusal = self.killRefusal(pid, seat.channel if seat is not None else None)
        if refusal is not None:
            self.log.warn("kill from pid {pid} ignored: {why}", pid=pid, why=refusal)
            return
        self.log.info("killed by pid {pid}", pid=pid)
        self.stopServer()

    # -- endings ---------------------------------------------------------------------

    def forget(self, seat: _Seat, why: str) -> None:
        for pid, known in list(self.bySender.items()):
            if known is seat:
                del self.bySender[pid]
        seat.channel.close()

    def _gameOver(self, core: GameCore) -> None:
        self.games.pop(core.number, None)
        for pid, seat in list(self.bySender.items()):
            if seat.core is core:
                del self.bySender[pid]
                seat.channel.close()
        self.finishedGames += 1
        if self.once and core.state is not None:
            self.log.info("--once: the first game is over; stopping")
            self.stopServer()

    def checkAlive(self, isAlive: Callable[[ClientChannel], bool]) -> None:
        """Drop every participant whose process is gone (their game ends with opcode 3)."""
        for seat in list(self.bySender.values()):
            if not isAlive(seat.channel):
                self.forget(seat, "process gone")
                seat.game.leave(seat.channel, "its process is gone")

    def shutdown(self) -> None:
        for game, _ in list(self.games.values()):
            game.shutdown()
