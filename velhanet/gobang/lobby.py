"""The Gobang lobby: who plays whom, and every word from the one server FIFO to the right game.

Pure rules (routing by pid, pairing, kibitzers, Kill, liveness): it sees
words and channels, never a FIFO.

Many games share one server FIFO. Black and white signons pair up in
arrival order: a signon joins the oldest game that waits for its colour,
or opens a new one. A kibitzer names a game with x (the game number the
server logs, 1, 2, …) or sends x = 0 for the oldest game in progress (or,
if none is playing yet, the oldest waiting one).

The lobby only sees pids and L{Participant}s; opening a client's FIFO (with
its security checks), telling whether a process is alive and whether it
may kill the server are injected, so all of this runs in memory in tests.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass

from twisted.logger import Logger

from velhanet.games.kinarow import KInARowRules
from velhanet.gobang.room import BLACK, COLOUR, WHITE, Participant, Room, RoomCore, RoomMachine
from velhanet.gobang.wire import ClientOp, ClientWord, Refused, ServerOp, ServerWord
from velhanet.i18n import _
from velhanet.watching import NO_WATCHER, GameWatcher

DROPS_LOGGED_PER_READ = 16
"""Dropped words logged one by one per read of the server FIFO; the rest are summed up in one line.

A flood of 64 KiB of junk is 16,384 words: a log line for each would make
the honest players' words wait seconds for the server to get through it."""


def _misfit(word: ClientWord) -> str | None:
    """Why a word cannot be what a client sends (None: it can): unused fields must be 0.

    Every client known (ours, the C client of the tests, the checker) sends
    zeros there; a random or garbled word almost never does.
    """
    opcode = word.opcode
    if opcode in (ClientOp.SIGNON_BLACK, ClientOp.SIGNON_WHITE, ClientOp.SIGNOFF, ClientOp.RESIGN, ClientOp.KILL):
        if word.x or word.y:
            return _("{opcode} carries no coordinates").format(opcode=ClientOp(opcode).name)
    elif opcode == ClientOp.SIGNON_KIBITZ:
        if word.y:
            return _("SIGNON_KIBITZ carries a game number in x and 0 in y")
    elif opcode != ClientOp.MOVE:
        return _("unknown opcode")
    return None


class Member(Participant, typing.Protocol):
    """A channel the lobby can also close."""

    def close(self) -> None: ...


@dataclass
class _Seat:
    game: Room
    core: RoomCore
    channel: Member


class Lobby:
    """Games by number, participants by pid; ``coreType`` is the seam a variant of the server replaces."""

    log = Logger()
    coreType = RoomCore
    watcher: GameWatcher = NO_WATCHER
    """Where started games are reported for the spectators' site (the service sets it for ``--web``)."""

    def __init__(
        self,
        rules: KInARowRules,
        openChannel: Callable[[int], Member],
        killRefusal: Callable[[int], str | None],
        stopServer: Callable[[], None],
        once: bool = False,
    ) -> None:
        self.rules = rules
        self.openChannel = openChannel
        self.killRefusal = killRefusal
        """Why a Kill with these pid bits is not honoured (None: it is)."""
        self.stopServer = stopServer
        self.once = once
        self.games: dict[int, tuple[Room, RoomCore]] = {}
        self.bySender: dict[int, _Seat] = {}
        """Participants by the 16 pid bits their words carry."""
        self.nextNumber = 1
        self.finishedGames = 0
        self.droppedInRead = 0
        self.unloggedDrops: dict[str, int] = {}
        """Dropped words of the current read beyond L{DROPS_LOGGED_PER_READ}, by reason."""

    # -- words in -------------------------------------------------------------

    def received(self, word: ClientWord) -> None:
        """One word from the server FIFO: refused unless it fits its sender's state.

        Anyone may write any word (``docs/security.md``), so a word that does
        not fit is dropped with a log line, never acted on: a field the opcode
        does not use that is not 0, a signon from a pid already signed on, a
        move, resign or signoff from a pid in no game (the game then refuses
        one out of turn).
        """
        opcode = word.opcode
        misfit = _misfit(word)
        if misfit is not None:
            self.drop(word, misfit)
        elif opcode in (ClientOp.SIGNON_BLACK, ClientOp.SIGNON_WHITE, ClientOp.SIGNON_KIBITZ):
            self.signon(word)
        elif opcode == ClientOp.KILL:
            self.kill(word.pid)
        else:
            seat = self.bySender.get(word.pid)
            if seat is None:
                self.drop(word, _("this pid is in no game"))
            elif opcode == ClientOp.MOVE:
                seat.game.move(seat.channel, word.x, word.y)
            elif opcode == ClientOp.RESIGN:
                seat.game.resign(seat.channel)
            else:
                # The game tells the leaver too (opcode 3): a forged signoff
                # must not leave the real client waiting for an answer.
                seat.game.leave(seat.channel, _("signed off"))
                self.forget(seat, "signed off")

    def drop(self, word: ClientWord, why: str) -> None:
        """Log a word that is refused; a flood of them is summed up per read (L{endOfRead})."""
        self.droppedInRead += 1
        if self.droppedInRead <= DROPS_LOGGED_PER_READ:
            self.log.info(_("{word}: {why}; dropped"), word=word.describe(), why=why, pid=word.pid, reason=why)
        else:
            self.unloggedDrops[why] = self.unloggedDrops.get(why, 0) + 1

    def endOfRead(self) -> None:
        """The words of one read are handled: one line for the drops not logged one by one."""
        if self.unloggedDrops:
            self.log.info(
                _("{count} more words dropped in this read: {reasons}"),
                count=sum(self.unloggedDrops.values()),
                reasons=", ".join(f"{why}: {n}" for why, n in sorted(self.unloggedDrops.items())),
                counts=dict(self.unloggedDrops),
            )
        self.droppedInRead = 0
        self.unloggedDrops = {}

    def signon(self, word: ClientWord) -> None:
        if word.pid in self.bySender:
            self.drop(word, _("this pid is already signed on"))
            return
        try:
            channel = self.openChannel(word.pid)
        except Refused as error:
            self.log.warn(_("signon from pid {pid} refused: {why}"), pid=word.pid, why=str(error))
            return
        channel.send(ServerWord(ServerOp.BOARD_SIZE, 0, self.rules.height))
        if word.opcode == ClientOp.SIGNON_KIBITZ:
            found = self._gameToWatch(word.x)
            if found is None:
                self.log.info(_("kibitzer pid {pid}: no game {which} to watch"), pid=word.pid, which=word.x or "")
                channel.send(ServerWord(ServerOp.ABORTED))
                channel.close()
                return
            game, core = found
            self.bySender[word.pid] = _Seat(game, core, channel)
            self.log.info(_("pid {pid} watches game {number}"), pid=word.pid, number=core.number)
            game.kibitz(channel)
            return
        colour = BLACK if word.opcode == ClientOp.SIGNON_BLACK else WHITE
        game, core = self._gameFor(colour)
        self.bySender[word.pid] = _Seat(game, core, channel)
        self.log.info(
            _("pid {pid} plays {colour} in game {number}"),
            pid=word.pid,
            colour=_(COLOUR[colour]),
            number=core.number,
        )
        game.seat(colour, channel)

    def _gameFor(self, colour: int) -> tuple[Room, RoomCore]:
        for game, core in self.games.values():  # dicts keep creation order: oldest first
            if core.state is None and core.seats[colour] is None:
                return game, core
        core = self.coreType(self.nextNumber, self.rules, self._gameOver)
        core.watcher = self.watcher
        self.nextNumber += 1
        game = RoomMachine(core)
        self.games[core.number] = (game, core)
        return game, core

    def _gameToWatch(self, number: int) -> tuple[Room, RoomCore] | None:
        if number:
            return self.games.get(number)
        playing = [entry for entry in self.games.values() if entry[1].state is not None]
        candidates = playing or list(self.games.values())
        return candidates[0] if candidates else None

    def kill(self, pid: int) -> None:
        refusal = self.killRefusal(pid)
        if refusal is not None:
            self.log.warn(_("kill from pid {pid} ignored: {why}"), pid=pid, why=refusal)
            return
        self.log.info(_("killed by pid {pid}"), pid=pid)
        self.stopServer()

    # -- endings ---------------------------------------------------------------------

    def forget(self, seat: _Seat, why: str) -> None:
        for pid, known in list(self.bySender.items()):
            if known is seat:
                del self.bySender[pid]
        seat.channel.close()

    def _gameOver(self, core: RoomCore) -> None:
        self.games.pop(core.number, None)
        for pid, seat in list(self.bySender.items()):
            if seat.core is core:
                del self.bySender[pid]
                seat.channel.close()
        self.finishedGames += 1
        if self.once and core.state is not None:
            self.log.info(_("--once: the first game is over; stopping"))
            self.stopServer()

    def checkAlive(self, isAlive: Callable[[Member], bool]) -> None:
        """Drop every participant whose process is gone (their game ends with opcode 3)."""
        for seat in list(self.bySender.values()):
            if not isAlive(seat.channel):
                self.forget(seat, "process gone")
                seat.game.leave(seat.channel, _("its process is gone"))

    def shutdown(self) -> None:
        for game, _core in list(self.games.values()):
            game.shutdown()
