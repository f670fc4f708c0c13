"""A scripted stand-in for the original Go Gambit server (sdemingo/gambitsrv), on the wire.

What it does, as read from its source and seen on loopback
(``docs/gambit.md``, "The original programs"):

- objects are written back to back with no newline, ``{"Cmd":1,"User":…,"Args":…}``;
- CREATE → OK{User: creator, Args: id}; JOIN → OK{User: joiner, Args: White}
  to the joiner and OK{User: joiner, Args: joiner} to White;
- a JOIN with White's name → ERROR "No se puede usar el mismo nombre que el
  oponente" *and then the join anyway*, in the same write;
- a JOIN for an unknown id → no answer at all;
- MOVE → relayed unchanged to White if its ``User`` is Black's name, else to
  Black (by name, not by connection: with two equal names, White's own moves
  come back to White);
  no validation, no reply; it never detects mate or a draw;
- END → to the other player only: END{User: sender, Args: "<other> ha ganado la partida"};
- a closed connection → END "El jugador X ha abandonado la partida" to both;
- cmd 6 (velhanet's draw offer) and unknown cmds → ignored;
- it never closes a connection.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from twisted.internet.protocol import Factory, Protocol
from twisted.python.failure import Failure

from velhanet.gambit.wire import JsonStreamDecoder, Message


@dataclass
class _Game:
    white: OriginalServerProtocol
    black: OriginalServerProtocol | None = None


class OriginalServerProtocol(Protocol):
    def __init__(self, factory: OriginalServerFactory) -> None:
        self.factory = factory
        self.decoder = JsonStreamDecoder()
        self.user = ""
        self.game: _Game | None = None

    def write(self, cmd: int, user: str, args: str) -> None:
        assert self.transport is not None
        self.transport.write(json.dumps({"Cmd": cmd, "User": user, "Args": args}, separators=(",", ":")).encode())

    def dataReceived(self, data: bytes) -> None:
        for _, item in self.decoder.feed(data):
            if isinstance(item, Message):
                self.factory.received.append(item)
                self.handle(item)

    def handle(self, message: Message) -> None:
        if message.cmd == 2:
            gameId = f"{len(self.factory.games) + 0xE215:04x}"[-4:]
            self.user = message.user
            self.game = self.factory.games[gameId] = _Game(self)
            self.write(1, message.user, gameId)
        elif message.cmd == 3:
            game = self.factory.games.get(message.args)
            if game is None:
                return  # the original never answers an unknown id
            self.user = message.user
            if message.user == game.white.user:
                self.write(0, "", "No se puede usar el mismo nombre que el oponente")
            game.black, self.game = self, game
            self.write(1, message.user, game.white.user)
            game.white.write(1, message.user, message.user)
        elif message.cmd == 4 and self.game is not None and self.game.black is not None:
            # server.go: to White when User is Black's name, else to Black — by name, not by connection
            target = self.game.white if message.user == self.game.black.user else self.game.black
            target.write(4, message.user, message.args)
        elif message.cmd == 5 and self.game is not None and self.game.black is not None:
            other = self.game.black if self is self.game.white else self.game.white
            other.write(5, self.user, f"{other.user} ha ganado la partida")

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        game = self.game
        if game is None:
            return
        for player in (game.white, game.black):
            if player is not None and player is not self and player.transport is not None:
                player.write(5, self.user, f"El jugador {self.user} ha abandonado la partida")


@dataclass
class OriginalServerFactory(Factory):
    games: dict[str, _Game] = field(default_factory=dict)
    received: list[Message] = field(default_factory=list)

    def buildProtocol(self, addr: object) -> OriginalServerProtocol:
        return OriginalServerProtocol(self)
