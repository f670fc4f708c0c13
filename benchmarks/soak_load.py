"""A soak's load and churn, per service: honest games played to their end, and clients that vanish mid-way.

One class per service, all on Twisted and all driven the same way (``round(seconds, games, churn)``),
so that the same clients run against a server process (``benchmarks/soak.py``, which reads the
process's memory from ``/proc``) and against the service in their own process
(``benchmarks/soak_inside.py``, which counts what the process keeps; ``tests/test_soak.py`` runs it).

- **Load**: ``games`` games at once, each played to its end, a new one started as each ends, until
  ``seconds`` are over; then the running games finish.
- **Churn**: ``churn`` clients over the round that leave the way real ones do when something breaks:
  a reset in the middle of a game, half a message and then a reset, a spectator that goes away
  while its stream is open, a datagram storm from many nicks.

Every wait has a limit (L{GAME_LIMIT}): a game that hangs is counted as a problem of the round and
its connections are aborted, never waited for forever. The clients keep nothing per game after it
ended (a soak of the server would otherwise measure them).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import socket
import struct
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import chess
from twisted.internet.defer import Deferred, DeferredList, ensureDeferred, gatherResults
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import DatagramProtocol, ProcessProtocol, Protocol
from twisted.internet.task import deferLater
from twisted.python.failure import Failure

from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message, encode
from velhanet.gobang.wire import ClientOp, ClientWord, byteOrder, encodeClient
from velhanet.listening import freePort
from velhanet.socha.player import BotPlayer
from velhanet.socha.wire import XmlStreamReader
from velhanet.velha import wire as velhaWire

GAME_LIMIT = 60.0
"""Seconds one game, one churning client or one spectator may take before the round gives up on it."""

CHURN_PATIENCE = 5.0
"""Seconds a churning client waits for the moment it vanishes at (a game that starts) before it vanishes anyway."""

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class RoundCount:
    """What one round did: games played to their end, clients that vanished, and what went wrong."""

    games: int = 0
    churned: int = 0
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(text)


def sleep(reactor: Any, seconds: float) -> Deferred[None]:
    return deferLater(reactor, seconds)


async def limited(reactor: Any, waiting: Deferred[Any], what: str, count: RoundCount) -> bool:
    """Wait for ``waiting`` at most L{GAME_LIMIT} seconds; False (and a problem counted) when it did not come.

    ``waiting`` is not cancelled (its clients are aborted by the caller, which ends it); its result,
    or failure, is consumed here.
    """
    outcome: Deferred[bool] = Deferred()
    timer = reactor.callLater(GAME_LIMIT, outcome.callback, False)

    def came(result: object) -> None:
        if timer.active():
            timer.cancel()
            outcome.callback(True)

    waiting.addBoth(came)
    if await outcome:
        return True
    count.problem(f"{what} did not end within {GAME_LIMIT:.0f} s")
    return False


async def untilOver(reactor: Any, seconds: float, slots: int, one: Callable[[int], Awaitable[object]]) -> None:
    """``slots`` loops at once, each running ``one(index)`` again and again until ``seconds`` are over."""
    deadline = reactor.seconds() + seconds

    async def loop(slot: int) -> None:
        index = slot
        while reactor.seconds() < deadline:
            await one(index)
            index += slots

    await gatherResults([ensureDeferred(loop(slot)) for slot in range(slots)])


async def spread(reactor: Any, seconds: float, count: int, one: Callable[[int], Awaitable[object]]) -> None:
    """``count`` runs of ``one(index)`` started evenly over ``seconds``, all awaited."""
    running: list[Deferred[object]] = []
    for index in range(count):
        running.append(ensureDeferred(one(index)))  # type: ignore[arg-type]
        await sleep(reactor, seconds / max(count, 1))
    await DeferredList(running, consumeErrors=True)


def reset(transport: Any) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a killed program's kernel does when data was unread."""
    handle = getattr(transport, "getHandle", None)
    if handle is not None:
        with contextlib.suppress(OSError):
            handle().setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abortConnection()


class Client(Protocol):
    """A TCP client whose end is a Deferred; ``vanish`` resets it."""

    def __init__(self) -> None:
        self.closed: Deferred[None] = Deferred()

    def vanish(self) -> None:
        if self.transport is not None:
            reset(self.transport)

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if not self.closed.called:
            self.closed.callback(None)


async def connected(reactor: Any, host: str, port: int, client: Protocol, count: RoundCount) -> bool:
    try:
        await connectProtocol(TCP4ClientEndpoint(reactor, host, port, timeout=10), client)
    except Exception as error:  # a refused or timed-out connection is a problem of the round, not a crash
        count.problem(f"cannot connect to {host}:{port}: {error}")
        return False
    return True


# -- Software-Challenge -------------------------------------------------------------------


class SochaChurner(Client):
    """Joins a Piranhas room and vanishes: in the waiting room, mid-game, or in the middle of a move.

    One that nobody was paired with vanishes after L{CHURN_PATIENCE} all the same (from the waiting room).
    """

    def __init__(self, reactor: Any, mode: int, gameType: str) -> None:
        super().__init__()
        self.mode, self.gameType = mode % 3, gameType
        self.patience = reactor.callLater(CHURN_PATIENCE, self.vanish)

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.write(f'<protocol><join gameType="{self.gameType}"/>\n'.encode())

    VANISH_ON = ((b"<joined",), (b"memento", b"<left"), (b"moveRequest", b"<left"))
    """Per mode, what it vanishes at: its joined, the game's first memento, its first move request."""

    def dataReceived(self, data: bytes) -> None:
        assert self.transport is not None
        if any(sign in data for sign in self.VANISH_ON[self.mode]):
            if self.mode == 2:
                self.transport.write(b'<room roomId="x">\n  <data class="move">\n    <from x="0" ')
            self.vanish()

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self.patience.active():
            self.patience.cancel()
        super().connectionLost(reason)


class TicTacToePlayer(Client):
    """A ``velhanet_tictactoe`` player: a random empty field of the last memento at each moveRequest.

    The same protocol as a Piranhas player (join, welcome, mementos, requests, result, left) at a
    tenth of the cost per game: the suite's soak plays these.
    """

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng
        self.reader = XmlStreamReader()
        self.roomId = ""
        self.empty: list[tuple[int, int]] = []
        self.result: Element | None = None
        self.done = self.closed

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.write(f'<protocol><join gameType="{TICTACTOE_GAME}"/>\n'.encode())

    def dataReceived(self, data: bytes) -> None:
        assert self.transport is not None
        for message in self.reader.feed(data):
            if message.tag == "joined":
                self.roomId = message.get("roomId", "")
            elif message.tag == "left":
                self.transport.loseConnection()
            elif message.tag == "room" and (found := message.find("data")) is not None:
                kind = found.get("class")
                if kind == "memento":
                    self.empty = [
                        (x, y)
                        for y, row in enumerate(found.iterfind("state/board/row"))
                        for x, field in enumerate(row)
                        if field.text == "EMPTY"
                    ]
                elif kind == "result":
                    self.result = found
                elif kind == "moveRequest" and self.empty:
                    x, y = self.rng.choice(self.empty)
                    move = f'<room roomId="{self.roomId}"><data class="move"><place x="{x}" y="{y}"/></data></room>'
                    self.transport.write(move.encode())


TICTACTOE_GAME = "velhanet_tictactoe"
PIRANHAS_GAME = "swc_2026_piranhas"


class SochaLoad:
    """Games between velhanet's random players (Piranhas, or ``velhanet_tictactoe``), and churners that join
    and vanish (in the same game type)."""

    def __init__(self, reactor: Any, port: int, host: str = "127.0.0.1", gameType: str = PIRANHAS_GAME) -> None:
        self.reactor, self.port, self.host, self.gameType = reactor, port, host, gameType
        self.rng = random.Random(4)

    def player(self) -> BotPlayer | TicTacToePlayer:
        if self.gameType == TICTACTOE_GAME:
            return TicTacToePlayer(random.Random(self.rng.randrange(1 << 30)))
        return BotPlayer(seed=self.rng.randrange(1 << 30))

    async def round(self, seconds: float, games: int, churn: int) -> RoundCount:
        count = RoundCount()
        results: set[str] = set()

        async def game(index: int) -> None:
            players = [self.player() for _ in range(2)]
            for player in players:
                if not await connected(self.reactor, self.host, self.port, player, count):
                    return
            if not await limited(self.reactor, gatherResults([p.done for p in players]), "a socha game", count):
                for player in players:
                    if player.transport is not None:
                        player.transport.abortConnection()  # type: ignore[attr-defined]
            for player in players:
                if player.result is not None:
                    results.add(player.roomId)

        async def churner(index: int) -> None:
            client = SochaChurner(self.reactor, index, self.gameType)
            if await connected(self.reactor, self.host, self.port, client, count):
                count.churned += 1
                if not await limited(self.reactor, client.closed, "a churning socha client", count):
                    client.vanish()

        await gatherResults(
            [
                ensureDeferred(untilOver(self.reactor, seconds, games, game)),
                ensureDeferred(spread(self.reactor, seconds, churn, churner)),
            ]
        )
        count.games = len(results)
        return count


# -- Gambit ------------------------------------------------------------------------------------


class GambitPlayer(Client):
    """One side of a Gambit game: White CREATEs, Black JOINs; random legal moves; White resigns after ``plies``.

    ``vanishAfter``: reset the connection once that many plies were played (churn).
    """

    def __init__(self, name: str, rng: random.Random, plies: int, gameId: Deferred[str] | None = None) -> None:
        super().__init__()
        self.name, self.rng, self.plies = name, rng, plies
        self.white = gameId is None
        self.gameId: Deferred[str] = Deferred() if gameId is None else gameId
        self.board = chess.Board()
        self.decoder = JsonStreamDecoder()
        self.ended = False
        self.vanishAfter: int | None = None

    def send(self, cmd: int, args: str = "") -> None:
        assert self.transport is not None
        self.transport.write(encode(Message(cmd, self.name, args)))

    def connectionMade(self) -> None:
        if self.white:
            self.send(Cmd.CREATE)
        else:
            self.gameId.addCallback(lambda gameId: self.send(Cmd.JOIN, gameId))

    def dataReceived(self, data: bytes) -> None:
        for _, item in self.decoder.feed(data):
            if isinstance(item, MalformedMessage):
                continue
            if item.cmd == Cmd.OK and self.white and not self.gameId.called:
                self.gameId.callback(item.args)
            elif item.cmd == Cmd.OK and self.white and not self.board.move_stack:
                self.move()  # Black joined: White's first move
            elif item.cmd == Cmd.MOVE:
                self.board.push_uci(item.args)
                self.move()
            elif item.cmd in (Cmd.END, Cmd.ERROR):
                self.ended = item.cmd == Cmd.END
                if self.transport is not None:
                    self.transport.loseConnection()

    def move(self) -> None:
        if self.vanishAfter is not None and len(self.board.move_stack) >= self.vanishAfter:
            self.vanish()
        elif self.white and len(self.board.move_stack) >= self.plies:
            self.send(Cmd.END, f"{self.name} resigns")  # relayed to Black; nothing comes back
            self.ended = True
            assert self.transport is not None
            self.transport.loseConnection()
        elif not self.board.is_game_over():
            move = self.rng.choice(list(self.board.legal_moves))
            self.board.push(move)
            self.send(Cmd.MOVE, move.uci())


class GambitLoad:
    """Pairs that play ``plies`` random legal plies, then White resigns.

    Churn: a pair where one side resets mid-game, half a message and a reset, a lone CREATE and a reset.
    """

    def __init__(self, reactor: Any, port: int, host: str = "127.0.0.1", plies: int = 30) -> None:
        self.reactor, self.port, self.host, self.plies = reactor, port, host, plies
        self.rng = random.Random(5)

    async def pair(self, index: int, count: RoundCount, vanishAfter: int | None = None) -> bool:
        white = GambitPlayer(f"w{index}", random.Random(self.rng.random()), self.plies)
        black = GambitPlayer(f"b{index}", random.Random(self.rng.random()), self.plies, white.gameId)
        if vanishAfter is not None:
            (white if index % 2 else black).vanishAfter = vanishAfter
        for player in (white, black):
            if not await connected(self.reactor, self.host, self.port, player, count):
                white.vanish()
                return False
        both = gatherResults([white.closed, black.closed])
        if not await limited(self.reactor, both, "a gambit game", count):
            white.vanish()
            black.vanish()
            return False
        return white.ended or black.ended

    async def batch(self, games: int) -> RoundCount:
        """``games`` games at once, each played once, to its end."""
        count = RoundCount()

        async def game(index: int) -> None:
            if await self.pair(index, count):
                count.games += 1

        await gatherResults([ensureDeferred(game(index)) for index in range(games)])
        return count

    async def round(self, seconds: float, games: int, churn: int) -> RoundCount:
        count = RoundCount()

        async def game(index: int) -> None:
            if await self.pair(index, count):
                count.games += 1

        async def churner(index: int) -> None:
            count.churned += 1
            if index % 3 == 0:
                await self.pair(100_000 + index, count, vanishAfter=1 + index % 7)
                return
            client = Client()
            if not await connected(self.reactor, self.host, self.port, client, count):
                return
            assert client.transport is not None
            if index % 3 == 1:
                client.transport.write(encode(Message(Cmd.CREATE, f"c{index}")))
                await sleep(self.reactor, 0.05)
            else:
                client.transport.write(b'{"Cmd":4,"User":"half","Args":"e2')
            client.vanish()

        await gatherResults(
            [
                ensureDeferred(untilOver(self.reactor, seconds, games, game)),
                ensureDeferred(spread(self.reactor, seconds, churn, churner)),
            ]
        )
        return count


# -- the spectators' site ------------------------------------------------------------------------


class Spectator(Client):
    """An HTTP GET of one page or event stream, read for ``stay`` seconds (or to its end), then left."""

    def __init__(self, reactor: Any, path: str, stay: float, abrupt: bool) -> None:
        super().__init__()
        self.reactor, self.path, self.stay, self.abrupt = reactor, path, stay, abrupt
        self.received = bytearray()
        self.leaving: Any = None

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.write(f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        self.leaving = self.reactor.callLater(self.stay, self.leave)

    def dataReceived(self, data: bytes) -> None:
        if len(self.received) < 65536:
            self.received += data

    def leave(self) -> None:
        self.leaving = None
        if self.transport is None:
            return
        if self.abrupt:
            self.vanish()
        else:
            self.transport.loseConnection()

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self.leaving is not None and self.leaving.active():
            self.leaving.cancel()
        super().connectionLost(reason)


GAME_ID = re.compile(rb'"id": "(\d+)"')


class SpectatorLoad:
    """A game server's load (``games``), and ``churn`` spectators of its ``--web`` site coming and going.

    Each spectator opens the list's event stream, the front page, or a game's page, its event stream
    or its board, stays a moment (up to 2 s) and leaves, by closing or by a reset. Each round ends with
    L{UNWATCHED_GAMES} games that nobody watches: the site keeps the last 32 finished games, and what it
    holds for each depends on what spectators asked for (its moves in SAN, boards drawn) and on how long
    the game was; so every round leaves the same kept set behind, and rounds compare.
    """

    UNWATCHED_GAMES = 40

    def __init__(self, reactor: Any, games: GambitLoad, webPort: int, host: str = "127.0.0.1") -> None:
        self.reactor, self.games, self.webPort, self.host = reactor, games, webPort, host
        self.rng = random.Random(6)
        self.seenGames: list[bytes] = [b"1"]

    async def round(self, seconds: float, games: int, churn: int) -> RoundCount:
        count = RoundCount()

        async def spectator(index: int) -> None:
            gameId = self.rng.choice(self.seenGames).decode()
            path = ["/events", "/", f"/game/{gameId}", f"/game/{gameId}/events", f"/game/{gameId}/board/1"][index % 5]
            client = Spectator(self.reactor, path, self.rng.uniform(0.05, 2.0), abrupt=index % 2 == 1)
            if not await connected(self.reactor, self.host, self.webPort, client, count):
                return
            count.churned += 1
            if not await limited(self.reactor, client.closed, "a spectator", count):
                client.vanish()
            found = GAME_ID.findall(bytes(client.received))
            if found:
                self.seenGames = found[-8:]

        playing = ensureDeferred(self.games.round(seconds, games, 0))
        await spread(self.reactor, seconds, churn, spectator)
        played: RoundCount = await playing
        unwatched = await self.games.batch(self.UNWATCHED_GAMES)
        count.games = played.games + unwatched.games
        count.problems = played.problems + count.problems + unwatched.problems
        return count


# -- JogoVelha -------------------------------------------------------------------------------------


class VelhaStorm(DatagramProtocol):
    """Datagrams from many nicks: hellos (the roster), invitations never followed up, goodbyes, garbage."""

    def __init__(self, target: tuple[str, int], rng: random.Random) -> None:
        self.target, self.rng = target, rng

    def burst(self, index: int) -> None:
        assert self.transport is not None
        nick = f"n{self.rng.randrange(1 << 30):x}"
        kind = index % 4
        message: bytes
        if kind == 0:
            message = velhaWire.encode(velhaWire.Hello(nick))
        elif kind == 1:
            message = velhaWire.encode(velhaWire.Invite(nick))
        elif kind == 2:
            message = velhaWire.encode(velhaWire.Goodbye(nick))
        else:
            message = b"99" + self.rng.randbytes(self.rng.randrange(1, 40))
        self.transport.write(message, self.target)


class VelhaLoad:
    """A velhanet bot peer in this process invites the soaked peer to one best-of-5 after another;
    churn: datagram storms from other loopback addresses (hellos from new nicks, invitations never
    followed, goodbyes, garbage), ``churn`` datagrams per round.

    ``peer`` is a started L{velhanet.velha.peer.Peer} with a bot front end; ``target`` the soaked
    peer's nick; ``stormFrom`` the addresses the storm is sent from (each its own UDP socket).
    """

    def __init__(
        self, reactor: Any, peer: Any, target: str, targetAddress: tuple[str, int], stormFrom: list[str]
    ) -> None:
        self.reactor, self.peer, self.target, self.targetAddress = reactor, peer, target, targetAddress
        self.rng = random.Random(7)
        self.storms: list[tuple[VelhaStorm, Any]] = []
        for address in stormFrom:
            storm = VelhaStorm(targetAddress, self.rng)
            self.storms.append((storm, reactor.listenUDP(0, storm, interface=address)))
        self.seriesOver = 0
        self._count(peer.frontEnd)

    def _count(self, frontEnd: Any) -> None:
        """Count each finished series, as the bot's front end hears of it."""
        original = frontEnd.seriesOver

        def seriesOver(result: str, score: tuple[int, int]) -> None:
            self.seriesOver += 1
            original(result, score)

        frontEnd.seriesOver = seriesOver

    def idle(self) -> bool:
        return not self.peer.busy() and self.peer.match is None

    def stop(self) -> Deferred[Any]:
        return DeferredList([port.stopListening() for _, port in self.storms])

    async def round(self, seconds: float, games: int, churn: int) -> RoundCount:
        count = RoundCount()
        first = self.seriesOver
        deadline = self.reactor.seconds() + seconds

        async def storm() -> None:
            for index in range(churn):
                storm, _ = self.storms[index % len(self.storms)]
                storm.burst(index)
                count.churned += 1
                if index % 20 == 19:
                    await sleep(self.reactor, seconds * 20 / max(churn, 1))

        storming = ensureDeferred(storm())
        lastHello = 0.0
        # Until the round's end, and past it until one series has ended (a machine so busy that none ended
        # in the round, the soak's process waiting for a processor, still measures one per round).
        while self.reactor.seconds() < deadline or (
            self.seriesOver == first and self.reactor.seconds() < deadline + GAME_LIMIT
        ):
            if self.idle():
                why = self.peer.invite(self.target)
                if why is not None and "not online" in why and self.reactor.seconds() - lastHello > 0.5:
                    # Dropped from the roster (a probe unanswered in time on a busy machine): say hello
                    # again, as a peer does when it starts, and the answer brings it back.
                    self.peer.datagrams.send(velhaWire.Hello(self.peer.nick), self.targetAddress[0])
                    lastHello = self.reactor.seconds()
                elif why is not None and "not online" not in why:
                    count.problem(f"cannot invite {self.target}: {why}")
            await sleep(self.reactor, 0.01)  # a series takes a tenth of a second: look often
        while not self.idle() and self.reactor.seconds() < deadline + GAME_LIMIT:
            await sleep(self.reactor, 0.01)
        if not self.idle():
            count.problem(f"a series did not end within {GAME_LIMIT:.0f} s")
        elif self.seriesOver == first:
            count.problem(f"no series ended within {GAME_LIMIT:.0f} s after the round")
        await storming
        count.games = self.seriesOver - first
        return count


# -- Gobang ------------------------------------------------------------------------------------------


class GobangProcess(ProcessProtocol):
    """One client process (the server tells clients apart by pid); ``ended`` fires with its output."""

    def __init__(self) -> None:
        self.output = bytearray()
        self.ended: Deferred[bytes] = Deferred()

    def outReceived(self, data: bytes) -> None:
        self.output += data

    def processEnded(self, reason: Failure) -> None:
        self.ended.callback(bytes(self.output))


def gobangPlayers(reactor: Any, directory: str, serverPid: int, seconds: float) -> tuple[GobangProcess, GobangProcess]:
    """A black and a white L{benchmarks.soak_gobang} player process, playing games until ``seconds`` are over."""
    players = []
    for colour in ("black", "white"):
        player = GobangProcess()
        command = [sys.executable, "-m", "benchmarks.soak_gobang", directory, str(serverPid), colour, str(seconds)]
        reactor.spawnProcess(player, command[0], command, env=dict(os.environ, PYTHONPATH=str(ROOT)), path=str(ROOT))
        players.append(player)
    return players[0], players[1]


GAMES_PLAYED = re.compile(rb"^games (\d+) unreachable (\d+)$", re.MULTILINE)


class GobangLoad:
    """Pairs of client processes that play game after game on a FIFO server; churn: players killed mid-game,
    kibitzers that vanish, words from pids in no game."""

    def __init__(self, reactor: Any, directory: str, serverPid: int) -> None:
        self.reactor, self.directory, self.serverPid = reactor, directory, serverPid
        self.rng = random.Random(8)

    async def round(self, seconds: float, games: int, churn: int) -> RoundCount:
        count = RoundCount()
        pairs = [gobangPlayers(self.reactor, self.directory, self.serverPid, seconds) for _ in range(games)]

        async def churner(index: int) -> None:
            count.churned += 1
            process = GobangProcess()
            opcode = (ClientOp.SIGNON_BLACK, ClientOp.SIGNON_WHITE, ClientOp.SIGNON_KIBITZ)[index % 3]
            command = [
                sys.executable,
                "-m",
                "velhanet.checks.gobang.agent",
                self.directory,
                str(self.serverPid),
                str(int(opcode)),
                *[f"{x},{index % 19}" for x in range(19)],
            ]
            transport = self.reactor.spawnProcess(
                process, command[0], command, env=dict(os.environ, PYTHONPATH=str(ROOT), GOBANG_AGENT_DELAY="0.05")
            )
            await sleep(self.reactor, self.rng.uniform(0.1, 1.0))
            with contextlib.suppress(Exception):  # it ended by itself (refused, or its game ended)
                transport.signalProcess("KILL")
            await limited(self.reactor, process.ended, "a killed gobang client", count)

        def stray(index: int) -> None:
            """A word from a pid in no game (logged and dropped by the server)."""
            count.churned += 1
            word = ClientWord(self.rng.randrange(1, 1 << 16), ClientOp.MOVE, 3, 4)
            server = os.path.join(self.directory, f"gbs.{self.serverPid}")
            descriptor = os.open(server, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.write(descriptor, encodeClient(word, byteOrder("native")))
            finally:
                os.close(descriptor)

        async def churnOne(index: int) -> None:
            if index % 4:
                await churner(index)
            else:
                stray(index)

        await spread(self.reactor, seconds, churn, churnOne)
        for black, white in pairs:
            if not await limited(self.reactor, gatherResults([black.ended, white.ended]), "a gobang pair", count):
                continue
            for player in (black, white):
                said = GAMES_PLAYED.search(player.output)
                if said is None or int(said.group(2)):
                    count.problem(f"a gobang player said: {bytes(player.output)[-300:]!r}")
            played = GAMES_PLAYED.search(black.output)  # every game has one black player
            count.games += int(played.group(1)) if played else 0
        return count


def freeUdpPort(*addresses: str) -> int:
    """A UDP port free on every one of ``addresses`` (JogoVelha peers send to the port they listen on)."""
    for _ in range(100):
        port = freePort()
        try:
            for address in addresses:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                    probe.bind((address, port))
        except OSError:
            continue
        return port
    raise SystemExit("soak: no UDP port free on " + ", ".join(addresses))
