"""A stand-in for the ``socha==4.3.9`` player library's networking, on a ``task.Clock``.

It reads the way the real library does (``network_socket.py``,
``game_client.py``): each turn of its loop calls ``recv(16129)`` once, which
returns at once if bytes are waiting in the socket and otherwise waits up to
0.1 s for new ones; then it takes the *earliest* complete message out of its
own buffer (a regex over ``<room …</room>``, ``<left …/>`` and friends),
handles that one message (a memento costs parsing time) and runs
``gc.collect()``. A second message that arrived in the same read therefore
waits for the next turn's ``recv`` to time out. On a moveRequest it calls
``calculate_move`` at once; the player then thinks ``thinkTime`` seconds of
its own time before the move goes out.

``moveCalls`` records (moveRequest arrived, calculate_move called) for every
move, so a test can see what the server's writes cost the player.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from twisted.internet.interfaces import IDelayedCall
from twisted.internet.task import Clock

RECV_SIZE = 16129
RECV_TIMEOUT = 0.1
MESSAGE = re.compile(
    rb"<((room[\s\S]+?</room>)|(errorpacket[\s\S]+?</errorpacket>)|(prepared[\s\S]+?</prepared>)"
    rb"|(joined|left|join|observe|pause|step|cancel|creatGame|authenticate)[\s\S]*?/>)"
)


class LibraryClient:
    """One player process; ``deliver`` is how bytes reach its socket, ``send`` how its bytes leave."""

    def __init__(
        self,
        clock: Clock,
        send: Callable[[bytes], None],
        chooseMove: Callable[[str], str],
        thinkTime: float = 1.85,
        mementoCost: float = 0.008,
        messageCost: float = 0.001,
        gcCost: float = 0.003,
    ) -> None:
        self.clock = clock
        self.send = send
        self.chooseMove = chooseMove
        self.thinkTime = thinkTime
        self.mementoCost, self.messageCost, self.gcCost = mementoCost, messageCost, gcCost
        self.socket = b""
        """Bytes delivered to the socket and not yet read by ``recv``."""
        self.buffer = b""
        """The library's own buffer (``NetworkSocket.buffer``)."""
        self.inRecv: IDelayedCall | None = None
        self.roomId = ""
        self.handled: list[str] = []
        self.moveCalls: list[tuple[float, float]] = []
        self.arrivals: dict[int, float] = {}
        self.left = False
        self._loop()

    def deliver(self, data: bytes) -> None:
        """Bytes from the server reach the socket now."""
        if b"moveRequest" in data:
            self.arrivals[len(self.moveCalls)] = self.clock.seconds()
        self.socket += data
        if self.inRecv is not None:
            self.inRecv.cancel()
            self.inRecv = None
            self._received()

    def _loop(self) -> None:
        """One turn: ``recv`` — at once if bytes wait, else wait up to 0.1 s for new ones."""
        if self.left:
            return
        if self.socket:
            self._received()
        else:
            self.inRecv = self.clock.callLater(RECV_TIMEOUT, self._timedOut)

    def _timedOut(self) -> None:
        self.inRecv = None
        self._process()

    def _received(self) -> None:
        chunk, self.socket = self.socket[:RECV_SIZE], self.socket[RECV_SIZE:]
        self.buffer += chunk
        self._process()

    def _process(self) -> None:
        found = MESSAGE.search(self.buffer)
        if found is None:
            self._loop()
            return
        message = found.group(0)
        self.buffer = self.buffer.replace(message, b"")
        text = message.decode()
        kind = re.search(r'class="(\w+)"', text)
        name = kind.group(1) if kind and text.startswith("<room") else text[1:].split()[0].rstrip("/>")
        self.handled.append(name)
        cost = (self.mementoCost if name == "memento" else self.messageCost) + self.gcCost
        if name == "joined":
            self.roomId = re.search(r'roomId="([^"]+)"', text).group(1)  # type: ignore[union-attr]
        if name == "left":
            self.left = True
            return
        if name == "moveRequest":
            arrived = self.arrivals.get(len(self.moveCalls), self.clock.seconds())
            self.moveCalls.append((arrived, self.clock.seconds()))
            self.clock.callLater(self.thinkTime, self._moveChosen)
            return
        self.clock.callLater(cost, self._loop)

    def _moveChosen(self) -> None:
        self.send(self.chooseMove(self.roomId).encode())
        self.clock.callLater(self.gcCost, self._loop)
