"""An in-memory LAN for JogoVelha peers: datagrams, TCP and time, all fake.

Datagrams are delivered after ``latency`` seconds of the shared
``task.Clock``, so no peer is ever re-entered from another's call; a
filter can drop, duplicate or delay any datagram. TCP connections are
``twisted.test.iosim`` fake transports pumped on every step.
"""

from __future__ import annotations

import bisect
import random
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from twisted.internet.address import IPv4Address
from twisted.internet.base import DelayedCall
from twisted.internet.defer import Deferred, fail
from twisted.internet.error import ConnectionRefusedError
from twisted.internet.interfaces import IDelayedCall
from twisted.internet.protocol import ClientFactory, ServerFactory
from twisted.internet.task import Clock
from twisted.test import iosim

from velhanet.games.kinarow import KInARowState
from velhanet.tracing import Tracer
from velhanet.velha import wire
from velhanet.velha.frontends import BotFrontEnd
from velhanet.velha.peer import Peer
from velhanet.velha.protocol import MatchFactory, MatchProtocol

Datagram = tuple[str, str, bytes]  # (from host, to host, raw)


class Recorder:
    """A front end that writes down everything it hears; answers via ``answer``."""

    def __init__(self, answer: bool | None = None) -> None:
        self.events: list[tuple[object, ...]] = []
        self.peer: Peer | None = None
        self.answerWith = answer

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    def kinds(self) -> list[object]:
        return [event[0] for event in self.events]

    def peerOnline(self, nick: str, address: str) -> None:
        self.events.append(("online", nick, address))

    def peerOffline(self, nick: str, why: str) -> None:
        self.events.append(("offline", nick, why))

    def invitationReceived(self, nick: str) -> None:
        self.events.append(("invited", nick))

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None:
        self.events.append(("invite", nick, outcome))

    def matchStarted(self, opponent: str) -> None:
        self.events.append(("match", opponent))

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.events.append(("game", gameNumber, iStart))

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        self.events.append(("moved", position, byMe))

    def yourTurn(self, board: KInARowState) -> None:
        self.events.append(("turn",))

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        self.events.append(("gameOver", result, score))

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self.events.append(("seriesOver", result, score))

    def matchEnded(self, reason: str) -> None:
        self.events.append(("ended", reason))

    def notice(self, text: str) -> None:
        self.events.append(("notice", text))


class BotRecorder(Recorder):
    """A recorder that also plays: a real BotFrontEnd does the moves."""

    def __init__(self, clock: Clock, seed: int, moveDelay: float = 0.3) -> None:
        super().__init__()
        self.bot = BotFrontEnd(clock, moveDelay=moveDelay, seed=seed)

    def attach(self, peer: Peer) -> None:
        super().attach(peer)
        self.bot.attach(peer)

    def invitationReceived(self, nick: str) -> None:
        super().invitationReceived(nick)
        self.bot.invitationReceived(nick)

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        super().gameStarted(gameNumber, iStart, board)
        self.bot.gameStarted(gameNumber, iStart, board)

    def yourTurn(self, board: KInARowState) -> None:
        super().yourTurn(board)
        self.bot.yourTurn(board)

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        super().seriesOver(result, score)
        self.bot.seriesOver(result, score)

    def matchEnded(self, reason: str) -> None:
        super().matchEnded(reason)
        self.bot.matchEnded(reason)


@dataclass
class _Listener:
    factory: ServerFactory
    host: str
    portNumber: int
    lan: FakeLan
    closed: bool = False

    def close(self) -> None:
        self.closed = True
        self.lan.listeners.pop((self.host, self.portNumber), None)


class _HostNetwork:
    """The TcpNetwork one host sees."""

    def __init__(self, lan: FakeLan, host: str) -> None:
        self.lan, self.host = lan, host

    def listen(self, factory: ServerFactory) -> _Listener:
        self.lan.nextPort += 1
        listener = _Listener(factory, self.host, self.lan.nextPort, self.lan)
        self.lan.listeners[(self.host, listener.portNumber)] = listener
        return listener

    def connect(self, host: str, port: int, factory: ClientFactory) -> Deferred[object]:
        """Connect now, or after ``lan.connectLatency`` seconds (cancellable meanwhile)."""
        if self.lan.connectLatency <= 0:
            return self._complete(host, port, factory)
        attempt: Deferred[object] = Deferred(lambda d: pending.cancel())
        pending = self.lan.clock.callLater(
            self.lan.connectLatency, lambda: self._complete(host, port, factory).chainDeferred(attempt)
        )
        return attempt

    def _complete(self, host: str, port: int, factory: ClientFactory) -> Deferred[object]:
        listener = self.lan.listeners.get((host, port))
        if listener is None:
            return fail(ConnectionRefusedError(f"nothing listens on {host}:{port}"))
        self.lan.nextPort += 1
        server = listener.factory.buildProtocol(IPv4Address("TCP", self.host, self.lan.nextPort))
        client = factory.buildProtocol(IPv4Address("TCP", host, port))
        if server is None or client is None:
            return fail(ConnectionRefusedError("connection refused by the factory"))
        serverTransport = iosim.FakeTransport(server, isServer=True, hostAddress=IPv4Address("TCP", host, port))
        clientTransport = iosim.FakeTransport(client, isServer=False, peerAddress=IPv4Address("TCP", host, port))
        pump = iosim.connect(server, serverTransport, client, clientTransport, greet=True, clock=self.lan.clock)
        self.lan.pumps.append(pump)
        done: Deferred[object] = Deferred()
        done.callback(client)
        return done


class LanHost(typing.Protocol):
    """Anything with an address on the in-memory LAN: a Peer, or a stand-in program."""

    def datagramReceived(self, data: bytes, host: str) -> None: ...


class LanPeer(Peer):
    """A peer on the in-memory LAN: datagrams for it go through its UDP protocol, as on a real port."""

    def datagramReceived(self, data: bytes, host: str) -> None:
        self.datagrams.datagramReceived(data, (host, self.datagrams.port))

    @property
    def trace(self) -> Tracer:
        """What the UDP protocol traces (a test may replace it to count what reached the decoder)."""
        return self.datagrams.trace

    @trace.setter
    def trace(self, tracer: Tracer) -> None:
        self.datagrams.trace = tracer


class _MovingCall(DelayedCall):
    """A DelayedCall that tells its clock of every move: Twisted's tells only of a move earlier (the
    reactor finds a postponed call when its old time comes), and ``ManyTimersClock`` sorts only when told."""

    def reset(self, secondsFromNow: float) -> None:
        super().reset(secondsFromNow)
        self.resetter(self)

    def delay(self, secondsLater: float) -> None:
        super().delay(secondsLater)
        self.resetter(self)


class ManyTimersClock(Clock):
    """``task.Clock`` for a LAN with thousands of pending timers (a storm of invitations).

    ``Clock`` sorts all its pending calls on every ``callLater`` and after every
    call it runs, calling a key function for each: a storm test spent three
    quarters of its time there. This one puts a new call in its place
    (``bisect``) and sorts only after a call was reset or delayed; the order,
    equal times included, is the one ``Clock`` gives.
    """

    def __init__(self) -> None:
        super().__init__()
        self._moved = False

    def callLater(self, delay: float, callable: Callable[..., object], *args: object, **kw: object) -> IDelayedCall:
        self._sortCalls()  # a call reset since: the list is sorted again before the new one goes in
        call = _MovingCall(self.seconds() + delay, callable, args, kw, self.calls.remove, self._reset, self.seconds)
        bisect.insort(self.calls, call, key=DelayedCall.getTime)
        return call

    def _reset(self, call: DelayedCall) -> None:
        self._moved = True

    def _sortCalls(self) -> None:
        if self._moved:
            self._moved = False
            super()._sortCalls()


@dataclass
class FakeLan:
    clock: Clock = field(default_factory=ManyTimersClock)
    latency: float = 0.01
    connectLatency: float = 0.0
    """Seconds a TCP connect takes; above 0 a handshake really sits in 'connecting'."""
    peers: dict[str, LanHost] = field(default_factory=dict)
    deaf: set[str] = field(default_factory=set)
    """Hosts that never receive broadcasts (the original listens on a unicast address)."""
    listeners: dict[tuple[str, int], _Listener] = field(default_factory=dict)
    pumps: list[iosim.IOPump] = field(default_factory=list)
    log: list[Datagram] = field(default_factory=list)
    filter: Callable[[Datagram], int] | None = None
    """Returns how many copies of a datagram to deliver (0 = lost, 2 = duplicated)."""
    nextPort: int = 40000
    jitter: random.Random | None = None
    """When set, each copy is delayed by a random extra 0-0.5 s: datagrams get reordered."""

    def addPeer(self, nick: str, host: str, frontEnd: Recorder, **kwargs: object) -> LanPeer:
        others = [h for h in self.peers]
        peer = LanPeer(
            nick,
            clock=self.clock,
            sendDatagram=lambda raw, addr, host=host: self._send(host, raw, addr),  # type: ignore[misc]
            network=_HostNetwork(self, host),
            frontEnd=frontEnd,
            announceTargets=kwargs.pop("announceTargets", others or ["255.255.255.255"]),  # type: ignore[arg-type]
            **kwargs,  # type: ignore[arg-type]
        )
        frontEnd.attach(peer)
        self.peers[host] = peer
        return peer

    def _send(self, source: str, raw: bytes, addr: tuple[str, int]) -> None:
        datagram = (source, addr[0], raw)
        self.log.append(datagram)
        copies = self.filter(datagram) if self.filter is not None else 1
        for i in range(copies):
            extra = self.jitter.uniform(0, 0.5) if self.jitter is not None else 0.0
            self.clock.callLater(self.latency * (i + 1) + extra, self._deliver, datagram)

    def network(self, host: str) -> _HostNetwork:
        """The TCP side of ``host``, for a stand-in that is not a Peer."""
        return _HostNetwork(self, host)

    def sendFrom(self, source: str, raw: bytes, destination: str) -> None:
        self._send(source, raw, (destination, 20181))

    def _deliver(self, datagram: Datagram) -> None:
        source, destination, raw = datagram
        if destination == "255.255.255.255":
            targets = [host for address, host in self.peers.items() if address not in self.deaf]
        else:
            targets = [self.peers[destination]] if destination in self.peers else []
        for host in targets:
            host.datagramReceived(raw, source)

    def run(self, seconds: float, step: float = 0.01) -> None:
        """Advance time in small steps, pumping every TCP connection after each."""
        for _ in range(round(seconds / step)):
            self.clock.advance(step)
            self.pump()

    def pump(self) -> None:
        for pump in list(self.pumps):
            pump.pump()

    def sent(self, source: str, kind: type[object]) -> list[object]:
        """Decoded datagrams of one kind sent by ``source``."""
        return [m for s, _, raw in self.log if s == source and isinstance(m := wire.decode(raw), kind)]

    def openListeners(self) -> list[_Listener]:
        return list(self.listeners.values())


def matchProtocolFor(peer: Peer, peerNick: str, isInvitee: bool) -> MatchProtocol:
    """A match protocol of ``peer``, built by its factory as a real connection would be.

    For tests that drive one connection on a StringTransport.
    """
    factory = MatchFactory(peer, peerNick, isInvitee, peer.clock, peer.connections.trace)
    protocol = factory.buildProtocol(None)
    assert protocol is not None
    return protocol
