"""One game of a ``socha-match``: the observer that prepares and watches its room, and the player processes.

L{ObservingAdmin} is ``socha-admin prepare --observe`` keeping what the match
needs: the reservation codes, every room packet (the game's XML log), when
each memento arrived (the answer times), the start position and the result.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from typing import IO, Any
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred
from twisted.internet.error import ProcessDone
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure

from velhanet.socha.adminprotocol import TEAMS, AdminError, AdminProtocol, Command
from velhanet.socha.wire import render, tag


class ObservingAdmin(AdminProtocol):
    """``prepare --observe`` that keeps what a match needs: codes, packets, move times, the result."""

    def __init__(
        self, password: str, names: tuple[str, str], timeouts: bool, clock: Any, seed: int | None = None
    ) -> None:
        command = Command("prepare", names=names, timeouts=timeouts, observe=True, seed=seed)
        super().__init__(password, command, clock, say=lambda line: None, timeout=30)
        self.reserved: Deferred[list[str]] = Deferred()
        self.packets: list[str] = []
        self.moments: list[float] = []
        self.startTeam = "ONE"
        self.players = 0
        self.errors: list[str] = []
        self.result: Element | None = None
        self.position = ""
        """A fingerprint of the start position (the first memento's board): equal boards, equal fingerprints."""

    def handle(self, message: Element) -> None:
        if message.tag == "joinedGameRoom":
            self.players = int(message.get("playerCount", "0"))
        if message.tag == "room":
            self.packets.append(render(message))
            data = message.find("data")
            kind = data.get("class") if data is not None else None
            if kind == "memento" and data is not None:
                state = data.find("state")
                self.startTeam = state.get("startTeam", "ONE") if state is not None else "ONE"
                if not self.moments and state is not None:
                    self.position = fingerprint(state.find("board"))
                self.moments.append(time.monotonic())
            elif kind == "error" and data is not None:
                self.errors.append(" ".join(data.get("message", "").split()))
            elif kind == "result":
                self.result = data
        super().handle(message)
        if message.tag == "prepared" and not self.reserved.called:
            self.reserved.callback([r.text or "" for r in message.findall("reservation")])

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        super().connectionLost(reason)
        if not self.reserved.called:
            self.reserved.errback(AdminError("the server prepared no room"))

    @property
    def started(self) -> bool:
        return bool(self.moments)

    def teamToMove(self) -> str:
        """The team whose move is awaited after the mementos seen so far."""
        start = self.startTeam if self.startTeam in TEAMS else "ONE"
        other = TEAMS[1 - TEAMS.index(start)]
        return start if (len(self.moments) - 1) % 2 == 0 else other

    def cancel(self) -> None:
        if not self._finished and self.roomId:
            self._write([tag("cancel", {"roomId": self.roomId})])


TAIL_BYTES = 16384
"""Enough for a twistd start-up error and the traceback twistd logs after it."""


class PlayerProcess(ProcessProtocol):
    """One program (a player, or the server); its output goes to ``log`` (or nowhere), its end kept."""

    def __init__(self, log: IO[bytes] | None) -> None:
        self.log = log
        self.status: int | None = None
        self.ended: Deferred[int] = Deferred()
        self.tail = b""
        """The last bytes of its output: why it stopped, when it says so."""

    def outReceived(self, data: bytes) -> None:
        if self.log is not None:
            self.log.write(data)
        self.tail = (self.tail + data)[-TAIL_BYTES:]

    def exitedSaying(self, status: int | None = None) -> str:
        """``exited with status N``, and the line that says why when it printed one."""
        said = self.lastLine()
        return f"exited with status {self.status if status is None else status}" + (f": {said}" if said else "")

    def lastLine(self) -> str:
        """Why it stopped: twistd's one-line start-up error if it printed one, else its last line."""
        lines = self.tail.decode("utf-8", "replace").strip().splitlines()
        said = [line for line in lines if line.startswith("twistd ") and ": not started: " in line]
        return (said or lines or [""])[-1]

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        self.status = 0 if reason.check(ProcessDone) else int(getattr(reason.value, "exitCode", None) or -1)
        if self.log is not None:
            self.log.close()
        self.ended.callback(self.status)

    killed = False
    """Still running when the runner stopped it."""

    def stop(self, signal: str = "KILL") -> None:
        if self.status is None and self.transport is not None:
            self.killed = True
            with contextlib.suppress(Exception):  # it ended meanwhile
                self.transport.signalProcess(signal)


def fingerprint(board: Element | None) -> str:
    """Twelve hex digits naming a board: its fields' texts, row by row."""
    if board is None:
        return ""
    fields = ",".join((field.text or "").strip() for field in board.iter("field"))
    return hashlib.sha256(fields.encode()).hexdigest()[:12]
