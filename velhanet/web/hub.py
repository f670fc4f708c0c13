"""What the spectators' site knows about the games: the hub the rooms report to, and the streams.

The rooms report through a narrow interface, one call per fact: a game
started (L{GameWatcher.started}), a move was played, the game ended
(L{WatchedGame.moved}, L{WatchedGame.ended}). A server run without ``--web``
gets L{NO_WATCHER}, whose calls do nothing. With ``--web`` and nobody
watching, a move costs one small record appended to a list: the board is
drawn only when a spectator needs it, at most once per move for all of
them (L{GameRecord.svg}), and each event is encoded once and the same bytes
written to every stream.

Why server-sent events rather than WebSocket: the updates go one way only
(a spectator never sends anything, which is also what keeps the site
read-only); they are plain HTTP, so they pass proxies and need no upgrade
handshake nor a WebSocket implementation (Twisted has none built in);
``twisted.web`` streams them with C{request.write} on a response that never
finishes; and the browser's C{EventSource} reconnects by itself, which is
what makes dropping a spectator who cannot keep up harmless (below).

A slow or stuck browser never delays a game: each L{Stream} is an
C{IPushProducer} registered on its request, so when the kernel's send buffer
and the transport's buffer are full the transport pauses it; while paused it
keeps at most C{backlog} events, and one more drops the spectator (the
connection is aborted). Dropping rather than coalescing is the decision:
the browser's C{EventSource} reconnects, and the first event of every
connection is a snapshot of the whole game, which *is* the coalesced
backlog, rebuilt from the hub rather than kept per spectator. A spectator
thus costs at most C{backlog} shared event strings plus the transport's own
buffer, whatever the game does.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from twisted.internet.interfaces import IDelayedCall, IPushProducer, IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

log = Logger(namespace="velhanet.web")

BACKLOG = 64
"""Events a paused spectator may have waiting before it is dropped."""

MAX_SPECTATORS = 256
"""Open event streams at most; one more is answered 503."""

KEEP_FINISHED = 32
"""Finished games the site still shows (the oldest is forgotten first)."""

BOARD_INTERVAL = 0.25
"""Seconds between two boards sent for one game (the moves themselves go at once)."""

LIST_INTERVAL = 1.0
"""Seconds between two updates of the list for moves: a move changes only its game's move count,
and a server relaying thousands of moves a second must not send each to every page of the list.
A game that starts or ends is on the list at once."""


class WatchedGame(Protocol):
    """One game as its room reports it."""

    def moved(self, text: str) -> None:
        """A move was played (``text`` as the family writes it); the board is now after it."""

    def ended(self, result: str) -> None:
        """The game is over; ``result`` says how (who won, or why it stopped)."""


class GameWatcher(Protocol):
    """Where rooms report the games they start."""

    def started(
        self, family: str, gameType: str, players: Iterable[str], render: Callable[[], str], hidden: bool = False
    ) -> WatchedGame:
        """A game started; ``render()`` draws its board now, as SVG (called only when someone watches)."""


class _Unwatched:
    def moved(self, text: str) -> None:
        pass

    def ended(self, result: str) -> None:
        pass


class _NoWatcher:
    def started(
        self, family: str, gameType: str, players: Iterable[str], render: Callable[[], str], hidden: bool = False
    ) -> WatchedGame:
        return UNWATCHED


UNWATCHED: WatchedGame = _Unwatched()
NO_WATCHER: GameWatcher = _NoWatcher()
"""The watcher of a server run without ``--web``: every report costs one call that does nothing."""


def event(name: str, payload: object) -> bytes:
    """One server-sent event: its name and a JSON payload (JSON never holds a raw newline)."""
    return b"event: " + name.encode("ascii") + b"\ndata: " + json.dumps(payload).encode("utf-8") + b"\n\n"


@dataclass
class Move:
    number: int
    text: str
    seconds: float
    """Since the previous move (or the start), as the server saw it."""


@dataclass(eq=False)
class GameRecord:
    """One game the site shows, fed by its room through L{WatchedGame}."""

    hub: GameHub
    gameId: str
    family: str
    gameType: str
    players: tuple[str, ...]
    startedAt: float
    render: Callable[[], str] | None
    hidden: bool
    moves: list[Move] = field(default_factory=list)
    result: str | None = None
    lastMoveAt: float = 0.0
    streams: set[Stream] = field(default_factory=set)
    _svg: tuple[int, str] | None = None
    _boardTimer: IDelayedCall | None = None

    @property
    def state(self) -> str:
        return "playing" if self.result is None else "over"

    def svg(self) -> str:
        """The board after the last move, drawn at most once per move whoever asks.

        Spectators get each move at once (a line of text) and the board at most
        every L{GameHub.boardInterval}: a chess board is about 5 ms and 30 kB of
        SVG, too much for every move of a game between bots.
        """
        count = len(self.moves)
        if self._svg is None or self._svg[0] != count:
            drawn = self.render() if self.render is not None else ""
            self._svg = (count, drawn)
        return self._svg[1]

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.gameId,
            "family": self.family,
            "gameType": self.gameType,
            "players": list(self.players),
            "moves": len(self.moves),
            "state": self.state,
            "result": self.result,
            "startedAt": self.startedAt,
        }

    def snapshot(self) -> dict[str, Any]:
        """The whole game so far: what a late spectator gets first."""
        return dict(
            self.summary(),
            moveList=[[m.number, m.text, round(m.seconds, 3)] for m in self.moves],
            svg=self.svg(),
        )

    def moved(self, text: str) -> None:
        if self.result is not None:
            return
        now = self.hub.clock.seconds()
        move = Move(len(self.moves) + 1, text, now - self.lastMoveAt)
        self.moves.append(move)
        self.lastMoveAt = now
        if self.streams:
            self._send(event("move", {"move": [move.number, move.text, round(move.seconds, 3)]}))
            if self._boardTimer is None:
                self._boardTimer = self.hub.clock.callLater(self.hub.boardInterval, self._sendBoard)
        self.hub.changed(self, urgent=False)

    def _send(self, data: bytes) -> None:
        for stream in list(self.streams):
            stream.send(data)

    def _sendBoard(self) -> None:
        """The board after the latest move, drawn once for every spectator of the game."""
        self._boardTimer = None
        if self.streams and self.result is None:
            self._send(event("board", {"moves": len(self.moves), "svg": self.svg()}))

    def stopBoard(self) -> None:
        if self._boardTimer is not None and self._boardTimer.active():
            self._boardTimer.cancel()
        self._boardTimer = None

    def ended(self, result: str) -> None:
        if self.result is not None:
            return
        self.result = result
        self.stopBoard()
        # The final board is drawn only if someone asks: a server where nobody watches ends
        # dozens of games a second, and a chess board is 5 ms. ``render`` keeps the final
        # position (the rooms' renderers hold the board or game, not the players), for at
        # most L{GameHub.keepFinished} games.
        if self.streams:
            self._send(event("end", {"result": result, "moves": len(self.moves), "svg": self.svg()}))
        self.hub.changed(self)
        self.hub.finished(self)


class Request(Protocol):
    """What a L{Stream} needs of a C{twisted.web} request."""

    def write(self, data: bytes) -> None: ...

    def registerProducer(self, producer: Any, streaming: bool) -> None: ...

    def unregisterProducer(self) -> None: ...


@implementer(IPushProducer)
class Stream:
    """One spectator's event stream, written through the transport's back-pressure.

    ``abort`` closes the connection at once (a stuck spectator's transport
    would otherwise keep its buffer until TCP gives up).
    """

    def __init__(self, request: Request, abort: Callable[[], None], forget: Callable[[Stream], None], backlog: int):
        self.request = request
        self.abort = abort
        self.forget = forget
        self.backlog = backlog
        self.pending: deque[bytes] = deque()
        self.paused = False
        self.closed = False
        request.registerProducer(self, True)

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        if self.paused or self.pending:
            if len(self.pending) >= self.backlog:
                log.info("spectator dropped: {count} events waiting", count=len(self.pending))
                self.drop()
                return
            self.pending.append(data)
            return
        self.request.write(data)

    def pauseProducing(self) -> None:
        self.paused = True

    def resumeProducing(self) -> None:
        self.paused = False
        while self.pending and not self.paused and not self.closed:
            self.request.write(self.pending.popleft())

    def stopProducing(self) -> None:
        """The connection is gone."""
        self._close()

    def drop(self) -> None:
        self._close()
        self.request.unregisterProducer()
        self.abort()

    def _close(self) -> None:
        if not self.closed:
            self.closed = True
            self.pending.clear()
            self.forget(self)


class GameHub:
    """Every game the site shows, and every open event stream."""

    def __init__(
        self,
        clock: IReactorTime,
        maxSpectators: int = MAX_SPECTATORS,
        backlog: int = BACKLOG,
        keepFinished: int = KEEP_FINISHED,
    ) -> None:
        self.clock = clock
        self.maxSpectators = maxSpectators
        self.backlog = backlog
        self.keepFinished = keepFinished
        self.games: dict[str, GameRecord] = {}
        self.finishedOrder: deque[str] = deque()
        self.listStreams: set[Stream] = set()
        self.spectators = 0
        self._nextId = 1
        self.listInterval = LIST_INTERVAL
        self.boardInterval = BOARD_INTERVAL
        self._moved: dict[str, GameRecord] = {}
        """Games whose move count changed since the list was last told (in the order they first moved)."""
        self._listTimer: IDelayedCall | None = None

    def started(
        self, family: str, gameType: str, players: Iterable[str], render: Callable[[], str], hidden: bool = False
    ) -> WatchedGame:
        now = self.clock.seconds()
        gameId = str(self._nextId)
        self._nextId += 1
        record = GameRecord(self, gameId, family, gameType, tuple(players), now, render, hidden, lastMoveAt=now)
        self.games[gameId] = record
        self.changed(record)
        return record

    def visible(self, gameId: str) -> GameRecord | None:
        record = self.games.get(gameId)
        return None if record is None or record.hidden else record

    def listing(self) -> list[dict[str, Any]]:
        return [record.summary() for record in self.games.values() if not record.hidden]

    def changed(self, record: GameRecord, urgent: bool = True) -> None:
        """Tell the list's spectators: at once for a start or an end, at most every L{listInterval} for moves."""
        if not self.listStreams or record.hidden:
            return
        if urgent:
            self._moved.pop(record.gameId, None)
            self._tellList(record)
            return
        self._moved[record.gameId] = record
        if self._listTimer is None:
            self._listTimer = self.clock.callLater(self.listInterval, self._flushList)

    def _flushList(self) -> None:
        self._listTimer = None
        moved, self._moved = self._moved, {}
        for record in moved.values():
            self._tellList(record)

    def _tellList(self, record: GameRecord) -> None:
        data = event("game", record.summary())
        for stream in list(self.listStreams):
            stream.send(data)

    def stop(self) -> None:
        """The site stops: no list update is left scheduled."""
        if self._listTimer is not None and self._listTimer.active():
            self._listTimer.cancel()
        self._listTimer = None
        self._moved.clear()
        for record in self.games.values():
            record.stopBoard()

    def finished(self, record: GameRecord) -> None:
        self.finishedOrder.append(record.gameId)
        while len(self.finishedOrder) > self.keepFinished:
            old = self.games.pop(self.finishedOrder.popleft(), None)
            if old is not None and self.listStreams and not old.hidden:
                data = event("gone", {"id": old.gameId})
                for stream in list(self.listStreams):
                    stream.send(data)

    def full(self) -> bool:
        return self.spectators >= self.maxSpectators

    def watchList(self, request: Request, abort: Callable[[], None]) -> Stream:
        """A stream of the list: every visible game first, then each change."""

        def forget(stream: Stream) -> None:
            self.spectators -= 1
            self.listStreams.discard(stream)

        self.spectators += 1
        stream = Stream(request, abort, forget, self.backlog)
        self.listStreams.add(stream)
        stream.send(b"retry: 2000\n\n" + event("games", self.listing()))
        return stream

    def watchGame(self, record: GameRecord, request: Request, abort: Callable[[], None]) -> Stream:
        """A stream of one game: the whole game so far first, then each move and the end."""

        def forget(stream: Stream) -> None:
            self.spectators -= 1
            record.streams.discard(stream)

        self.spectators += 1
        stream = Stream(request, abort, forget, self.backlog)
        record.streams.add(stream)
        stream.send(b"retry: 2000\n\n" + event("snapshot", record.snapshot()))
        return stream
