"""One JogoVelha peer's coordinator, wiring discovery, the lobby's handshakes and the match.

Like magic-wormhole's Boss, the peer builds the small machines and network
adapters once and wires each to its neighbours through one narrow
interface (``interfaces.py``); it holds no protocol rules of its own beyond
"who gets this". The parts:

- ``protocol.VelhaDatagramProtocol`` decodes datagrams and calls the
  peer's L{IDatagramReceiver} methods; everything we send leaves through
  it (L{IDatagramSender});
- ``presence.PresenceMachine`` keeps the roster (MSG01/02/03) and reports
  to the peer's L{IPresenceListener} methods;
- ``lobby.Lobby`` holds the inviter and invitee machines and the
  rules that route MSG04/05/06 to them;
- ``protocol.MatchConnections`` opens match connections, whose factory asks
  the peer (L{IMatchHost}) for the match machine and hands it to the
  protocol. The peer keeps that machine for the user's moves.

It speaks to the user through a L{FrontEnd} (console, bot, or a test
recorder) and to time through an injected ``IReactorTime``.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable, Iterable

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

from velhanet.i18n import _
from velhanet.tracing import Tracer, noTrace
from velhanet.velha import wire
from velhanet.velha.interfaces import IDatagramReceiver, IMatchHost, IMatchLink, IPresenceListener
from velhanet.velha.invite import ANSWER_DELAY
from velhanet.velha.lobby import InviteeHandshake, InviterHandshake, Lobby
from velhanet.velha.presence import SILENT, Presence, PresenceCore, PresenceMachine
from velhanet.velha.protocol import (
    PROTOCOL_PORT,
    MatchConnections,
    TcpNetwork,
    VelhaDatagramProtocol,
)
from velhanet.velha.room import Match, MatchCore, MatchMachine, MatchObserver, MatchSettings
from velhanet.velha.roster import Roster
from velhanet.velha.spectated import SpectatedMatch
from velhanet.watching import NO_WATCHER, GameWatcher


class FrontEnd(MatchObserver, typing.Protocol):
    """Everything the peer tells its user; a console, a bot or a test implements it."""

    def peerOnline(self, nick: str, address: str) -> None: ...

    def peerOffline(self, nick: str, why: str) -> None: ...

    def invitationReceived(self, nick: str) -> None:
        """Ask the user; the answer comes back as L{Peer.answer}."""

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None: ...

    def matchStarted(self, opponent: str) -> None: ...


@implementer(IDatagramReceiver, IPresenceListener, IMatchHost)
class Peer:
    """One JogoVelha peer: discovery, invitations both ways, and at most one match."""

    log = Logger()
    watcher: GameWatcher = NO_WATCHER
    """Where the match's games are reported for the spectators' site (the service sets it for ``--web``)."""

    def __init__(
        self,
        nick: str,
        *,
        clock: IReactorTime,
        network: TcpNetwork,
        frontEnd: FrontEnd,
        sendDatagram: Callable[[bytes, tuple[str, int]], None] | None = None,
        announceTargets: Iterable[str] = ("255.255.255.255",),
        port: int = PROTOCOL_PORT,
        acceptPolicy: str = "ask",
        autoInvite: str | None = None,
        rng: random.Random | None = None,
        traceDatagrams: Tracer = noTrace,
        traceMatch: Tracer = noTrace,
        settings: MatchSettings | None = None,
        answerDelay: float = ANSWER_DELAY,
    ) -> None:
        self.nick = wire.checkNick(nick)
        self.clock = clock
        self._frontEnd = frontEnd
        self.autoInvite = autoInvite
        self.random = rng or random.Random()
        self.settings = settings or MatchSettings()
        self.roster = Roster()
        self.datagrams = VelhaDatagramProtocol(self.nick, self, clock, port, sendDatagram, traceDatagrams)
        self.connections = MatchConnections(network, self, clock, traceMatch)
        self.presence: Presence = PresenceMachine(
            PresenceCore(self.nick, clock, self.datagrams, self, list(announceTargets), self.roster)
        )
        self.lobby = Lobby(
            self.nick,
            clock=clock,
            datagrams=self.datagrams,
            connections=self.connections,
            frontEnd=frontEnd,
            acceptPolicy=acceptPolicy,
            answerDelay=answerDelay,
        )
        self.inviters: dict[str, InviterHandshake] = self.lobby.inviters
        self.invitees: dict[str, InviteeHandshake] = self.lobby.invitees
        self.matchProtocol: IMatchLink | None = None
        """The connection of the running match."""
        self.match: Match | None = None
        """The running match's machine: the user's moves go here."""
        self.supersededProtocols: list[IMatchLink] = []

    # -- what the parts share with the user and the tests ------------------------------

    @property
    def frontEnd(self) -> FrontEnd:
        return self._frontEnd

    @frontEnd.setter
    def frontEnd(self, frontEnd: FrontEnd) -> None:
        self._frontEnd = self.lobby.frontEnd = frontEnd

    @property
    def acceptPolicy(self) -> str:
        return self.lobby.acceptPolicy

    @acceptPolicy.setter
    def acceptPolicy(self, policy: str) -> None:
        self.lobby.acceptPolicy = policy

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Say hello now and every 180 s (text MSG01)."""
        self.presence.start()

    def stop(self) -> Deferred[None] | None:
        """Leave: give up a running match (MSG10), withdraw handshakes, say goodbye (MSG03).

        Returns a Deferred that fires once the match connection is closed, so
        the MSG10 really leaves before the process exits.
        """
        self.lobby.stop()
        closing: Deferred[None] | None = None
        if self.matchProtocol is not None and self.match is not None:
            closing = self.matchProtocol.whenClosed
            self.match.localQuit()
        self._closeSuperseded()
        self.presence.stop()
        return closing

    # -- IDatagramReceiver: one decoded datagram each ---------------------------------------

    def hello(self, nick: str, host: str) -> None:
        self.presence.hello(nick, host)

    def helloReply(self, nick: str, host: str) -> None:
        self.presence.heard(nick, host)
        self.lobby.listenerAnswered(host)

    def goodbye(self, nick: str) -> None:
        self.presence.goodbye(nick)

    def invited(self, nick: str, host: str) -> None:
        self.presence.heard(nick, host)
        self.lobby.invited(nick, host)

    def answered(self, message: wire.InviteAnswer, host: str) -> None:
        self.lobby.answered(message, host)

    def acknowledged(self, host: str) -> None:
        self.lobby.acknowledged(host)

    # -- IPresenceListener -------------------------------------------------------------

    def peerOnline(self, nick: str, address: str) -> None:
        self.log.info(_("{nick} is online at {address}"), nick=nick, address=address)
        self.frontEnd.peerOnline(nick, address)
        if self.autoInvite is not None and nick.casefold() == self.autoInvite.casefold():
            self.autoInvite = None
            self.invite(nick)

    def peerOffline(self, nick: str, why: str) -> None:
        if why == _(SILENT):
            self.log.info(_("{nick} did not answer MSG01 within 15 s; dropped"), nick=nick)
        self.frontEnd.peerOffline(nick, why)

    def peerLeft(self, nick: str) -> None:
        link = self.matchProtocol
        if self.match is not None and link is not None and link.peerNick.casefold() == nick.casefold():
            self.match.peerLeft()
        self.lobby.peerLeft(nick)

    # -- user commands ------------------------------------------------------------------

    def busy(self) -> bool:
        """In a match, or in a handshake that has not finished (we cannot invite anyone now)."""
        return self.lobby.busy()

    def invite(self, nick: str) -> str | None:
        """Invite ``nick``; a reason if that cannot be done now."""
        entry = self.roster.get(nick)
        if entry is None:
            return _("{nick} is not online (type 'who' to see who is)").format(nick=nick)
        if self.busy():
            return _("you are already playing or inviting")
        self.lobby.invite(entry.nick, entry.address)
        return None

    def answer(self, accept: bool, nick: str | None = None) -> str | None:
        """The user's yes/no to the pending (or the named) invitation."""
        return self.lobby.answer(accept, nick)

    def play(self, position: int) -> str | None:
        if self.match is None:
            return _("no match is running")
        self.match.localMove(position)
        return None

    def quitMatch(self) -> str | None:
        if self.match is None:
            return _("no match is running")
        self.match.localQuit()
        return None

    # -- IMatchHost ----------------------------------------------------------------------

    def matchConnected(self, link: IMatchLink) -> Match | None:
        """A match connection is up (either side): its machine, started; None if one already runs.

        One exception: our connection to a newer port of the same invitee,
        while the current match still waits for MSG07 — the original program
        waits on the newest port it opened. The older connection is kept
        open (closing it would end the match on the original's side) until
        the match ends.
        """
        current, currentMatch = self.matchProtocol, self.match
        if current is not None:
            replaces = (
                not link.isInvitee
                and not current.isInvitee
                and current.peerNick == link.peerNick
                and currentMatch is not None
                and currentMatch.supersede()
            )
            if not replaces:
                self.log.warn(_("second match connection from {peer} refused"), peer=link.peerNick)
                link.close()
                return None
            current.supersede()
            self.supersededProtocols.append(current)
            self.frontEnd.notice(_("{peer} opened a new port for the match; playing there").format(peer=link.peerNick))
        match = MatchMachine(
            MatchCore(
                isInvitee=link.isInvitee,
                send=link.send,
                close=link.close,
                observer=self.frontEnd
                if self.watcher is NO_WATCHER
                else SpectatedMatch(self.frontEnd, self.watcher, self.nick, link.peerNick),
                peerNick=link.peerNick,
                clock=self.clock,
                settings=self.settings,
                random=self.random,
            )
        )
        self.matchProtocol, self.match = link, match
        self.lobby.inMatch = True
        if current is None:
            self.frontEnd.matchStarted(link.peerNick)
        self.lobby.matchBegan(link.peerNick, asInvitee=link.isInvitee)
        if link.isInvitee:
            match.begin()
        else:
            match.awaitStart()
        return match

    def matchClosed(self, link: IMatchLink) -> None:
        if self.matchProtocol is link:
            self.matchProtocol = self.match = None
            self.lobby.inMatch = False
            self._closeSuperseded()
        elif link in self.supersededProtocols:
            self.supersededProtocols.remove(link)

    def notice(self, text: str) -> None:
        self.frontEnd.notice(text)

    def _closeSuperseded(self) -> None:
        """The match is over: the older connections it kept open can go."""
        for link in list(self.supersededProtocols):
            link.close()
