"""What the spectators' site knows about the games: the hub the rooms report to, and the streams.

The rooms report through the port of L{velhanet.watching}, one call per fact; the hub is its implementation
for ``--web``. With nobody watching, a move costs one small record appended to a list: the board is drawn
(L{velhanet.web.boards.drawPosition}, from the position the room hands over) only when a spectator needs it,
at most once per move for all of them (L{GameRecord.svg}), and each event is encoded once and the same bytes
written to every stream.

Why server-sent events rather than WebSocket: the updates go one way only (a spectator never sends anything,
which is also what keeps the site read-only); they are plain HTTP, so they pass proxies and need no upgrade
handshake nor a WebSocket implementation (Twisted has none built in); ``twisted.web`` streams them with
C{request.write} on a response that never finishes; and the browser's C{EventSource} reconnects by itself,
which is what makes dropping a spectator who cannot keep up harmless (L{velhanet.web.stream}).
"""

from __future__ import annotations

import functools
import json
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.watching import Position, Score, WatchedGame
from velhanet.web.boards import drawPosition
from velhanet.web.stream import Request, Stream, sendEach

if TYPE_CHECKING:
    from velhanet.web.chessmoves import SanList

BACKLOG = 64
"""Events a paused spectator may have waiting before it is dropped."""

MAX_SPECTATORS = 256
"""Open event streams at most; one more is answered 503."""

KEEP_FINISHED = 32
"""Finished games the site still shows (the oldest is forgotten first); replayed games are never forgotten."""

BOARD_INTERVAL = 0.25
"""Seconds between two boards sent for one game (the moves themselves go at once)."""

HEARTBEAT = 15.0
"""Seconds between two comment lines on every open stream, so that no stream stays silent.

An idle game writes nothing; a spectator whose computer went away without
closing its connection would then hold its slot (of L{MAX_SPECTATORS}, and
of the 32 per address) for ever. A comment line (``: alive``, which
``EventSource`` ignores) every 15 s makes the connection carry something:
the kernel learns of a closed peer at once (a reset answers it), and a
stream nobody reads fills its transport, then its L{BACKLOG} of 64 events,
and is dropped, within about 16 minutes. It also keeps proxies that close
idle connections from cutting a spectator of a slow game."""

KEEP_ALIVE = b": alive\n\n"

LIST_INTERVAL = 1.0
"""Seconds between two updates of the list for moves: a move changes only its game's move count,
and a server relaying thousands of moves a second must not send each to every page of the list.
A game that starts or ends is on the list at once."""


def event(name: str, payload: object) -> bytes:
    """One server-sent event: its name and a JSON payload (JSON never holds a raw newline)."""
    return b"event: " + name.encode("ascii") + b"\ndata: " + json.dumps(payload).encode("utf-8") + b"\n\n"


@dataclass
class Move:
    number: int
    text: str
    seconds: float | None
    """Since the previous move (or the start), as the server saw it; None when a log does not say."""

    def row(self, text: str | None = None) -> list[Any]:
        """``[number, text, seconds]`` for the page; ``text`` as the page shows it (a chess move in SAN)."""
        shown = self.text if text is None else text
        return [self.number, shown, None if self.seconds is None else round(self.seconds, 3)]


SAN_FAMILIES = frozenset({"gambit"})
"""The families whose moves come in UCI and are shown in SAN with move numbers (L{velhanet.web.chessmoves})."""


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
    boardAt: Callable[[int], str] | None = None
    """A replayed game's board after any number of moves (0: the start), as SVG."""
    score: Score | None = None
    """How the game ended in PGN's words, when the room says so."""
    chess: bool = False
    """A chess game: its UCI moves are shown in SAN with move numbers, and it has a PGN."""
    _san: SanList | None = None

    def san(self) -> SanList:
        """The chess game's moves in SAN, translated up to the last move reported (the first call imports chess).

        Only when someone looks (a stream, a snapshot, the PGN): a game nobody watches costs no SAN.
        """
        if self._san is None:
            from velhanet.web.chessmoves import SanList

            self._san = SanList()
        self._san.follow(self.moves)
        return self._san

    def rows(self) -> list[list[Any]]:
        """Every move as the page lists it."""
        if not self.chess:
            return [move.row() for move in self.moves]
        shown = self.san().shown
        return [move.row(text) for move, text in zip(self.moves, shown, strict=True)]

    def lastRow(self) -> list[Any]:
        move = self.moves[-1]
        return move.row(self.san().shown[-1]) if self.chess else move.row()

    @property
    def state(self) -> str:
        return "playing" if self.result is None else "over"

    def svg(self) -> str:
        """The board after the last move, drawn at most once per move whoever asks.

        Spectators get each move at once (a line of text) and the board at most every L{GameHub.boardInterval}:
        a chess board is about 5 ms and 30 kB of SVG, too much for every move of a game between bots.
        """
        if self._svg is None or self._svg[0] != len(self.moves):
            self._svg = (len(self.moves), self.render() if self.render is not None else "")
        return self._svg[1]

    def resultIn(self, language: str) -> str | None:
        """How the game ended as a page in ``language`` says it: a Gambit game's from its room's score, in that
        language (L{velhanet.web.chessmoves.SanList.endIn}); any other as its room said it."""
        if self.result is None or self.score is None or not self.chess:
            return self.result
        return self.san().endIn(language, self.score, self.players)

    def summary(self, language: str = "en") -> dict[str, Any]:
        return {
            "id": self.gameId,
            "family": self.family,
            "gameType": self.gameType,
            "players": list(self.players),
            "moves": len(self.moves),
            "state": self.state,
            "result": self.resultIn(language),
            "startedAt": self.startedAt,
        }

    def snapshot(self, language: str = "en") -> dict[str, Any]:
        """The whole game so far: what a late spectator gets first."""
        return dict(
            self.summary(language), moveList=self.rows(), svg=self.svg(), steps=bool(self.boardAt), paired=self.chess
        )

    def moved(self, text: str) -> None:
        if self.result is not None:
            return
        now = self.hub.clock.seconds()
        move = Move(len(self.moves) + 1, text, now - self.lastMoveAt)
        self.moves.append(move)
        self.lastMoveAt = now
        if self.streams:
            self._send(event("move", {"move": self.lastRow()}))
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

    def ended(self, result: str, score: Score | None = None) -> None:
        """The game is over (L{velhanet.watching.WatchedGame.ended}); ``score``, where the room gives one (its
        PGN result and termination), is the chess game's PGN ending, else the site derives it from ``result``."""
        if self.result is not None:
            return
        self.result, self.score = result, score
        self.stopBoard()
        if self.chess:  # a finished chess game can be stepped through, as a replayed one; drawn only when asked
            from velhanet.web.chessmoves import stepsOf

            self.boardAt = functools.lru_cache(maxsize=8)(stepsOf(weakref.ref(self)))
        # The final board is drawn only if someone asks: a server where nobody watches ends dozens of games a
        # second, and a chess board is 5 ms. ``render`` keeps the final position (the rooms' positions hold the
        # board or game, not the players), for at most L{GameHub.keepFinished} games.
        if self.streams:
            end = {"moves": len(self.moves), "svg": self.svg(), "steps": bool(self.boardAt)}
            sendEach(self.streams, lambda language: event("end", {"result": self.resultIn(language), **end}))
        self.hub.changed(self)
        self.hub.finished(self)


class GameHub:
    """Every game the site shows, and every open event stream."""

    def __init__(
        self,
        clock: IReactorTime,
        maxSpectators: int = MAX_SPECTATORS,
        backlog: int = BACKLOG,
        keepFinished: int = KEEP_FINISHED,
        language: str | None = None,
    ) -> None:
        self.clock = clock
        self.language = language
        """The site's language when the service gives one (``--language``); None: each request's, as it asks."""
        self.maxSpectators = maxSpectators
        self.backlog = backlog
        self.keepFinished = keepFinished
        self.games: dict[str, GameRecord] = {}
        self.finishedOrder: deque[str] = deque()
        self.listStreams: set[Stream] = set()
        self.streams: set[Stream] = set()
        """Every open event stream, of the list and of the games."""
        self.heartbeatInterval = HEARTBEAT
        self._heartbeat: IDelayedCall | None = None
        self._nextId = 1
        self.listInterval = LIST_INTERVAL
        self.boardInterval = BOARD_INTERVAL
        self._moved: dict[str, GameRecord] = {}
        """Games whose move count changed since the list was last told (in the order they first moved)."""
        self._listTimer: IDelayedCall | None = None

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        """L{velhanet.watching.GameWatcher.started}: the site draws the room's position as it chooses, and shows
        a Gambit game's UCI moves in SAN."""
        record = self.startedDrawn(family, gameType, players, lambda: drawPosition(position()), hidden)
        record.chess = family in SAN_FAMILIES
        return record

    def startedDrawn(
        self, family: str, gameType: str, players: Iterable[str], render: Callable[[], str], hidden: bool = False
    ) -> GameRecord:
        """A game whose board comes already drawn (``render()`` is SVG): the league's games, drawn on workers."""
        now = self.clock.seconds()
        return self._add(GameRecord(self, "", family, gameType, tuple(players), now, render, hidden, lastMoveAt=now))

    def replayed(
        self,
        family: str,
        gameType: str,
        players: Iterable[str],
        moves: Sequence[tuple[str, float | None]],
        result: str,
        boardAt: Callable[[int], str],
        startedAt: float | None = None,
    ) -> GameRecord:
        """A game already over (from a log), never forgotten: ``boardAt(n)`` draws the board after n moves."""
        drawn = functools.lru_cache(maxsize=8)(boardAt)  # the last boards asked for: stepping back redraws none
        count = len(moves)
        begun = self.clock.seconds() if startedAt is None else startedAt
        record = GameRecord(self, "", family, gameType, tuple(players), begun, lambda: drawn(count), False)
        record.moves = [Move(number, text, seconds) for number, (text, seconds) in enumerate(moves, 1)]
        record.result, record.boardAt = result, drawn
        return self._add(record)

    def _add(self, record: GameRecord) -> GameRecord:
        record.gameId = str(self._nextId)
        self._nextId += 1
        self.games[record.gameId] = record
        self.changed(record)
        return record

    def visible(self, gameId: str) -> GameRecord | None:
        record = self.games.get(gameId)
        return None if record is None or record.hidden else record

    def listing(self, language: str = "en") -> list[dict[str, Any]]:
        return [record.summary(language) for record in self.games.values() if not record.hidden]

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
        sendEach(self.listStreams, lambda language: event("game", record.summary(language)))

    def stop(self) -> None:
        """The site stops: no list update nor heartbeat is left scheduled."""
        if self._listTimer is not None and self._listTimer.active():
            self._listTimer.cancel()
        self._listTimer = None
        self._stopHeartbeat()
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

    @property
    def spectators(self) -> int:
        return len(self.streams)

    def full(self) -> bool:
        return self.spectators >= self.maxSpectators

    def watchList(self, request: Request, abort: Callable[[], None], language: str = "en") -> Stream:
        """A stream of the list (its words in ``language``): every visible game first, then each change."""
        stream = self._open(request, abort, self.listStreams, language)
        stream.send(b"retry: 2000\n\n" + event("games", self.listing(language)))
        return stream

    def watchGame(
        self, record: GameRecord, request: Request, abort: Callable[[], None], language: str = "en"
    ) -> Stream:
        """A stream of one game (its words in ``language``): the game so far first, then each move and the end."""
        stream = self._open(request, abort, record.streams, language)
        stream.send(b"retry: 2000\n\n" + event("snapshot", record.snapshot(language)))
        return stream

    def _open(self, request: Request, abort: Callable[[], None], audience: set[Stream], language: str) -> Stream:
        """A stream counted among all streams and in ``audience`` (the list's, or a game's) until it closes."""

        def forget(stream: Stream) -> None:
            self.streams.discard(stream)
            audience.discard(stream)
            if not self.streams:
                self._stopHeartbeat()

        stream = Stream(request, abort, forget, self.backlog, language)
        self.streams.add(stream)
        audience.add(stream)
        if self._heartbeat is None:
            self._heartbeat = self.clock.callLater(self.heartbeatInterval, self._beat)
        return stream

    def _beat(self) -> None:
        """L{HEARTBEAT}: one comment line to every open stream, while there is one."""
        self._heartbeat = None
        for stream in list(self.streams):
            stream.send(KEEP_ALIVE)
        if self.streams:
            self._heartbeat = self.clock.callLater(self.heartbeatInterval, self._beat)

    def _stopHeartbeat(self) -> None:
        if self._heartbeat is not None and self._heartbeat.active():
            self._heartbeat.cancel()
        self._heartbeat = None
