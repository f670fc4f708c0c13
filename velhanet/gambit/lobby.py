"""Where Gambit players meet: the open games and the rules of CREATE and JOIN.

Pure rules, no transport: the lobby answers a connection through the narrow
L{Member} interface (send it a message, seat it in a game, close it), so it
runs in memory against recording fakes in tests. The protocol asks it only
for CREATE, JOIN and in-game commands from a connection in no game; a MOVE
inside a game goes from the protocol straight to the room (the hot path
does not pass through here).
"""

from __future__ import annotations

import secrets
import typing
from dataclasses import dataclass

from velhanet.clientlimits import AddressBuckets
from velhanet.gambit.room import Participant, Room, RoomCore, RoomMachine
from velhanet.gambit.texts import Texts
from velhanet.gambit.wire import Cmd, Message
from velhanet.i18n import _
from velhanet.watching import NO_WATCHER, GameWatcher

MAX_NAME = 64

GAME_IDS = 0x10000
"""Four lowercase hex digits: as many open games at most."""


@dataclass
class Game:
    """One open game: its room machine, and the core the lobby reads (players, id)."""

    machine: Room
    core: RoomCore


class Member(Participant, typing.Protocol):
    """A connection as the lobby sees it: a L{Participant} that can sit down in a game."""

    host: str
    """Its address, for the per-address limit on failed JOINs."""
    game: Game | None
    lastGameId: str | None
    """The game it last played, so that the original client's END after a mate is not refused."""
    failedJoins: int

    def seat(self, game: Game, name: str) -> None:
        """It now plays in ``game`` under ``name``."""


class Lobby:
    """Game id → game for every open game, and the rules for getting into one.

    ``joinFailures`` counts JOINs to games that are not open per address;
    more than ``failedJoinsPerConnection`` on one connection close it, so
    that game ids cannot be scanned.
    """

    watcher: GameWatcher = NO_WATCHER
    """Where started games are reported for spectators (the factory sets it for ``--web``)."""

    def __init__(
        self, texts: Texts, validate: bool, joinFailures: AddressBuckets, failedJoinsPerConnection: int
    ) -> None:
        self.texts = texts
        self.validate = validate
        self.joinFailures = joinFailures
        self.failedJoinsPerConnection = failedJoinsPerConnection
        self.games: dict[str, Game] = {}

    def newGameId(self) -> str | None:
        """Four lowercase hex digits, unique among open games (None if all are taken)."""
        if len(self.games) >= GAME_IDS:
            return None
        while True:
            gameId = secrets.token_hex(2)
            if gameId not in self.games:
                return gameId

    def removeGame(self, gameId: str) -> None:
        self.games.pop(gameId, None)

    def _refuse(self, member: Member, text: str) -> None:
        member.send(Message(Cmd.ERROR, "", text))

    def _inGameAlready(self, member: Member) -> bool:
        if member.game is not None:
            self._refuse(member, self.texts("alreadyInGame", game=member.game.core.gameId))
            return True
        return False

    def _checkName(self, member: Member, user: str) -> str | None:
        name = user.strip()
        if not name:
            self._refuse(member, self.texts("nameRequired"))
            return None
        if len(name) > MAX_NAME:
            self._refuse(member, self.texts("nameTooLong", limit=MAX_NAME))
            return None
        return name

    def create(self, member: Member, user: str) -> None:
        """CREATE: a new game with ``member`` as White, its id in the OK."""
        if self._inGameAlready(member):
            return
        name = self._checkName(member, user)
        if name is None:
            return
        gameId = self.newGameId()
        if gameId is None:
            self._refuse(member, self.texts("noFreeId"))
            return
        core = RoomCore(gameId, member, self.validate, self.removeGame, self.texts, watcher=self.watcher)
        game = Game(RoomMachine(core), core)
        member.seat(game, name)
        self.games[gameId] = game
        member.send(Message(Cmd.OK, "", gameId))

    def join(self, member: Member, user: str, args: str) -> None:
        """JOIN: ``member`` plays Black in the open game ``args`` names; the room starts the game."""
        if self._inGameAlready(member):
            return
        texts = self.texts
        if not self.joinFailures.available(member.host):
            seconds = max(1, round(self.joinFailures.secondsUntilAvailable(member.host)))
            self._refuse(member, texts("joinsRefusedForAWhile", seconds=seconds))
            return
        gameId = args.strip().lower()
        game = self.games.get(gameId)
        if game is None:
            self._failedJoin(member, texts("noSuchGame", game=args.strip()[:MAX_NAME]))
            return
        if game.core.black is not None:
            self._failedJoin(member, texts("gameFull", game=gameId))
            return
        name = self._checkName(member, user)
        if name is None:
            return
        if name == game.core.white.name:
            self._refuse(member, texts("sameName", name=name))
            return
        member.seat(game, name)
        game.machine.join(member)

    def _failedJoin(self, member: Member, text: str) -> None:
        """A JOIN to a game that is not open: counted, so that game ids cannot be scanned."""
        self.joinFailures.fail(member.host)
        member.failedJoins += 1
        if member.failedJoins > self.failedJoinsPerConnection:
            count = member.failedJoins
            member.disconnect(_("{count} failed JOINs").format(count=count), self.texts.tooManyFailedJoins(count))
            return
        self._refuse(member, text)

    def outsideGame(self, member: Member, cmd: int) -> None:
        """MOVE, END or DRAW from a connection in no game."""
        if cmd == Cmd.END and member.lastGameId is not None:
            return  # the original client says "I am mated" after the server said so
        self._refuse(member, self.texts("outsideGame", verb=Cmd(cmd).name))
