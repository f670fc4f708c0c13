"""The network adapters of a JogoVelha peer: the UDP listener and real TCP.

Both are thin: bytes go to the lobby, which routes them to its machines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.interfaces import IListeningPort, IReactorTCP
from twisted.internet.protocol import ClientFactory, DatagramProtocol, ServerFactory
from twisted.logger import Logger

if TYPE_CHECKING:
    from velhanet.velha.lobby import Lobby

MAX_DATAGRAM = 2048
"""Datagrams longer than this cannot be JogoVelha messages (3-digit length); dropped unread."""


class VelhaDatagramProtocol(DatagramProtocol):
    """The UDP port (20181): every datagram goes to the lobby; the port stays open during matches."""

    log = Logger()

    def __init__(self) -> None:
        self.lobby: Lobby | None = None

    def startProtocol(self) -> None:
        self.transport.setBroadcastAllowed(True)  # type: ignore[union-attr]

    def datagramReceived(self, datagram: bytes, addr: tuple[str, int]) -> None:  # type: ignore[override]
        if self.lobby is None:
            return
        if len(datagram) > MAX_DATAGRAM:
            self.log.warn("datagram of {size} bytes from {host} dropped: too long", size=len(datagram), host=addr[0])
            return
        try:
            self.lobby.datagramReceived(datagram, addr[0])
        except Exception:
            # Never let one datagram kill the listener (the reference's does).
            self.log.failure("error handling a datagram from {host}", host=addr[0])

    def send(self, data: bytes, addr: tuple[str, int]) -> None:
        if self.transport is None:
            return
        try:
            self.transport.write(data, addr)
        except OSError as error:
            self.log.warn("could not send to {addr}: {error}", addr=addr, error=error)


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
