"""velhanet's JogoVelha bot peer with one fault, chosen on the command line.

    python -m standins.faulty.velha_peer INTERFACE ANNOUNCE FAULT [PORT [TIME_SCALE]]

It accepts every invitation, invites ``vinvite`` when it sees it, plays fast (0.02 s a move),
and breaks exactly one rule of ``docs/velha.md`` (its anchor is the fault's name).
"""

from __future__ import annotations

import sys
from typing import Any

from twisted.internet import reactor

from velhanet.velha import wire
from velhanet.velha.lobby import InviteeHandshake, Lobby
from velhanet.velha.peer import Peer
from velhanet.velha.protocol import MatchProtocol, VelhaDatagramProtocol
from velhanet.velha.service import VelhaService
from velhanet.velha.tap import Options


def deafToHello() -> None:
    def hello(self: Peer, nick: str, host: str) -> None:
        pass  # neither in the roster nor answered

    Peer.hello = hello  # type: ignore[method-assign]


def listenerDiesOnJunk() -> None:
    original = VelhaDatagramProtocol.datagramReceived
    dead: list[bool] = []

    def datagramReceived(self: VelhaDatagramProtocol, datagram: bytes, addr: Any) -> None:
        if dead:
            return
        try:
            wire.decodeDatagram(datagram)
        except wire.MalformedMessage:
            dead.append(True)  # as the original's thread on a non-digit length
            return
        original(self, datagram, addr)

    VelhaDatagramProtocol.datagramReceived = datagramReceived  # type: ignore[method-assign]


def neverSendsStart() -> None:
    def send(self: MatchProtocol, message: wire.StreamMessage) -> None:
        if not isinstance(message, wire.MatchStart):
            original(self, message)

    original = MatchProtocol.send
    MatchProtocol.send = send  # type: ignore[method-assign]


def answersWithTheInvitersNick() -> None:
    original = InviteeHandshake.sendAnswer

    def sendAnswer(self: InviteeHandshake, port: int) -> None:
        if port:
            self.table.datagrams.send(wire.InviteAnswer(self.nick, port), self.address)
        else:
            original(self, port)

    InviteeHandshake.sendAnswer = sendAnswer  # type: ignore[method-assign]


def needsMsg06() -> None:
    """As the original: MSG07 only once both the connection and MSG06 are there."""
    acked = [False]
    originalAck, originalInvited, originalSend = Lobby.acknowledged, Lobby.invited, MatchProtocol.send

    def acknowledged(self: Lobby, host: str) -> None:
        acked[0] = True
        originalAck(self, host)

    def invited(self: Lobby, nick: str, host: str) -> None:
        if nick.casefold() not in self.invitees:
            acked[0] = False  # a new invitation
        originalInvited(self, nick, host)

    def send(self: MatchProtocol, message: wire.StreamMessage) -> None:
        if isinstance(message, wire.MatchStart) and not acked[0]:

            def later() -> None:
                if acked[0]:
                    originalSend(self, message)
                elif not self.closing and self.transport is not None:
                    reactor.callLater(0.1, later)

            later()
            return
        originalSend(self, message)

    Lobby.acknowledged = acknowledged  # type: ignore[method-assign]
    Lobby.invited = invited  # type: ignore[method-assign]
    MatchProtocol.send = send  # type: ignore[method-assign]


def repeatsAMove(asInvitee: bool) -> None:
    """Its third move of a series goes where its second went: a taken position."""
    original = MatchProtocol.send

    def send(self: MatchProtocol, message: wire.StreamMessage) -> None:
        if isinstance(message, wire.Move) and self.isInvitee == asInvitee:
            moves = self.__dict__.setdefault("moves", [])
            if len(moves) == 2:
                message = wire.Move(moves[1])
            moves.append(message.position)
        original(self, message)

    MatchProtocol.send = send  # type: ignore[method-assign]


def silentWhenBusy() -> None:
    original = Lobby.invited

    def invited(self: Lobby, nick: str, host: str) -> None:
        if self.busy() and nick.casefold() not in self.invitees:
            return
        original(self, nick, host)

    Lobby.invited = invited  # type: ignore[method-assign]


def readerDiesOnJunk() -> None:
    original = MatchProtocol.dataReceived

    def dataReceived(self: MatchProtocol, data: bytes) -> None:
        if self.__dict__.get("dead"):
            return
        if b"x" in data:
            self.__dict__["dead"] = True  # as the original's reader on a non-digit body
            return
        original(self, data)

    MatchProtocol.dataReceived = dataReceived  # type: ignore[method-assign]


def stuckAfterItsFirstMatch() -> None:
    """As a student's peer whose TCP reader dies on the first message it reads: it stays "in a match"
    for ever (the connection's end goes unnoticed), and refuses every invitation after it as busy."""
    original = MatchProtocol.dataReceived

    def dataReceived(self: MatchProtocol, data: bytes) -> None:
        self.__dict__["dead"] = True  # the reader thread ended; nobody reads this connection again

    def connectionLost(self: MatchProtocol, reason: Any = None) -> None:
        pass  # the program never learns that the match is over: busy from now on

    MatchProtocol.dataReceived = dataReceived  # type: ignore[method-assign]
    MatchProtocol.connectionLost = connectionLost  # type: ignore[method-assign]
    del original


def stuckAndRefusingWithTheInvitersNick() -> None:
    """The stuck peer above, and its busy refusals carry the inviter's nick (as the original program's)."""
    stuckAfterItsFirstMatch()

    def sendAnswer(self: InviteeHandshake, port: int) -> None:
        self.table.datagrams.send(wire.InviteAnswer(self.nick if port == 0 else self.table.nick, port), self.address)

    InviteeHandshake.sendAnswer = sendAnswer  # type: ignore[method-assign]


def floodsBeforeAnswering() -> None:
    """Answers MSG01 only after 150 malformed datagrams: a flood for the checker's record to cut (and few
    enough for the checker's socket buffer on a busy machine: 300 overflowed it, the MSG02 lost)."""
    original = VelhaDatagramProtocol.send

    def send(self: VelhaDatagramProtocol, message: wire.DatagramMessage, host: str) -> None:
        if isinstance(message, wire.HelloReply):
            for index in range(150):
                self.write(f"02099flood{index}".encode(), (host, self.port))
        original(self, message, host)

    VelhaDatagramProtocol.send = send  # type: ignore[method-assign]


def wrongLengthField() -> None:
    """As a student's peer: MSG02 and MSG05 whose length field counts only the body (``02005ana``)."""
    original = VelhaDatagramProtocol.send

    def send(self: VelhaDatagramProtocol, message: wire.DatagramMessage, host: str) -> None:
        if isinstance(message, wire.HelloReply | wire.InviteAnswer):
            body = message.body()
            self.write(f"{message.ID:02d}{len(body):03d}{body}".encode(), (host, self.port))
        else:
            original(self, message, host)

    VelhaDatagramProtocol.send = send  # type: ignore[method-assign]


def staleBuffer() -> None:
    """As a student's Java peer that reuses one buffer for every datagram and reads it as long as the
    datagram before: a datagram shorter than the one before it is read with stale bytes after it, and
    dropped as malformed; the next one (no shorter than that one) is read right."""
    original = VelhaDatagramProtocol.datagramReceived
    buffer = bytearray(256)
    previous = [0]

    def datagramReceived(self: VelhaDatagramProtocol, datagram: bytes, addr: Any) -> None:
        data = datagram[:256]
        buffer[: len(data)] = data
        read = bytes(buffer[: max(len(data), previous[0])])
        previous[0] = len(data)
        original(self, read, addr)

    VelhaDatagramProtocol.datagramReceived = datagramReceived  # type: ignore[method-assign]


def neverInvites() -> None:
    """Sees ``vinvite`` come and go, and never invites it."""

    def invite(self: Lobby, nick: str, address: str) -> None:
        pass

    Lobby.invite = invite  # type: ignore[method-assign]


FAULTS = {
    "wrong-length-field": wrongLengthField,
    "stale-buffer": staleBuffer,
    "never-invites": neverInvites,
    "floods": floodsBeforeAnswering,
    "stuck-after-a-match": stuckAfterItsFirstMatch,
    "stuck-refusing-with-the-inviters-nick": stuckAndRefusingWithTheInvitersNick,
    "velha-hello": deafToHello,
    "velha-malformed-datagrams": listenerDiesOnJunk,
    "velha-invite": neverSendsStart,
    "velha-answer-nick": answersWithTheInvitersNick,
    "velha-no-msg06": needsMsg06,
    "velha-series-invitee": lambda: repeatsAMove(asInvitee=True),
    "velha-series-inviter": lambda: repeatsAMove(asInvitee=False),
    "velha-busy": silentWhenBusy,
    "velha-malformed-frame": readerDiesOnJunk,
}


def main() -> None:
    interface, announce, fault = sys.argv[1:4]
    port = sys.argv[4] if len(sys.argv) > 4 else "20181"
    timeScale = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0  # --time-scale: its protocol timers
    FAULTS[fault]()
    options = Options()
    options.parseOptions(
        [
            "--nick",
            "Faulty",
            "--bot",
            "--interface",
            interface,
            "--announce",
            announce,
            "--invite",
            "vinvite",
            "--move-delay",
            "0.02",
            "--start-grace",
            str(0.5 / timeScale),  # half a second of real time, on the scaled clock too
            "--time-scale",
            str(timeScale),
            "--port",
            port,
        ]
    )
    service = VelhaService(options, reactor)
    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    print("ready", flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
