"""Immediate sends and TCP_NODELAY on real loopback connections (issue 14)."""

from __future__ import annotations

import socket

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, TCP4ServerEndpoint
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.sendnow import noDelay, writerFor

BIG = bytes(range(256)) * (32 * 1024)  # 8 MiB: more than any socket buffer takes at once


class Writer(Protocol):
    """Writes a small piece, one too big for the socket, another small piece, then closes."""

    def connectionMade(self) -> None:
        assert self.transport is not None
        noDelay(self.transport)
        self.noDelay = self.transport.getHandle().getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)  # type: ignore[attr-defined]
        write = writerFor(self.transport)
        write(b"first|")
        write(BIG)
        write(b"|last")
        self.transport.loseConnection()


class Collector(Protocol):
    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.done: Deferred[bytes] = Deferred()

    def dataReceived(self, data: bytes) -> None:
        self.received.append(data)

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.done.callback(b"".join(self.received))


class WriterForTests(TestCase):
    def test_orderAndPartialWritesOnLoopback(self) -> None:
        """Bytes the socket does not take go through the transport's queue, in order, whole."""
        writers: list[Writer] = []

        def buildWriter() -> Writer:
            writers.append(Writer())
            return writers[-1]

        collector = Collector()
        listening = TCP4ServerEndpoint(reactor, 0, interface="127.0.0.1").listen(Factory.forProtocol(buildWriter))

        def connect(port):
            self.addCleanup(port.stopListening)
            endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port)
            return endpoint.connect(Factory.forProtocol(lambda: collector)).addCallback(lambda _: collector.done)

        def check(data: bytes) -> None:
            self.assertEqual(len(data), len(BIG) + len(b"first|") + len(b"|last"))
            self.assertEqual(data, b"first|" + BIG + b"|last")
            self.assertTrue(writers[0].noDelay, "TCP_NODELAY is set on the accepted socket")

        return listening.addCallback(connect).addCallback(check)


class OtherTransportsTests(SynchronousTestCase):
    def test_notTcpGetsItsOwnWrite(self) -> None:
        transport = StringTransport()
        write = writerFor(transport)
        write(b"one")
        write(b"two")
        self.assertEqual(transport.value(), b"onetwo")

    def test_noDelayIgnoresTransportsWithoutTcp(self) -> None:
        noDelay(StringTransport())  # no setTcpNoDelay: nothing to do, nothing raised
        noDelay(object())
