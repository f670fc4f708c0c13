"""The narrow interfaces between a JogoVelha peer's parts.

As in magic-wormhole, each machine and each network adapter sees its
neighbours only through one of these; the coordinator
(L{velhanet.velha.peer.Peer}) wires them once, and a test replaces any of
them with a recording fake that mypy (through mypy-zope) checks against the
same interface.

Who implements what:

- L{IDatagramSender}: the UDP protocol (``protocol.VelhaDatagramProtocol``);
- L{IDatagramReceiver}, L{IPresenceListener}, L{IMatchHost}: the coordinator;
- L{IInviterLink}, L{IInviteeLink}: one handshake of the tables
  (``lobby.py``), for its inviter or invitee machine;
- L{IMatchLink}: the TCP protocol of a match (``protocol.MatchProtocol``).
"""

from __future__ import annotations

import typing

from twisted.internet.defer import Deferred
from zope.interface import Attribute, Interface

from velhanet.velha import wire
from velhanet.velha.room import Match


class ListeningPort(typing.Protocol):
    """The invitee's TCP port, opened for the inviter's one connection."""

    @property
    def portNumber(self) -> int: ...

    def close(self) -> None: ...


class IDatagramSender(Interface):
    def send(message: wire.DatagramMessage, host: str) -> None:
        """Encode ``message`` and send it to ``host``'s protocol port."""


class IDatagramReceiver(Interface):
    """What a decoded datagram asks of the peer; the UDP protocol calls one method per message."""

    def hello(nick: str, host: str) -> None:
        """MSG01."""

    def helloReply(nick: str, host: str) -> None:
        """MSG02."""

    def goodbye(nick: str) -> None:
        """MSG03."""

    def invited(nick: str, host: str) -> None:
        """MSG04."""

    def answered(message: wire.InviteAnswer, host: str) -> None:
        """MSG05."""

    def acknowledged(host: str) -> None:
        """MSG06."""


class IPresenceListener(Interface):
    """What the discovery machine reports."""

    def peerOnline(nick: str, address: str) -> None:
        """A player we did not know is online."""

    def peerOffline(nick: str, why: str) -> None:
        """A player left the roster (silent, or replaced by newer nicks at its address)."""

    def peerLeft(nick: str) -> None:
        """A player said goodbye (MSG03): whatever we do with it ends."""


class IHandshakeLink(Interface):
    """Whom a handshake machine reports to."""

    def report(outcome: str, detail: str) -> None:
        """How the handshake goes: inviter outcomes are declined, timeout, failed, cancelled, connected and
        reconnecting; invitee outcomes expired, declined, busy, redeclined, timeout, cancelled and connected."""

    def finished() -> None:
        """The machine will never act again: forget it."""


class IInviterLink(IHandshakeLink):
    """What an inviter machine may do."""

    def sendInvite() -> None:
        """Send MSG04 to the invitee."""

    def sendAck() -> None:
        """Send MSG06 to the invitee."""

    def sendProbe() -> None:
        """Send MSG01 to the invitee alone: a MSG02 back shows that its listener reads datagrams."""

    def connect(port: int) -> Deferred[object]:
        """Open the match connection to the invitee's ``port``."""


class IInviteeLink(IHandshakeLink):
    """What an invitee machine may do."""

    def ask() -> None:
        """Ask the user (or apply the --accept policy); the answer comes as accept() or decline()."""

    def sendAnswer(port: int) -> None:
        """Send MSG05 ``ownnick|port``; port 0 refuses."""

    def listen() -> ListeningPort:
        """Open the TCP port for the inviter's one connection."""


class IMatchLink(Interface):
    """One match connection, as the coordinator sees it."""

    peerNick = Attribute("The opponent's nick.")
    isInvitee = Attribute("True on the invitee's side (it sends MSG07).")
    whenClosed = Attribute("A Deferred that fires once the connection is closed.")

    def send(message: wire.StreamMessage) -> None:
        """Write one match message."""

    def close() -> None:
        """Close, a moment after the last message."""

    def supersede() -> None:
        """The peer opened a newer port for this match: stay open, but ignore what arrives here."""


class IMatchHost(Interface):
    """Where a match connection asks for its machine, and reports its end."""

    def matchConnected(link: IMatchLink) -> Match | None:
        """A match connection is up: its started match machine, or None if refused."""

    def matchClosed(link: IMatchLink) -> None:
        """A match connection is closed."""

    def notice(text: str) -> None:
        """Tell the user something about a connection (a refused one, a malformed frame)."""
