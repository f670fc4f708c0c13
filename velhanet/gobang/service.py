"""The Gobang server service: the server FIFO, the lobby, liveness and shutdown; ``makeService``.

The FIFO is created in ``startService`` because its name carries the pid,
and twistd forks before starting services when it daemonizes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from velhanet.games.kinarow import TICTACTOE, KInARowRules, gobangRules
from velhanet.gobang import fifo, fifotransport
from velhanet.gobang.lobby import Lobby
from velhanet.gobang.protocol import ClientFifos, FifoChannel, WordFeeder
from velhanet.gobang.wire import ByteOrder
from velhanet.i18n import _
from velhanet.startup import StartupReport
from velhanet.tracing import logTracer, noTrace, orGlobalReactor
from velhanet.web.service import webSite, withSite

LIVENESS_INTERVAL = 2.0
"""Seconds between checks that every participant's process still exists."""

traceToLog = logTracer(
    "velhanet.gobang.trace",
    format="{arrow} pid {peer} {raw} {decoded}",
    showRaw=lambda raw: raw.hex(" ") if isinstance(raw, bytes) else raw,
    describe=lambda word: word.describe(),  # type: ignore[attr-defined]
)
"""``--trace``: each word in and out, in hex and decoded, as a log line."""


class GobangService(MultiService):
    """One Gobang server process.

    ``lobbyType`` and ``channelType`` (and L{serverFifoPath}) are the seams a
    variant of the server (``standins/faulty/gobang_server.py``) replaces in a
    subclass.
    """

    log = Logger()
    lobbyType = Lobby
    channelType = FifoChannel

    def __init__(self, options: Any, reactor: Any) -> None:
        super().__init__()
        self.options = options
        self.reactor = reactor
        self.order: ByteOrder = options["byte-order"]
        self.directory = Path(options["fifo-dir"])
        self.rules: KInARowRules = TICTACTOE if options["game"] == "tictactoe" else gobangRules(options["size"])
        self.path: Path | None = None
        self.reader: fifotransport.FifoReader | None = None
        trace = traceToLog if options["trace"] else noTrace
        self.clients = ClientFifos(self.directory, self.order, trace, reactor, self.channelType)
        self.lobby = self.lobbyType(self.rules, self.clients.open, self.killRefusal, self.stop, once=options["once"])
        self.feeder = WordFeeder(self.lobby, self.order, trace)
        self.liveness = LoopingCall(self.lobby.checkAlive, self.clients.isAlive)
        self.liveness.clock = reactor
        self.startup = StartupReport(options, reactor)
        watcher, web = webSite(options, reactor, self.startup)
        withSite(self, web)
        self.lobby.watcher = watcher

    def serverFifoPath(self, pid: int) -> Path:
        return fifo.fifoPath(self.directory, "gbs", pid)

    def startService(self) -> None:
        pid = os.getpid()
        self.path = self.serverFifoPath(pid)
        try:
            fifo.createFifo(self.path)
        except OSError as error:
            path, self.path = self.path, None
            if not self.directory.is_dir():
                self.startup.cannotStart(
                    _("the FIFO directory {directory} does not exist").format(directory=self.directory)
                )
            self.startup.cannotStart(
                _("cannot create the FIFO {path} ({reason})").format(path=path, reason=error.strerror)
            )
        readFd = fifo.openForReading(self.path)
        self.reader = fifotransport.FifoReader(readFd, self.feeder.dataReceived, reactor=self.reactor)
        self.reader.startReading()
        self.liveness.start(LIVENESS_INTERVAL, now=False)
        super().startService()  # the site after the FIFO: once the site answers, clients can connect
        self.log.info(
            _("Gobang server #{pid} ({game} {size}x{size}) reading {path}"),
            pid=pid,
            game=self.rules.name,
            size=self.rules.width,
            path=str(self.path),
        )

    def stopService(self) -> Deferred[object] | None:
        stopped: Deferred[object] | None = super().stopService()
        if self.liveness.running:
            self.liveness.stop()
        self.lobby.shutdown()
        if self.reader is not None:
            self.reader.stopReading()
            self.reader.connectionLost(None)  # type: ignore[arg-type]
            self.reader = None
        if self.path is not None:
            fifo.removeFifo(self.path)
            self.log.info(_("removed {path}"), path=str(self.path))
            self.path = None
        return stopped

    def stop(self) -> None:
        """Opcode 15 or --once: stop the whole process (stopService then runs)."""
        if self.reactor.running:
            self.reactor.stop()

    def killRefusal(self, bits: int) -> str | None:
        """Why a Kill with these pid bits is not honoured (None: it is); ``docs/security.md``.

        Only the proof of L{fifo.killRefusal} counts, for a participant too:
        the pid inside a word is whatever its writer put there, and a
        participant's pid is known to everyone who watches the game.
        """
        return fifo.killRefusal(self.directory, bits, os.getuid())


def makeService(options: Any, reactor: Any = None) -> GobangService:
    return GobangService(options, orGlobalReactor(reactor))
