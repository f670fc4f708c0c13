"""velhanet's Gambit server with one fault, chosen on the command line, for the conformance tests.

    python -m standins.faulty.gambit_server PORT FAULT

Each fault breaks exactly one rule of ``docs/gambit.md`` (its anchor is the
fault's name), so that exactly that check fails; ``dies-on-unknown-join``
stops the whole server, as the original panics on a MOVE before JOIN.
Two faults come now and then, as a racy server's do (the original drops a
JOIN under load): ``every-seventh-join`` answers nothing to every seventh
JOIN that would seat a player, ``every-second-end`` forwards every second
END to nobody.
"""

from __future__ import annotations

import os
import sys
from typing import cast

from twisted.internet import reactor
from twisted.internet.protocol import ServerFactory

from velhanet.gambit.lobby import Lobby, Member
from velhanet.gambit.protocol import GambitServerFactory, GambitServerProtocol
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message


class WrongJoinName(GambitServerProtocol):
    def send(self, message: Message, relayed: bool = False) -> None:
        game = self.game
        if message.cmd == Cmd.OK and game is not None and self is game.core.white and game.core.black is not None:
            message = Message(Cmd.OK, "", "?")  # White is not told who joined
        super().send(message, relayed)


class OtherIds(Lobby):
    """Game ids of another form than four hex digits."""

    def newGameId(self) -> str | None:
        return f"game-{super().newGameId()}"


class SilentJoin(Lobby):
    def join(self, member: Member, user: str, args: str) -> None:
        if args.strip().lower() in self.games:
            super().join(member, user, args)


class JoinsAnyway(Lobby):
    """As the original: ERROR for White's name, and then the join anyway."""

    def join(self, member: Member, user: str, args: str) -> None:
        game = self.games.get(args.strip().lower())
        if game is not None and game.core.black is None and user.strip() == game.core.white.name:
            member.send(Message(Cmd.ERROR, "", "same name"))
            member.seat(game, user.strip())
            game.machine.join(member)
            return
        super().join(member, user, args)


class CaseSensitiveKeys(GambitServerProtocol):
    """Only the exact keys Cmd/User/Args are understood; an object with other spellings is ignored."""

    def _handleOne(self, raw: str, item: Message | MalformedMessage) -> None:
        if '"Cmd"' in raw:
            super()._handleOne(raw, item)


class EchoMove(GambitServerProtocol):
    def inGame(self, cmd: int, args: str) -> None:
        super().inGame(cmd, args)
        if cmd == Cmd.MOVE:
            self.send(Message(Cmd.MOVE, "", args))


class DropEnd(GambitServerProtocol):
    def inGame(self, cmd: int, args: str) -> None:
        if cmd != Cmd.END:
            super().inGame(cmd, args)


class SilentDisconnect(GambitServerProtocol):
    def connectionLost(self, reason: object = None) -> None:
        self.game = None  # the opponent is never told
        super().connectionLost()


class NoSplitObjects(GambitServerProtocol):
    def dataReceived(self, data: bytes) -> None:
        self.decoder = JsonStreamDecoder()  # forgets what an earlier read left unfinished
        super().dataReceived(data)


class FirstObjectOnly(GambitServerProtocol):
    """As the original: one object per read; a second object that came in the same read is lost."""

    def dataReceived(self, data: bytes) -> None:
        first = self.decoder.feed(data)[:1]
        for raw, item in first:
            self._handleOne(raw, item)


class CrashOnMoveOutside(GambitServerProtocol):
    def inGame(self, cmd: int, args: str) -> None:
        if self.game is None:
            os._exit(2)  # the original's nil-pointer panic
        super().inGame(cmd, args)


class SilentOnBadJson(GambitServerProtocol):
    def send(self, message: Message, relayed: bool = False) -> None:
        if not (message.cmd == Cmd.ERROR and message.args.startswith("bad message")):
            super().send(message, relayed)


class NamedUser(GambitServerProtocol):
    def send(self, message: Message, relayed: bool = False) -> None:
        super().send(Message(message.cmd, self.name or "server", message.args), relayed)


class DiesOnUnknownJoin(Lobby):
    def join(self, member: Member, user: str, args: str) -> None:
        if args.strip().lower() not in self.games:
            os._exit(2)
        super().join(member, user, args)


class EverySeventhJoin(Lobby):
    """Of the JOINs that would seat a second player, the 7th, 14th, 21st… are read and forgotten: neither the
    joiner nor White hears of them (a JOIN of no game, or with White's name, is answered as always)."""

    joins = 0

    def join(self, member: Member, user: str, args: str) -> None:
        game = self.games.get(args.strip().lower())
        if game is not None and game.core.black is None and user.strip() != game.core.white.name:
            EverySeventhJoin.joins += 1
            if EverySeventhJoin.joins % 7 == 0:
                return
        super().join(member, user, args)


class EverySecondEnd(GambitServerProtocol):
    """ENDs 2, 4, 6… sent by a player in a game reach nobody."""

    ends = 0

    def inGame(self, cmd: int, args: str) -> None:
        if cmd == Cmd.END and self.game is not None:
            EverySecondEnd.ends += 1
            if EverySecondEnd.ends % 2 == 0:
                return
        super().inGame(cmd, args)


FAULTS: dict[str, type[GambitServerProtocol] | type[Lobby]] = {
    "gambit-create": OtherIds,
    "gambit-join": WrongJoinName,
    "gambit-join-unknown": SilentJoin,
    "gambit-join-same-name": JoinsAnyway,
    "gambit-keys": CaseSensitiveKeys,
    "gambit-move-relay": EchoMove,
    "gambit-end": DropEnd,
    "gambit-disconnect": SilentDisconnect,
    "gambit-split": NoSplitObjects,
    "gambit-back-to-back": FirstObjectOnly,
    "gambit-move-outside": CrashOnMoveOutside,
    "gambit-bad-json": SilentOnBadJson,
    "gambit-empty-user": NamedUser,
    "dies-on-unknown-join": DiesOnUnknownJoin,
    "every-seventh-join": EverySeventhJoin,
    "every-second-end": EverySecondEnd,
}


def broken(fault: type[GambitServerProtocol] | type[Lobby]) -> type[GambitServerFactory]:
    """The server's factory with the faulty protocol or lobby in its place (its two seams)."""
    if issubclass(fault, Lobby):
        return type("BrokenFactory", (GambitServerFactory,), {"lobbyType": fault})
    return type("BrokenFactory", (GambitServerFactory,), {"protocol": fault})


def main() -> None:
    port, fault = int(sys.argv[1]), sys.argv[2]
    factory = broken(FAULTS[fault])(reactor, language="en")
    reactor.listenTCP(port, cast(ServerFactory, factory), interface="127.0.0.1")
    print("ready", flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
