"""The Gambit relay server: one protocol per connection, one room machine per game.

Hot path, per message: decode (one ``raw_decode``), a dict lookup for the
room, the room's decision, one ``write``. No scan of all games, no copy of
the board. Every reply is one object plus ``\\n``, and never two writes to
one connection closer together than ``spacing`` seconds: the original Go
client decodes one object per read and loses the second one of a read.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from velhanet.gambit.room import Room, RoomCore, RoomMachine
from velhanet.gambit.texts import DEFAULT_LANGUAGE, Texts
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message, encode

SPACING = 0.01
"""Seconds between two writes to one connection (see the module docstring).

The original client goes back to ``Read`` microseconds after handling a
message, so two objects 10 ms apart arrive in two reads; a ping-pong game
between bots is then limited to one message per 10 ms per connection."""

MAX_QUEUED = 64
"""Replies waiting for a connection that does not read; past this it is closed."""

MAX_NAME = 64


@dataclass
class _Game:
    machine: Room
    core: RoomCore


Tracer = Callable[[str, str, bytes | str, object], None]


@implementer(IPushProducer)
class GambitServerProtocol(Protocol):
    """One client connection: parse, route to its room, write paced replies."""

    log = Logger()

    def __init__(self, factory: GambitServerFactory) -> None:
        self.factory = factory
        self.decoder = JsonStreamDecoder()
        self.name = ""
        self.game: _Game | None = None
        self.lastGameId: str | None = None
        self.peer = "?"
        self._queue: deque[bytes] = deque()
        self._lastWrite = float("-inf")
        self._flushCall: IDelayedCall | None = None
        self._paused = False
        self._closed = False

    # -- connection ---------------------------------------------------------------

    def connectionMade(self) -> None:
        assert self.transport is not None
        peer = self.transport.getPeer()
        self.peer = f"{getattr(peer, 'host', '?')}:{getattr(peer, 'port', '?')}"
        self.transport.registerProducer(self, True)  # type: ignore[attr-defined]
        if hasattr(self.transport, "setTcpNoDelay"):
            self.transport.setTcpNoDelay(True)  # one small object per write: send it now

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        self._closed = True
        if self._flushCall is not None and self._flushCall.active():
            self._flushCall.cancel()
        self._queue.clear()
        if self.game is not None:
            game, self.game = self.game, None
            game.machine.leave(self)

    def close(self, why: str) -> None:
        if not self._closed:
            self._closed = True
            self.log.info("closing {peer}: {why}", peer=self.peer, why=why)
            assert self.transport is not None
            self.transport.loseConnection()

    # IPushProducer: the transport tells us when its write buffer is full.
    def pauseProducing(self) -> None:
        self._paused = True

    def resumeProducing(self) -> None:
        self._paused = False
        self._schedule()

    def stopProducing(self) -> None:
        self._closed = True

    # -- writing ----------------------------------------------------------------------

    def send(self, message: Message) -> None:
        if self._closed:
            return
        raw = encode(message)
        self.factory.trace("out", self.peer, raw, message)
        now = self.factory.clock.seconds()
        if not self._queue and not self._paused and now - self._lastWrite >= self.factory.spacing:
            self._lastWrite = now
            self.transport.write(raw)  # type: ignore[union-attr]
            return
        if len(self._queue) >= MAX_QUEUED:
            self.close(f"more than {MAX_QUEUED} replies unread")
            return
        self._queue.append(raw)
        self._schedule()

    def _schedule(self) -> None:
        if self._flushCall is None and self._queue and not self._paused and not self._closed:
            delay = max(0.0, self._lastWrite + self.factory.spacing - self.factory.clock.seconds())
            self._flushCall = self.factory.clock.callLater(delay, self._flush)

    def _flush(self) -> None:
        self._flushCall = None
        if self._queue and not self._paused and not self._closed:
            self._lastWrite = self.factory.clock.seconds()
            self.transport.write(self._queue.popleft())  # type: ignore[union-attr]
        self._schedule()

    # -- Player (for the room) ----------------------------------------------------------

    def leaveRoom(self) -> None:
        if self.game is not None:
            self.lastGameId = self.game.core.gameId
        self.game = None

    # -- reading ------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        for raw, item in self.decoder.feed(data):
            self.factory.trace("in", self.peer, raw, item)
            if isinstance(item, MalformedMessage):
                self.log.warn("bad input from {peer}: {reason}", peer=self.peer, reason=str(item))
                self.send(Message(Cmd.ERROR, "", self.factory.texts("badMessage", reason=str(item))))
                if item.fatal:
                    self.close(str(item))
                    return
                continue
            self.handle(item)
            if self._closed:
                return

    def handle(self, message: Message) -> None:
        cmd = message.cmd
        if cmd == Cmd.CREATE:
            self.create(message.user)
        elif cmd == Cmd.JOIN:
            self.join(message.user, message.args)
        elif cmd in (Cmd.MOVE, Cmd.END, Cmd.DRAW):
            self.inGame(cmd, message.args)
        elif cmd in (Cmd.OK, Cmd.ERROR):
            self.log.info(
                "{peer} sent {message}; clients do not send it, ignored", peer=self.peer, message=message.describe()
            )
        else:
            self.send(Message(Cmd.ERROR, "", self.factory.texts("unknownCmd", cmd=cmd)))

    def _checkName(self, user: str) -> str | None:
        name = user.strip()
        if not name:
            self.send(Message(Cmd.ERROR, "", self.factory.texts("nameRequired")))
            return None
        if len(name) > MAX_NAME:
            self.send(Message(Cmd.ERROR, "", self.factory.texts("nameTooLong", limit=MAX_NAME)))
            return None
        return name

    def create(self, user: str) -> None:
        texts = self.factory.texts
        if self.game is not None:
            self.send(Message(Cmd.ERROR, "", texts("alreadyInGame", game=self.game.core.gameId)))
            return
        name = self._checkName(user)
        if name is None:
            return
        gameId = self.factory.newGameId()
        if gameId is None:
            self.send(Message(Cmd.ERROR, "", texts("noFreeId")))
            return
        self.name = name
        core = RoomCore(gameId, self, self.factory.validate, self.factory.removeGame, texts)
        self.game = _Game(RoomMachine(core), core)
        self.factory.games[gameId] = self.game
        self.send(Message(Cmd.OK, "", gameId))

    def join(self, user: str, args: str) -> None:
        texts = self.factory.texts
        if self.game is not None:
            self.send(Message(Cmd.ERROR, "", texts("alreadyInGame", game=self.game.core.gameId)))
            return
        gameId = args.strip().lower()
        game = self.factory.games.get(gameId)
        if game is None:
            self.send(Message(Cmd.ERROR, "", texts("noSuchGame", game=args.strip())))
            return
        if game.core.black is not None:
            self.send(Message(Cmd.ERROR, "", texts("gameFull", game=gameId)))
            return
        name = self._checkName(user)
        if name is None:
            return
        if name == game.core.white.name:
            self.send(Message(Cmd.ERROR, "", texts("sameName", name=name)))
            return
        self.name = name
        self.game = game
        game.machine.join(self)

    def inGame(self, cmd: int, args: str) -> None:
        if self.game is None:
            if cmd == Cmd.END and self.lastGameId is not None:
                return  # the original client says "I am mated" after the server said so
            self.send(Message(Cmd.ERROR, "", self.factory.texts("outsideGame", verb=Cmd(cmd).name)))
            return
        machine = self.game.machine
        if cmd == Cmd.MOVE:
            machine.move(self, args)
        elif cmd == Cmd.END:
            machine.end(self, args)
        else:
            machine.draw(self, args)


class GambitServerFactory(Factory):
    """The game table: id → game, for every open game."""

    protocol = GambitServerProtocol  # type: ignore[assignment]

    def __init__(
        self,
        clock: IReactorTime,
        validate: bool = True,
        spacing: float = SPACING,
        trace: Tracer | None = None,
        language: str = DEFAULT_LANGUAGE,
    ) -> None:
        self.clock = clock
        self.validate = validate
        self.texts = Texts(language)
        self.spacing = spacing
        self.games: dict[str, _Game] = {}
        self.trace: Tracer = trace or (lambda direction, peer, raw, decoded: None)

    def buildProtocol(self, addr: object) -> GambitServerProtocol:
        return GambitServerProtocol(self)

    def newGameId(self) -> str | None:
        """Four lowercase hex digits, unique among open games (None if all are taken)."""
        if len(self.games) >= 0x10000:
            return None
        while True:
            gameId = secrets.token_hex(2)
            if gameId not in self.games:
                return gameId

    def removeGame(self, gameId: str) -> None:
        self.games.pop(gameId, None)
