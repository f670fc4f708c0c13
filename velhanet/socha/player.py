"""A velhanet Piranhas player for the XML protocol: an opponent for players under test.

It joins (``<join/>`` or a reservation), answers every moveRequest with a
move chosen from the last memento (random among the legal moves, seeded),
and closes after ``<left/>``. It records what it saw, so a check can tell
how the game ended.
"""

from __future__ import annotations

import random
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure

from velhanet.games.piranhas import PiranhaMove, PiranhasState, heaviestSwarm
from velhanet.sendnow import noDelay
from velhanet.socha.games import moveData, stateFromMemento
from velhanet.socha.wire import XmlError, XmlStreamReader


class BotPlayer(Protocol):
    def __init__(self, seed: int = 0, reservation: str | None = None, greedy: bool = False) -> None:
        self.rng = random.Random(seed)
        self.reservation = reservation
        self.greedy = greedy
        """Play the move after which our heaviest swarm is heaviest (the Piranhas goal), not a random one."""
        self.reader = XmlStreamReader()
        self.state: PiranhasState | None = None
        self.roomId = ""
        self.result: Element | None = None
        self.team = ""
        self.left = False
        self.done: Deferred[None] = Deferred()

    def connectionMade(self) -> None:
        noDelay(self.transport)
        request = f'<joinPrepared reservationCode="{self.reservation}"/>' if self.reservation else "<join/>"
        self.transport.write(f"<protocol>{request}\n".encode())  # type: ignore[union-attr]

    def dataReceived(self, data: bytes) -> None:
        try:
            messages = self.reader.feed(data)
        except XmlError:
            self.transport.loseConnection()  # type: ignore[union-attr]
            return
        for message in messages:
            self.handle(message)

    def handle(self, message: Element) -> None:
        if message.tag == "joined":
            self.roomId = message.get("roomId", "")
        elif message.tag == "left":
            self.left = True
            self.transport.loseConnection()  # type: ignore[union-attr]
        elif message.tag == "room":
            data = message.find("data")
            kind = data.get("class") if data is not None else None
            if data is None:
                return
            if kind == "welcomeMessage":
                self.team = data.get("color", "")
            elif kind == "memento":
                self.state = stateFromMemento(data)
            elif kind == "result":
                self.result = data
            elif kind == "moveRequest" and self.state is not None:
                self.moveRequested(message.get("roomId", ""))

    def moveRequested(self, roomId: str) -> None:
        """Choose a move in the position we hold and send it."""
        assert self.state is not None  # the server sends a memento before every moveRequest
        move = self.chooseMove(self.state)
        self.transport.write(f'<room roomId="{roomId}">{moveData(move)}</room>\n'.encode())  # type: ignore[union-attr]

    def chooseMove(self, state: PiranhasState) -> PiranhaMove:
        """A random legal move; greedy: one that leaves our heaviest swarm heaviest, ties at random."""
        moves = state.legalMoves()
        if not self.greedy:
            return self.rng.choice(moves)
        team = state.currentTeam
        weights = [heaviestSwarm(state.apply(move).cells, team) for move in moves]
        best = max(weights)
        return self.rng.choice([move for move, weight in zip(moves, weights, strict=True) if weight == best])

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if not self.done.called:
            self.done.callback(None)
