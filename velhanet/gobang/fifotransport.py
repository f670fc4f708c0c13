"""Non-blocking Twisted I/O on Gobang's named pipes: a reader for our FIFO, a writer into someone's.

Apart from ``fifo`` (names, creation, safe opening), which imports no Twisted:
the scripted agents of ``velhanet-check gobang`` are separate processes (the
server tells clients apart by pid), well over a hundred per run of the
suite, and each starts in a twentieth of a second without Twisted.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from twisted.internet import fdesc
from twisted.internet.abstract import FileDescriptor
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IReactorFDSet
from twisted.internet.main import CONNECTION_DONE, CONNECTION_LOST
from twisted.python.failure import Failure

READ_SIZE = 65536
"""Bytes read from a FIFO at a time: a Linux pipe holds 64 KiB."""


class FifoReader(FileDescriptor):
    """Read our FIFO without blocking; every chunk goes to ``dataReceived``."""

    def __init__(self, fd: int, dataReceived: Callable[[bytes], None], reactor: IReactorFDSet | None = None) -> None:
        super().__init__(reactor)
        self._fd = fd
        self._dataReceived = dataReceived

    def fileno(self) -> int:
        return self._fd

    def doRead(self) -> object:
        """Read up to a full pipe (64 KiB) per turn, not Twisted's 8 KiB: a writer that keeps the
        pipe full must not make the honest clients' words wait longer than they must."""
        try:
            data = os.read(self._fd, READ_SIZE)
        except OSError as error:
            return None if error.errno in (errno.EAGAIN, errno.EINTR) else CONNECTION_LOST
        if not data:
            return CONNECTION_DONE
        self._dataReceived(data)
        return None

    def connectionLost(self, reason: Failure) -> None:
        super().connectionLost(reason)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _nothing() -> None:
    """What a closed writer calls when it is lost again: nobody."""


class FifoWriter(FileDescriptor):
    """Write to someone's FIFO without ever blocking the reactor.

    Small words are written at once; whatever the pipe cannot take now is
    buffered and written when it becomes writable (Twisted's usual write
    buffering). A reader that went away (EPIPE) calls ``onLost``, once: the
    writer lets go of it then, so that its owner (which holds the writer) and
    the writer do not keep each other alive after the FIFO is closed.
    """

    def __init__(self, fd: int, onLost: Callable[[], None], reactor: IReactorFDSet | None = None) -> None:
        super().__init__(reactor)
        self._fd = fd
        self._onLost = onLost
        self.connected = 1

    def fileno(self) -> int:
        return self._fd

    def writeSomeData(self, data: bytes) -> int | BaseException:
        return fdesc.writeToFD(self._fd, data)

    def writeNow(self, data: bytes) -> None:
        """Write at once when nothing is queued, so a word sent right before shutdown gets out."""
        if self.disconnected or self._fd < 0:
            return
        if not self.dataBuffer and not self._tempDataBuffer:
            result = self.writeSomeData(data)
            if isinstance(result, int) and result == len(data):
                return
            if isinstance(result, Exception):
                self.connectionLost(Failure(result))
                return
            data = data[result:] if isinstance(result, int) else data
        self.write(data)

    def connectionLost(self, reason: Failure) -> None:
        if self._fd < 0:
            return
        super().connectionLost(reason)
        os.close(self._fd)
        self._fd = -1
        onLost, self._onLost = self._onLost, _nothing
        onLost()

    def discard(self) -> None:
        """Close without calling ``onLost``: the owner is leaving anyway."""
        self._onLost = _nothing
        self.connectionLost(Failure(ConnectionDone("closed by its owner")))
