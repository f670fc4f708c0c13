"""``makeService`` for a JogoVelha peer: UDP listener, peer, and a console or bot."""

from __future__ import annotations

import fcntl
import os
import socket
import struct
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort
from twisted.internet.stdio import StandardIO
from twisted.logger import ILogObserver, Logger, textFileLogObserver
from twisted.python.components import Componentized

from velhanet.i18n import _
from velhanet.scaledclock import scaledClock
from velhanet.startup import StartupReport, listenReason
from velhanet.tracing import Tracer, logTracer, noTrace, orGlobalReactor
from velhanet.velha.frontends import BotFrontEnd, ConsoleFrontEnd
from velhanet.velha.peer import Peer
from velhanet.velha.protocol import ReactorTcpNetwork
from velhanet.velha.room import MatchSettings
from velhanet.web.service import webSite, withSite

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
        self.peer: Peer | None = None
        self.udpPort: IListeningPort | None = None
        self.console: ConsoleFrontEnd | None = None
        ownLog = self.ownLog()
        self.startup = StartupReport(options, reactor, log=os.path.abspath(ownLog) if ownLog else None)
        self.watcher, web = webSite(options, reactor, self.startup)
        withSite(self, web)

    def ownLog(self) -> str | None:
        """The file the console's log goes to (None: twistd's log, as with --bot or ``--log-file -``)."""
        logFile = self.options["log-file"]
        return None if self.options["bot"] or not logFile or logFile == "-" else str(logFile)

    def setServiceParent(self, parent: Any) -> None:
        """Under twistd, send the log to a file while the console owns the terminal."""
        super().setServiceParent(parent)
        logFile = self.ownLog()
        if logFile and isinstance(parent, Componentized) and parent.getComponent(ILogObserver, None) is None:
            try:
                logStream = open(logFile, "a", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
            except OSError as error:  # still before twistd forks or logs: the terminal is ours
                reason = _("cannot open the log {file} ({reason})").format(file=logFile, reason=error.strerror)
                raise SystemExit(f"{self.startup.program}: {reason}") from None
            parent.setComponent(ILogObserver, textFileLogObserver(logStream))

    def startService(self) -> None:
        options, reactor = self.options, self.reactor
        frontEnd: Any
        traces: tuple[Tracer, Tracer]
        if options["bot"]:
            frontEnd = BotFrontEnd(reactor, moveDelay=options["move-delay"], seed=options["seed"])
            traces = logTrace("udp"), logTrace("tcp")
        else:
            frontEnd = self.console = ConsoleFrontEnd(exit=self._exit)
            traces = self.console.tracer("udp"), self.console.tracer("tcp")
        if not options["trace"]:
            traces = noTrace, noTrace
        self.peer = Peer(
            options["nick"],
            clock=scaledClock(reactor, options["time-scale"]),  # the protocol's timers; the bot's pace is its own
            network=ReactorTcpNetwork(reactor, options["interface"]),
            frontEnd=frontEnd,
            announceTargets=options["announce"] or broadcastAddresses(),
            port=options["port"],
            acceptPolicy=options["accept"],
            autoInvite=options["invite"],
            traceDatagrams=traces[0],
            traceMatch=traces[1],
            settings=MatchSettings(
                peer=options["peer-timeout"], startGrace=options["start-grace"], first=options["first"]
            ),
        )
        self.peer.watcher = self.watcher
        try:
            self.udpPort = reactor.listenUDP(options["port"], self.peer.datagrams, interface=options["interface"])
        except CannotListenError as error:
            if options["interface"]:
                text = _("cannot listen on UDP {interface}:{port} ({reason})")
            else:
                text = _("cannot listen on UDP port {port} ({reason})")
            reason = listenReason(error)
            self.startup.cannotStart(text.format(interface=options["interface"], port=options["port"], reason=reason))
        udpSocket = getattr(self.udpPort, "socket", None)
        if udpSocket is not None:  # room for a burst (the kernel caps it at net.core.rmem_max)
            udpSocket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RECEIVE_BUFFER)
        frontEnd.attach(self.peer)
        if self.console is not None:
            StandardIO(self.console, reactor=reactor)
        super().startService()
        self.peer.start()

    def stopService(self) -> Deferred[Any]:
        closing = self.peer.stop() if self.peer is not None else None
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


def logTrace(channel: str) -> Tracer:
    """The bot's ``--trace``: one log line per message, as ``-> udp 198.18.0.2 b'04007Bo' Invite(...)``."""
    return logTracer(
        "velhanet.velha.service.VelhaService", format=f"{{arrow}} {channel} {{peer}} {{raw}} {{decoded}}", showRaw=repr
    )


def makeService(options: Any, reactor: Any = None) -> VelhaService:
    return VelhaService(options, orGlobalReactor(reactor))
