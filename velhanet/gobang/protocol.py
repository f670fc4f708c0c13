"""The Gobang server's Twisted side: words read from the server FIFO fed to the lobby, words
written into each client's FIFO.

L{WordFeeder} cuts what the server FIFO gives into words, decodes them and
hands each to the lobby; L{FifoChannel} is one client as the lobby sees it
(encode, write without blocking); L{ClientFifos} opens a client's FIFO,
with its security checks, when the lobby seats a new pid. The FIFOs
themselves are ``fifo.py`` (names, safe opening) and ``fifotransport.py``
(non-blocking file descriptors).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.logger import Logger

from velhanet.gobang import fifo, fifotransport
from velhanet.gobang.lobby import Lobby, Member
from velhanet.gobang.wire import (
    CLIENT_WORD,
    ByteOrder,
    MalformedWord,
    ServerWord,
    WordReader,
    decodeClient,
    encodeServer,
)
from velhanet.i18n import _
from velhanet.tracing import IN, OUT, Tracer


class FifoChannel(Member):
    """A client as the lobby sees it: its pid and its FIFO, opened for writing."""

    def __init__(self, pid: int, fd: int, order: ByteOrder, trace: Tracer, reactor: Any) -> None:
        self.pid = pid
        self.peer = str(pid)
        self.order = order
        self.trace = trace
        self.closed = False
        self.greeted = False
        self.writer = fifotransport.FifoWriter(fd, self._lost, reactor=reactor)

    def send(self, word: ServerWord) -> None:
        """Write a word at once; only the first (the board size) waits for the reactor's next write.

        Every word sent in the same turn (a kibitzer's catch-up) queues behind
        that first one, so they all go out in one write, which the client reads
        at once: it draws the game so far as one board.
        """
        if self.closed:
            return
        raw = encodeServer(word, self.order)
        self.trace(OUT, self.peer, raw, word)
        if not self.greeted:
            self.greeted = True
            self.writer.write(raw)
        else:
            self.writer.writeNow(raw)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.loseConnection()

    def _lost(self) -> None:
        self.closed = True


@dataclass
class ClientFifos:
    """Opens the client FIFO of a pid the lobby seats, as a ``channelType``."""

    directory: Path
    order: ByteOrder
    trace: Tracer
    reactor: Any
    channelType: type[FifoChannel]

    def open(self, bits: int) -> FifoChannel:
        """The channel of the one client whose pid has these low 16 bits; L{Refused} says why not."""
        path, pid = fifo.clientFifoFor(self.directory, bits)
        fd = fifo.openForWriting(path, ownerPid=pid)
        return self.channelType(pid, fd, self.order, self.trace, self.reactor)

    @staticmethod
    def isAlive(channel: Member) -> bool:
        """Is this channel's client still there (its FIFO open, its process running)?"""
        return isinstance(channel, FifoChannel) and not channel.closed and fifo.isAlive(channel.pid)


class WordFeeder:
    """What the server FIFO gives, cut into words, each decoded and fed to the lobby."""

    log = Logger()

    def __init__(self, lobby: Lobby, order: ByteOrder, trace: Tracer) -> None:
        self.lobby = lobby
        self.order = order
        self.trace = trace
        self.words = WordReader(CLIENT_WORD)

    def dataReceived(self, data: bytes) -> None:
        lobby = self.lobby
        for raw in self.words.feed(data):
            try:
                word = decodeClient(raw, self.order)
            except MalformedWord as error:  # pragma: no cover - 4 bytes always decode
                self.log.warn(_("bad word {raw!r}: {error}"), raw=raw, error=str(error))
                continue
            self.trace(IN, str(word.pid), raw, word)
            try:
                lobby.received(word)
            except Exception:
                self.log.failure(_("error handling {word}"), word=word.describe())
        lobby.endOfRead()
