"""``makeService`` for a JogoVelha peer: UDP listener, lobby, and a console or bot."""

from __future__ import annotations

import fcntl
import socket
import struct
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.interfaces import IListeningPort
from twisted.internet.stdio import StandardIO
from twisted.logger import ILogObserver, Logger, textFileLogObserver
from twisted.python.components import Componentized

from velhanet.velha.frontends import BotFrontEnd, ConsoleFrontEnd
from velhanet.velha.lobby import Lobby, Tracer, noTrace
from velhanet.velha.match import MatchSettings
from velhanet.velha.protocol import ReactorTcpNetwork, VelhaDatagramProtocol

UDP_RECEIVE_BUFFER = 1 << 20
"""Bytes of datagrams the kernel may hold for us while we are busy (a flood must not crowd out peers)."""
SIOCGIFBRDADDR = 0x8919


def broadcastAddresses() -> list[str]:
    """255.255.255.255 plus every IPv4 interface's broadcast address (Linux; best effort)."""
    found = ["255.255.255.255"]
    try:
        interfaces = socket.if_nameindex()
    except OSError:
        return found
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in interfaces:
            try:
                packed = fcntl.ioctl(probe.fileno(), SIOCGIFBRDADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:
                continue
            address = socket.inet_ntoa(packed[20:24])
            if address not in found and address != "0.0.0.0":
                found.append(address)
    return found


class VelhaService(MultiService):
    """One peer: starts listening and says hello on start, says goodbye on stop."""

    log = Logger()

    def __init__(self, options: Any, reactor: Any) -> None:
        super().__init__()
        self.options = options
        self.reactor = reactor
        self.lobby: Lobby | None = None
        self.udpPort: IListeningPort | None = None
        self.console: ConsoleFrontEnd | None = None

    def setServiceParent(self, parent: Any) -> None:
        """Under twistd, send the log to a file while the console owns the terminal."""
        super().setServiceParent(parent)
        logFile = self.options["log-file"]
        consoleOwnsTerminal = not self.options["bot"] and logFile and logFile != "-"
        if (
            consoleOwnsTerminal
            and isinstance(parent, Componentized)
            and parent.getComponent(ILogObserver, None) is None
        ):
            logStream = open(logFile, "a", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
            parent.setComponent(ILogObserver, textFileLogObserver(logStream))

    def startService(self) -> None:
        options, reactor = self.options, self.reactor
        datagrams = VelhaDatagramProtocol()
        self.udpPort = reactor.listenUDP(options["port"], datagrams, interface=options["interface"])
        udpSocket = getattr(self.udpPort, "socket", None)
        if udpSocket is not None:  # room for a burst (the kernel caps it at net.core.rmem_max)
            udpSocket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RECEIVE_BUFFER)
        frontEnd: Any
        trace: Tracer
        if options["bot"]:
            frontEnd = BotFrontEnd(reactor, moveDelay=options["move-delay"], seed=options["seed"])
            trace = self._logTrace
        else:
            frontEnd = self.console = ConsoleFrontEnd(exit=self._exit)
            trace = self.console.traceLine
        self.lobby = Lobby(
            options["nick"],
            clock=reactor,
            sendDatagram=datagrams.send,
            network=ReactorTcpNetwork(reactor, options["interface"]),
            frontEnd=frontEnd,
            announceTargets=options["announce"] or broadcastAddresses(),
            port=options["port"],
            acceptPolicy=options["accept"],
            autoInvite=options["invite"],
            trace=trace if options["trace"] else noTrace,
            settings=MatchSettings(
                peer=options["peer-timeout"], startGrace=options["start-grace"], first=options["first"]
            ),
        )
        datagrams.lobby = self.lobby
        frontEnd.attach(self.lobby)
        if self.console is not None:
            StandardIO(self.console, reactor=reactor)
        super().startService()
        self.lobby.start()

    def stopService(self) -> Deferred[Any]:
        closing = self.lobby.stop() if self.lobby is not None else None
        waits: list[Deferred[Any]] = [super().stopService()]
        if closing is not None:
            timeout = self.reactor.callLater(2, closing.cancel)
            closing.addBoth(lambda _: timeout.cancel() if timeout.active() else None)
            waits.append(closing)

        def stopListening(_: object) -> object:
            return self.udpPort.stopListening() if self.udpPort is not None else None

        return DeferredList(waits, consumeErrors=True).addCallback(stopListening)

    def _exit(self) -> None:
        if self.reactor.running:
            self.reactor.stop()

    def _logTrace(self, direction: str, channel: str, peer: str, raw: bytes, decoded: object) -> None:
        self.log.info(
            "{arrow} {channel} {peer} {raw!r} {decoded}",
            arrow="->" if direction == "out" else "<-",
            channel=channel,
            peer=peer,
            raw=raw,
            decoded=str(decoded),
        )


def makeService(options: Any, reactor: Any = None) -> VelhaService:
    if reactor is None:
        from twisted.internet import reactor as globalReactor

        reactor = globalReactor
    return VelhaService(options, reactor)
