"""Send a small write at once instead of at the reactor's next turn.

Twisted's TCP transport never sends from ``write()``: it queues the bytes,
asks the reactor to watch the socket for writability (an ``epoll_ctl``),
sends them when the reactor's next ``epoll_wait`` says it may, and stops
watching (another ``epoll_ctl``). That keeps writes from ever blocking and
batches them, which is right for bulk data; for a relay that writes one
object of 50 bytes per message it is two system calls and a pass through
the reactor loop per message, about a third of the server's CPU per move
(``docs/performance.md``).

L{writerFor} gives a connection a write function that, when nothing is
queued on the transport, hands the bytes to the socket right away through
the transport's own ``writeSomeData`` (the non-blocking ``send`` that
``doWrite`` uses). Whatever the socket does not take, and any error, goes
through the ordinary ``write``: ordering, flow control (producers) and
connection-lost handling stay Twisted's. Transports that are not plain TCP
connections (TLS, the test transports) simply get their own ``write``.
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet import tcp
from twisted.internet.interfaces import ITransport


def writerFor(transport: ITransport) -> Callable[[bytes], None]:
    """The write function to use for ``transport`` (its own ``write`` unless it is plain TCP)."""
    if not isinstance(transport, tcp.Connection) or getattr(transport, "TLS", False):
        return transport.write
    connection = transport

    def writeNow(data: bytes) -> None:
        if (
            not connection._tempDataLen
            and connection.offset == len(connection.dataBuffer)
            and connection.connected
            and not connection.disconnecting
        ):
            sent = connection.writeSomeData(data)
            if isinstance(sent, int) and sent > 0:
                if sent == len(data):
                    return
                data = data[sent:]
        connection.write(data)

    return writeNow


def noDelay(transport: object) -> None:
    """Turn Nagle's algorithm off where the transport is TCP.

    Every protocol here writes small messages and then waits for an answer;
    with Nagle a second small write waits for the peer's delayed ACK (~40 ms
    on Linux) before it leaves, a stall a lock-step game pays every turn.
    """
    setNoDelay = getattr(transport, "setTcpNoDelay", None)
    if setNoDelay is not None:
        setNoDelay(True)
