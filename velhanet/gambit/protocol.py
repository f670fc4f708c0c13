"""The Gambit relay server's Twisted side: one protocol per connection, parse, feed, write.

The protocol decodes (L{JsonStreamDecoder}), asks the L{Lobby} about
CREATE and JOIN, feeds the commands of a game to its room machine, and
writes what they answer, paced.

Hot path, per message: decode (one scan and one ``json.loads``), a dict
lookup for the room, the room's decision, one ``write``. No scan of all
games, no copy of the board. Every reply is one object plus ``\\n``, and
never two writes to one connection closer together than ``spacing``
seconds unless the client sent something in between: the original Go
client decodes one object per read and loses the second one of a read,
but a client that answered our last write has read it (lock step), so a
game between bots runs at full speed.

What one client may cost the server is bounded (L{GambitLimits},
``docs/security.md``): the messages handled per reactor turn, the replies
queued for it, the messages relayed to its opponent and not yet written
(past that the *sender* is closed: the one who floods pays, never the one
who reads), malformed messages in a row, and JOINs to games that are not
open, per connection and per address.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from velhanet.clientlimits import AddressBuckets
from velhanet.gambit.lobby import Game, Lobby
from velhanet.gambit.room import Participant
from velhanet.gambit.texts import WIRE_LANGUAGE, Texts
from velhanet.gambit.wire import MAX_MESSAGE, Cmd, JsonStreamDecoder, MalformedMessage, Message, encode
from velhanet.i18n import _
from velhanet.sendnow import noDelay, writerFor
from velhanet.tracing import Tracer, noTrace
from velhanet.watching import NO_WATCHER, GameWatcher

SPACING = 0.01
"""Seconds between two writes to one connection (see the module docstring).

The original client goes back to ``Read`` microseconds after handling a
message, so two objects 10 ms apart arrive in two reads. Only writes the
client has not answered are paced (the relayed move and the END after a
mate, for example); a game in lock step is not slowed at all."""


@dataclass(frozen=True)
class GambitLimits:
    """What one client may cost the server; ``--limit NAME=VALUE`` changes one."""

    maxMessage: int = MAX_MESSAGE
    """Characters of one JSON object; a longer one closes the connection (the stream cannot resynchronise)."""
    maxQueued: int = 64
    """Replies waiting for a connection that does not read; one more and it is aborted."""
    relayWindow: int = 16
    """Messages from the opponent waiting to be written to a player; one more closes the opponent."""
    perTurn: int = 32
    """Messages of one connection handled before the others get their turn."""
    malformedInRow: int = 16
    """Malformed messages or unknown commands in a row; one more closes the connection."""
    failedJoins: int = 5
    """JOINs to games that are not open on one connection; one more closes it."""
    failedJoinsPerAddress: int = 20
    """JOINs to games that are not open from one address before JOINs from it wait."""
    failedJoinsPerMinute: float = 10.0
    """How fast an address earns back failed JOINs: scanning 65,536 ids takes days."""


@implementer(IPushProducer)
class GambitServerProtocol(Protocol):
    """One client connection: parse, route to its room, write paced replies."""

    log = Logger()

    def __init__(self, factory: GambitServerFactory) -> None:
        self.factory = factory
        self.limits = factory.limits
        self.decoder = JsonStreamDecoder(maxSize=factory.limits.maxMessage)
        self.name = ""
        self.game: Game | None = None
        self.lastGameId: str | None = None
        self.peer = "?"
        self.host = "?"
        self._queue: deque[tuple[bytes, bool]] = deque()
        """Replies not written yet, each with whether it was relayed from the opponent."""
        self._relaysQueued = 0
        self._lastWrite = float("-inf")
        self._write: Callable[[bytes], None] = lambda data: None
        """The transport's write, or one that sends at once (set when connected)."""
        self._heardSinceWrite = False
        """The client sent something after our last write to it, so it has read that write."""
        self._flushCall: IDelayedCall | None = None
        self._readCall: IDelayedCall | None = None
        self._paused = False
        self._readingPaused = False
        self._closed = False
        self._malformedInRow = 0
        self.failedJoins = 0
        """JOINs to games that are not open, counted by the lobby."""

    # -- connection ---------------------------------------------------------------

    def connectionMade(self) -> None:
        assert self.transport is not None
        peer = self.transport.getPeer()
        self.host = str(getattr(peer, "host", "?"))
        self.peer = f"{self.host}:{getattr(peer, 'port', '?')}"
        self.transport.registerProducer(self, True)  # type: ignore[attr-defined]
        self._write = writerFor(self.transport)
        noDelay(self.transport)  # one small object per write: send it now

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        self._closed = True
        for call in (self._flushCall, self._readCall):
            if call is not None and call.active():
                call.cancel()
        self._queue.clear()
        self._relaysQueued = 0
        if self.game is not None:
            game, self.game = self.game, None
            game.machine.leave(self)

    def close(self, why: str, tell: str | None = None) -> None:
        """Close after the replies already written, telling the client ``tell`` first."""
        if self._closed:
            return
        if tell is not None:
            raw = encode(Message(Cmd.ERROR, "", tell))
            self.factory.trace("out", self.peer, raw, Message(Cmd.ERROR, "", tell))
            self._write(raw)
        self._closed = True
        self.log.info(_("closing {peer}: {why}"), peer=self.peer, why=why)
        assert self.transport is not None
        self.transport.loseConnection()

    def abort(self, why: str) -> None:
        """Drop a connection that does not read: waiting for its buffer to drain could take forever."""
        if not self._closed:
            self._closed = True
            self.log.info(_("aborting {peer}: {why}"), peer=self.peer, why=why)
            assert self.transport is not None
            self.transport.abortConnection()  # type: ignore[attr-defined]

    # IPushProducer: the transport tells us when its write buffer is full.
    def pauseProducing(self) -> None:
        self._paused = True

    def resumeProducing(self) -> None:
        self._paused = False
        self._schedule()

    def stopProducing(self) -> None:
        self._closed = True

    # -- writing ----------------------------------------------------------------------

    def send(self, message: Message, relayed: bool = False) -> None:
        if self._closed:
            return
        raw = encode(message)
        self.factory.trace("out", self.peer, raw, message)
        if not self._queue and not self._paused:
            now = self.factory.clock.seconds()
            if self._heardSinceWrite or now - self._lastWrite >= self.factory.spacing:
                self._heardSinceWrite = False
                self._lastWrite = now
                self._write(raw)
                return
        if len(self._queue) >= self.limits.maxQueued:
            self.abort(_("more than {count} replies unread").format(count=self.limits.maxQueued))
            return
        self._queue.append((raw, relayed))
        self._relaysQueued += relayed
        self._schedule()

    def _schedule(self) -> None:
        if self._flushCall is None and self._queue and not self._paused and not self._closed:
            # A full ``spacing`` from now, not from the last write() call: its
            # bytes leave at the end of this reactor turn, maybe milliseconds later.
            spacing = self.factory.spacing
            delay = spacing if self.factory.clock.seconds() - self._lastWrite < spacing else 0.0
            self._flushCall = self.factory.clock.callLater(delay, self._flush)

    def _flush(self) -> None:
        self._flushCall = None
        if self._queue and not self._paused and not self._closed:
            self._lastWrite = self.factory.clock.seconds()
            raw, relayed = self._queue.popleft()
            self._relaysQueued -= relayed
            self._heardSinceWrite = False
            self._write(raw)
        self._schedule()

    # -- Participant (for the room) ----------------------------------------------------

    def relay(self, message: Message, sender: Participant) -> None:
        if self._relaysQueued >= self.limits.relayWindow:
            count = self._relaysQueued
            sender.disconnect(
                _("flooded its opponent {peer} ({count} relayed messages unwritten)").format(
                    peer=self.peer, count=count
                ),
                self.factory.texts("floodedOpponent", name=self.name, count=count),
            )
            return
        self.send(message, relayed=True)

    def disconnect(self, why: str, tell: str) -> None:
        self.close(why, tell)

    def seat(self, game: Game, name: str) -> None:
        self.name = name
        self.game = game

    def leaveRoom(self) -> None:
        if self.game is not None:
            self.lastGameId = self.game.core.gameId
        self.game = None

    # -- reading ------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        self._heardSinceWrite = True
        self.decoder.push(data)
        self._handleSome()

    def _handleSome(self) -> None:
        """Handle at most ``perTurn`` messages now; the rest after the other connections' turn."""
        self._readCall = None
        for _turn in range(self.limits.perTurn):
            if self._closed:
                return
            item = self.decoder.next()
            if item is None:
                if self._readingPaused:
                    self._readingPaused = False
                    self.transport.resumeProducing()  # type: ignore[union-attr]
                return
            self._handleOne(*item)
        if self._closed:
            return
        if not self._readingPaused:
            self._readingPaused = True
            self.transport.pauseProducing()  # type: ignore[union-attr]
        self._readCall = self.factory.clock.callLater(0, self._handleSome)

    def _handleOne(self, raw: str, item: Message | MalformedMessage) -> None:
        self.factory.trace("in", self.peer, raw, item)
        if isinstance(item, MalformedMessage):
            self.log.warn(_("bad input from {peer}: {reason}"), peer=self.peer, reason=str(item))
            text = self.factory.texts("badMessage", reason=str(item))
            if item.fatal:
                self.close(str(item), text)
            else:
                self._refused(text)
            return
        self._malformedInRow = 0
        self.handle(item)

    def _refused(self, text: str) -> None:
        """ERROR for a message that is not one of the protocol's; too many in a row close the connection."""
        self._malformedInRow += 1
        if self._malformedInRow > self.limits.malformedInRow:
            count = self._malformedInRow
            self.close(_("{count} bad messages in a row").format(count=count), self.factory.texts.tooManyBad(count))
            return
        self.send(Message(Cmd.ERROR, "", text))

    def handle(self, message: Message) -> None:
        cmd = message.cmd
        if cmd == Cmd.CREATE:
            self.factory.lobby.create(self, message.user)
        elif cmd == Cmd.JOIN:
            self.factory.lobby.join(self, message.user, message.args)
        elif cmd in (Cmd.MOVE, Cmd.END, Cmd.DRAW):
            self.inGame(cmd, message.args)
        elif cmd in (Cmd.OK, Cmd.ERROR):
            self.log.info(
                _("{peer} sent {message}; clients do not send it, ignored"), peer=self.peer, message=message.describe()
            )
        else:
            self._refused(self.factory.texts("unknownCmd", cmd=cmd))

    def inGame(self, cmd: int, args: str) -> None:
        if self.game is None:
            self.factory.lobby.outsideGame(self, cmd)
            return
        machine = self.game.machine
        if cmd == Cmd.MOVE:
            machine.move(self, args)
        elif cmd == Cmd.END:
            machine.end(self, args)
        else:
            machine.draw(self, args)


class GambitServerFactory(Factory):
    """What every connection shares: the lobby, the clock, the limits, the tracer.

    ``protocol`` and ``lobbyType`` are the seams a variant of the server
    (``standins/faulty/gambit_server.py``) replaces in a subclass.
    """

    protocol = GambitServerProtocol
    lobbyType = Lobby

    def __init__(
        self,
        clock: IReactorTime,
        validate: bool = True,
        spacing: float = SPACING,
        trace: Tracer | None = None,
        language: str = WIRE_LANGUAGE,
        limits: GambitLimits | None = None,
        watcher: GameWatcher = NO_WATCHER,
    ) -> None:
        self.clock = clock
        self.limits = limits or GambitLimits()
        self.texts = Texts(language)
        self.spacing = spacing
        self.trace: Tracer = trace or noTrace
        joinFailures = AddressBuckets(self.limits.failedJoinsPerAddress, self.limits.failedJoinsPerMinute, clock)
        self.lobby = self.lobbyType(self.texts, validate, joinFailures, self.limits.failedJoins)
        self.lobby.watcher = watcher

    @property
    def games(self) -> dict[str, Game]:
        """The open games, id → game (the lobby's)."""
        return self.lobby.games

    def buildProtocol(self, addr: object) -> GambitServerProtocol:
        return self.protocol(self)
