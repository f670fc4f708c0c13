"""The network adapters of a JogoVelha peer: UDP, the match connection, real TCP.

All thin: they parse (``wire``), feed the coordinator or a machine, and
write. The UDP protocol drops floods and oversize datagrams before decoding,
decodes, traces, and calls one method of its L{IDatagramReceiver} per
message. A match connection's factory gets the match machine from its
L{IMatchHost} and hands it to the protocol; the protocol then feeds it every
frame, and the machine writes back through the protocol (L{IMatchLink}).
"""

from __future__ import annotations

import typing
from collections.abc import Callable

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.interfaces import IDelayedCall, IListeningPort, IReactorTCP, IReactorTime
from twisted.internet.protocol import ClientFactory, DatagramProtocol, Protocol, ServerFactory
from twisted.logger import Logger
from twisted.python.failure import Failure
from zope.interface import implementer

from velhanet.clientlimits import AddressBuckets
from velhanet.i18n import _
from velhanet.sendnow import noDelay
from velhanet.tracing import IN, OUT, Tracer, noTrace
from velhanet.velha import wire
from velhanet.velha.interfaces import IDatagramReceiver, IDatagramSender, IMatchHost, IMatchLink
from velhanet.velha.invite import ListeningPort, cancelCall
from velhanet.velha.room import Match

PROTOCOL_PORT = 20181
MAX_DATAGRAM = 2048
"""Datagrams longer than this cannot be JogoVelha messages (3-digit length); dropped unread."""
DATAGRAM_BURST = 200
"""Datagrams one address may send at once; past it, they are dropped before decoding."""
DATAGRAMS_PER_SECOND = 50.0
"""How fast an address earns back its burst. A peer sends a few datagrams a minute; the
conformance checker a few dozen in a second. A flood from one host then costs one
table lookup per datagram, and the legitimate peers' datagrams keep getting through."""
CLOSE_DELAY = 1.0
"""Seconds between the last message of a match and the closing of its connection."""


def sameHost(actual: str, expected: str) -> bool:
    """Is a TCP connection from ``actual`` the peer whose datagrams came from ``expected``?

    The addresses must match, with one exception on loopback: a peer whose
    datagrams come from 127.0.0.N may connect from 127.0.0.1.
    """
    if actual == expected:
        return True
    # A program on this machine that binds its UDP socket to 127.0.0.N but
    # not its TCP one connects from the kernel's default, 127.0.0.1.
    return expected.startswith("127.") and actual == "127.0.0.1"


@implementer(IDatagramSender)
class VelhaDatagramProtocol(DatagramProtocol):
    """The UDP port (20181): decode each datagram and hand it to the receiver; encode and send.

    ``write`` sends raw bytes; by default through this protocol's own
    transport (a test's in-memory LAN passes its own). The port stays open
    during matches.
    """

    log = Logger()

    def __init__(
        self,
        nick: str,
        receiver: IDatagramReceiver,
        clock: IReactorTime,
        port: int = PROTOCOL_PORT,
        write: Callable[[bytes, tuple[str, int]], None] | None = None,
        trace: Tracer = noTrace,
    ) -> None:
        self.nick, self.receiver, self.port, self.trace = nick, receiver, port, trace
        self.write = write or self._writeToTransport
        self.floods = AddressBuckets(DATAGRAM_BURST, DATAGRAMS_PER_SECOND * 60, clock, maxAddresses=1024)

    def startProtocol(self) -> None:
        self.transport.setBroadcastAllowed(True)  # type: ignore[union-attr]

    def datagramReceived(self, datagram: bytes, addr: tuple[str, int]) -> None:
        host = addr[0]
        if len(datagram) > MAX_DATAGRAM:
            self.log.warn(_("datagram of {size} bytes from {host} dropped: too long"), size=len(datagram), host=host)
            return
        floods = self.floods
        if not floods.available(host):
            return  # logged once, when the address ran out (below)
        floods.fail(host)  # every datagram takes a token; an honest peer never runs out
        if not floods.available(host):
            self.log.warn(
                _(
                    "{host} sent more than {burst} datagrams at {rate:.0f}/s:"
                    " dropping its datagrams until it slows down"
                ),
                host=host,
                burst=DATAGRAM_BURST,
                rate=DATAGRAMS_PER_SECOND,
            )
        try:
            message = wire.decodeDatagram(datagram)
        except wire.MalformedMessage as error:
            self.trace(IN, host, datagram, error)
            self.log.warn(
                _("malformed datagram from {host} dropped: {reason} ({raw!r})"),
                host=host,
                reason=str(error),
                raw=datagram[:80],
            )
            return
        if isinstance(message, wire.Hello | wire.Goodbye) and message.nick == self.nick:
            return  # our own broadcast, echoed back (we broadcast nothing else)
        self.trace(IN, host, datagram, message)
        receiver = self.receiver
        try:
            if isinstance(message, wire.Hello):
                receiver.hello(message.nick, host)
            elif isinstance(message, wire.HelloReply):
                receiver.helloReply(message.nick, host)
            elif isinstance(message, wire.Goodbye):
                receiver.goodbye(message.nick)
            elif isinstance(message, wire.Invite):
                receiver.invited(message.nick, host)
            elif isinstance(message, wire.InviteAnswer):
                receiver.answered(message, host)
            else:
                receiver.acknowledged(host)
        except Exception:
            # Never let one datagram kill the listener (the reference's does).
            self.log.failure(_("error handling a datagram from {host}"), host=host)

    def send(self, message: wire.DatagramMessage, host: str) -> None:
        raw = wire.encode(message)
        self.trace(OUT, host, raw, message)
        self.write(raw, (host, self.port))

    def _writeToTransport(self, data: bytes, addr: tuple[str, int]) -> None:
        if self.transport is None:
            return
        try:
            self.transport.write(data, addr)
        except OSError as error:
            self.log.warn(_("could not send to {addr}: {error}"), addr=addr, error=error)


@implementer(IMatchLink)
class MatchProtocol(Protocol):
    """The TCP side of a match: decode frames, feed the match machine its factory handed over, write."""

    log = Logger()
    factory: MatchFactory

    def __init__(self, host: IMatchHost, peerNick: str, isInvitee: bool, clock: IReactorTime, trace: Tracer) -> None:
        self.host, self.peerNick, self.isInvitee, self.clock, self.trace = host, peerNick, isInvitee, clock, trace
        self.decoder = wire.StreamDecoder()
        self.match: Match | None = None
        self.closing = False
        self.superseded = False
        """The peer opened a newer port for this match: this connection stays open, unused."""
        self.whenClosed: Deferred[None] = Deferred()
        self._closeCall: IDelayedCall | None = None

    def connectionMade(self) -> None:
        noDelay(self.transport)
        self.match = self.factory.matchFor(self)

    def send(self, message: wire.StreamMessage) -> None:
        raw = wire.encodeStream(message)
        self.trace(OUT, self.peerNick, raw, message)
        assert self.transport is not None
        self.transport.write(raw)

    def close(self) -> None:
        """Close a moment after the last message: a peer (the original) that gets the end of the
        stream together with the last move may handle the end first and lose the move."""
        if not self.closing:
            self.closing = True
            self._closeCall = self.clock.callLater(CLOSE_DELAY, self._closeNow)

    def supersede(self) -> None:
        self.superseded = True

    def _closeNow(self) -> None:
        self._closeCall = None
        if self.transport is not None:
            self.transport.loseConnection()

    def dataReceived(self, data: bytes) -> None:
        for raw, item in self.decoder.feed(data):
            self.trace(IN, self.peerNick, raw, item)
            if isinstance(item, wire.MalformedMessage):
                self.log.warn(
                    _("malformed TCP frame from {peer} dropped: {reason}"), peer=self.peerNick, reason=str(item)
                )
                self.host.notice(
                    _("{peer} sent a malformed message, dropped: {reason}").format(peer=self.peerNick, reason=item)
                )
                continue
            if self.superseded:
                self.log.info(_("{peer} sent {raw!r} on a superseded connection; ignored"), peer=self.peerNick, raw=raw)
                continue
            if self.match is None or self.closing:
                continue
            if isinstance(item, wire.MatchStart):
                self.match.startReceived(item.who)
            elif isinstance(item, wire.Move):
                self.match.remoteMove(item.position)
            elif isinstance(item, wire.NewGame):
                self.match.remoteNewGame()
            else:
                self.match.remoteGiveUp()

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        cancelCall(self._closeCall)
        self._closeCall = None
        match, self.match = self.match, None  # the machine's core sends through us: no cycle once closed
        if match is not None:
            match.connectionLost(reason.getErrorMessage())
        self.host.matchClosed(self)
        self.whenClosed.callback(None)


class MatchFactory(ServerFactory, ClientFactory):
    """Builds the one match protocol of a handshake, and hands it the match machine once connected.

    Any further connection is refused. On the invitee's side only the
    inviter may connect: a connection from another address than the one
    its MSG04 came from is refused, and does not use up the handshake.
    """

    log = Logger()

    def __init__(
        self,
        host: IMatchHost,
        peerNick: str,
        isInvitee: bool,
        clock: IReactorTime,
        trace: Tracer = noTrace,
        inviterHost: str | None = None,
    ) -> None:
        self.host, self.peerNick, self.isInvitee, self.clock, self.trace = host, peerNick, isInvitee, clock, trace
        self.inviterHost = inviterHost
        self.used = False

    def buildProtocol(self, addr: object) -> MatchProtocol | None:  # type: ignore[override]
        if self.used:
            return None
        address = str(getattr(addr, "host", ""))
        if self.inviterHost is not None and not sameHost(address, self.inviterHost):
            self.log.warn(
                _("TCP connection from {host} refused: {nick}'s invitation came from {inviter}"),
                host=address,
                nick=self.peerNick,
                inviter=self.inviterHost,
            )
            text = _("refused a connection from {host} to the port opened for {nick} ({inviter})")
            self.host.notice(text.format(host=address, nick=self.peerNick, inviter=self.inviterHost))
            return None
        self.used = True
        protocol = MatchProtocol(self.host, self.peerNick, self.isInvitee, self.clock, self.trace)
        protocol.factory = self
        return protocol

    def matchFor(self, protocol: MatchProtocol) -> Match | None:
        """The connection is up: the host's match machine for it, or None if the host refuses it."""
        return self.host.matchConnected(protocol)


class TcpNetwork(typing.Protocol):
    """How a peer opens its one listening port and makes its one connection."""

    def listen(self, factory: ServerFactory) -> ListeningPort: ...

    def connect(self, host: str, port: int, factory: ClientFactory) -> Deferred[object]: ...


class MatchConnections:
    """Listen for, or connect, one match connection of a handshake (the lobby's ``MatchOpener``)."""

    def __init__(self, network: TcpNetwork, host: IMatchHost, clock: IReactorTime, trace: Tracer = noTrace) -> None:
        self.network, self.host, self.clock, self.trace = network, host, clock, trace

    def listenFor(self, peerNick: str, inviterHost: str) -> ListeningPort:
        factory = MatchFactory(self.host, peerNick, True, self.clock, self.trace, inviterHost=inviterHost)
        return self.network.listen(factory)

    def connectTo(self, host: str, port: int, peerNick: str) -> Deferred[object]:
        return self.network.connect(host, port, MatchFactory(self.host, peerNick, False, self.clock, self.trace))


class _Port:
    """An IListeningPort seen as the invitee's ListeningPort."""

    def __init__(self, port: IListeningPort) -> None:
        self._port = port

    @property
    def portNumber(self) -> int:
        return int(self._port.getHost().port)  # type: ignore[attr-defined]

    def close(self) -> None:
        self._port.stopListening()


class ReactorTcpNetwork:
    """Real TCP: listen on an ephemeral port of our interface; connect with an endpoint."""

    def __init__(self, reactor: IReactorTCP, interface: str = "", timeout: float = 10.0) -> None:
        self.reactor = reactor
        self.interface = interface
        self.timeout = timeout

    def listen(self, factory: ServerFactory) -> _Port:
        return _Port(self.reactor.listenTCP(0, factory, interface=self.interface))

    def connect(self, host: str, port: int, factory: ClientFactory) -> Deferred[object]:
        bind = (self.interface, 0) if self.interface else None
        endpoint = TCP4ClientEndpoint(self.reactor, host, port, timeout=int(self.timeout), bindAddress=bind)
        return endpoint.connect(factory)  # type: ignore[return-value]
