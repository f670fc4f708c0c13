"""The Gobang server service: the server FIFO, client FIFOs, liveness and shutdown.

The FIFO is created in ``startService`` because its name carries the pid,
and twistd forks before starting services when it daemonizes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from twisted.application.service import Service
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from velhanet.games.kinarow import TICTACTOE, KInARowRules, gobangRules
from velhanet.gobang import fifo
from velhanet.gobang.table import ClientChannel, Refused, Table
from velhanet.gobang.wire import (
    CLIENT_WORD,
    ByteOrder,
    MalformedWord,
    ServerWord,
    WordReader,
    decodeClient,
    encodeServer,
)

LIVENESS_INTERVAL = 2.0
"""Seconds between checks that every participant's process still exists."""


class FifoChannel(ClientChannel):
    """A client as the table sees it: its pid and its FIFO, opened for writing."""

    def __init__(self, pid: int, fd: int, order: ByteOrder, service: GobangServerService) -> None:
        self.pid = pid
        self.order = order
        self.service = service
        self.closed = False
        self.writer = fifo.FifoWriter(fd, self._lost, reactor=service.reactor)

    def send(self, word: ServerWord) -> None:
        if self.closed:
            return
        raw = encodeServer(word, self.order)
        self.service.trace("out", self.pid, raw, word.describe())
        self.writer.writeNow(raw)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.loseConnection()

    def _lost(self) -> None:
        self.closed = True


class GobangServerService(Service):
    log = Logger()

    def __init__(self, options: Any, reactor: Any) -> None:
        self.options = options
        self.reactor = reactor
        self.order: ByteOrder = options["byte-order"]
        self.directory = Path(options["fifo-dir"])
        self.rules: KInARowRules = TICTACTOE if options["game"] == "tictactoe" else gobangRules(options["size"])
        self.path: Path | None = None
        self.reader: fifo.FifoReader | None = None
        self.table = Table(self.rules, self.openChannel, self.killRefusal, self.stop, once=options["once"])
        self.words = WordReader(CLIENT_WORD)
        self.liveness = LoopingCall(self.table.checkAlive, self._alive)
        self.liveness.clock = reactor

    def startService(self) -> None:
        super().startService()
        pid = os.getpid()
        self.path = fifo.fifoPath(self.directory, "gbs", pid)
        fifo.createFifo(self.path)
        self.reader = fifo.FifoReader(fifo.openForReading(self.path), self.dataReceived, reactor=self.reactor)
        self.reader.startReading()
        self.liveness.start(LIVENESS_INTERVAL, now=False)
        self.log.info(
            "Gobang server #{pid} ({game} {size}x{size}) reading {path}",
            pid=pid,
            game=self.rules.name,
            size=self.rules.width,
            path=str(self.path),
        )

    def stopService(self) -> None:
        super().stopService()
        if self.liveness.running:
            self.liveness.stop()
        self.table.shutdown()
        if self.reader is not None:
            self.reader.stopReading()
            self.reader.connectionLost(None)  # type: ignore[arg-type]
            self.reader = None
        if self.path is not None:
            fifo.removeFifo(self.path)
            self.log.info("removed {path}", path=str(self.path))
            self.path = None

    def stop(self) -> None:
        """Opcode 15 or --once: stop the whole process (stopService then runs)."""
        if self.reactor.running:
            self.reactor.stop()

    def dataReceived(self, data: bytes) -> None:
        for raw in self.words.feed(data):
            try:
                word = decodeClient(raw, self.order)
            except MalformedWord as error:  # pragma: no cover - 4 bytes always decode
                self.log.warn("bad word {raw!r}: {error}", raw=raw, error=str(error))
                continue
            self.trace("in", word.pid, raw, word.describe())
            try:
                self.table.received(word)
            except Exception:
                self.log.failure("error handling {word}", word=word.describe())
        self.table.endOfRead()

    def openChannel(self, bits: int) -> FifoChannel:
        path, pid = fifo.clientFifoFor(self.directory, bits)
        fd = fifo.openForWriting(path, ownerPid=pid)
        return FifoChannel(pid, fd, self.order, self)

    def killRefusal(self, bits: int) -> str | None:
        """Why a Kill with these pid bits is not honoured (None: it is); ``docs/security.md``.

        Only the proof of L{fifo.killRefusal} counts, for a participant too:
        the pid inside a word is whatever its writer put there, and a
        participant's pid is known to everyone who watches the game.
        """
        return fifo.killRefusal(self.directory, bits, os.getuid())

    def _alive(self, channel: ClientChannel) -> bool:
        return isinstance(channel, FifoChannel) and not channel.closed and fifo.isAlive(channel.pid)

    def trace(self, direction: str, pid: int, raw: bytes, decoded: str) -> None:
        if self.options["trace"]:
            self.log.info(
                "{arrow} pid {pid} {raw} {decoded}",
                arrow="->" if direction == "out" else "<-",
                pid=pid,
                raw=raw.hex(" "),
                decoded=decoded,
            )


def makeService(options: Any, reactor: Any = None) -> GobangServerService:
    if reactor is None:
        from twisted.internet import reactor as globalReactor

        reactor = globalReactor
    return GobangServerService(options, reactor)


__all__ = ["GobangServerService", "Refused", "makeService"]
