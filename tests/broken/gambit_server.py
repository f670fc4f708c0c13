"""velhanet's Gambit server with one fault, chosen on the command line, for the conformance tests.

    python -m tests.broken.gambit_server PORT FAULT

Each fault breaks exactly one rule of ``docs/gambit.md`` (its anchor is the
fault's name), so that exactly that check fails; ``dies-on-unknown-join``
stops the whole server, as the original panics on a MOVE before JOIN.
"""

from __future__ import annotations

import os
import sys

from twisted.internet import reactor

from velhanet.gambit.server import GambitServerFactory, GambitServerProtocol
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message


class WrongJoinName(GambitServerProtocol):
    def send(self, message: Message, relayed: bool = False) -> None:
        game = self.game
        if message.cmd == Cmd.OK and game is not None and self is game.core.white and game.core.black is not None:
            message = Message(Cmd.OK, "", "?")  # White is not told who joined
        super().send(message, relayed)


class SilentJoin(GambitServerProtocol):
    def join(self, user: str, args: str) -> None:
        if args.strip().lower() in self.factory.games:
            super().join(user, args)


class JoinsAnyway(GambitServerProtocol):
    """As the original: ERROR for White's name, and then the join anyway."""

    def join(self, user: str, args: str) -> None:
        game = self.factory.games.get(args.strip().lower())
        if game is not None and game.core.black is None and user.strip() == game.core.white.name:
            self.send(Message(Cmd.ERROR, "", "same name"))
            self.name = user.strip()
            self.game = game
            game.machine.join(self)
            return
        super().join(user, args)


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


class DiesOnUnknownJoin(GambitServerProtocol):
    def join(self, user: str, args: str) -> None:
        if args.strip().lower() not in self.factory.games:
            os._exit(2)
        super().join(user, args)


FAULTS = {
    "gambit-create": GambitServerProtocol,  # with ids of another form: see main
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
}


def main() -> None:
    port, fault = int(sys.argv[1]), sys.argv[2]
    factory = GambitServerFactory(reactor, language="en")
    factory.buildProtocol = lambda addr: FAULTS[fault](factory)  # type: ignore[method-assign]
    if fault == "gambit-create":
        fourHex = factory.newGameId
        factory.newGameId = lambda: f"game-{fourHex()}"  # type: ignore[method-assign]
    reactor.listenTCP(port, factory, interface="127.0.0.1")  # type: ignore[attr-defined]
    print("ready", flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
