"""The lobby: one JogoVelha peer's roster, handshakes and match, wired together.

Like magic-wormhole's Boss, the lobby owns the small machines and routes
between them and the network adapters; it holds no protocol rules of its
own beyond "who handles this message". It speaks to:

- the UDP adapter through ``sendDatagram(bytes, (host, port))``;
- TCP through a narrow L{TcpNetwork} (a real reactor, or an in-memory
  switchboard in tests);
- the user through a L{FrontEnd} (console, bot, or a test recorder);
- time through an injected ``IReactorTime``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar
from typing import Protocol as TypingProtocol

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import ClientFactory, Protocol, ServerFactory
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from velhanet.limits import AddressBuckets
from velhanet.sendnow import noDelay
from velhanet.velha import wire
from velhanet.velha.invite import (
    ANSWER_DELAY,
    Invitee,
    InviteeCore,
    InviteeMachine,
    Inviter,
    InviterCore,
    InviterMachine,
    ListeningPort,
)
from velhanet.velha.match import Match, MatchCore, MatchMachine, MatchObserver, MatchSettings
from velhanet.velha.roster import Roster

PROTOCOL_PORT = 20181
ANNOUNCE_EVERY = 180.0
"""MSG01 period; the text forbids less than 3 minutes."""
CLOSE_DELAY = 1.0
"""Seconds between the last message of a match and the closing of its connection."""
ANSWER_WINDOW = 15.0
"""Seconds a peer has to answer our MSG01 before it is dropped from the roster."""
INVITATIONS_PER_HOST = 2
"""Open invitations from one address; more are ignored (a peer invites one at a time)."""
OPEN_INVITATIONS = 32
"""Open invitations in all; more are ignored until some end."""
DATAGRAM_BURST = 200
"""Datagrams one address may send at once; past it, they are dropped before decoding."""
DATAGRAMS_PER_SECOND = 50.0
"""How fast an address earns back its burst. A peer sends a few datagrams a minute; the
conformance checker a few dozen in a second. A flood from one host then costs one
table lookup per datagram, and the legitimate peers' datagrams keep getting through."""


def sameHost(actual: str, expected: str) -> bool:
    """Is a TCP connection from ``actual`` the peer whose datagrams came from ``expected``?

    The addresses must match, with one exception on loopback: a peer whose
    datagrams come from 127.0.0.N may connect from 127.0.0.1.
    """
    if actual == expected:
        return True
    # A program on this machine that binds its UDP socket to 127.0.0.N but
    # not its TCP one connects from the kernel's default, 127.0.0.1.
    return expected.startswith("127.") and actual == "127.0.0.1"


class FrontEnd(MatchObserver, TypingProtocol):
    """Everything the lobby tells its user; a console, a bot or a test implements it."""

    def peerOnline(self, nick: str, address: str) -> None: ...

    def peerOffline(self, nick: str, why: str) -> None: ...

    def invitationReceived(self, nick: str) -> None:
        """Ask the user; the answer comes back as L{Lobby.answer}."""

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None: ...

    def matchStarted(self, opponent: str) -> None: ...


class TcpNetwork(TypingProtocol):
    """How the lobby opens its one listening port and makes its one connection."""

    def listen(self, factory: ServerFactory) -> ListeningPort: ...

    def connect(self, host: str, port: int, factory: ClientFactory) -> Deferred[object]: ...


class Tracer(TypingProtocol):
    def __call__(self, direction: str, channel: str, peer: str, raw: bytes, decoded: object) -> None: ...


def noTrace(direction: str, channel: str, peer: str, raw: bytes, decoded: object) -> None:
    """The default tracer: print nothing."""


class MatchProtocol(Protocol):
    """The TCP side of a match: decode frames, feed the match machine, write messages."""

    log = Logger()

    def __init__(self, lobby: Lobby, peerNick: str, isInvitee: bool) -> None:
        self.lobby = lobby
        self.peerNick = peerNick
        self.isInvitee = isInvitee
        self.decoder = wire.StreamDecoder()
        self.match: Match | None = None
        self.closing = False
        self.superseded = False
        """The peer opened a newer port for this match: this connection stays open, unused."""
        self.whenClosed: Deferred[None] = Deferred()
        self._closeCall: IDelayedCall | None = None

    def connectionMade(self) -> None:
        noDelay(self.transport)
        self.match = self.lobby.matchConnected(self)

    def send(self, message: wire.StreamMessage) -> None:
        raw = wire.encodeStream(message)
        self.lobby.trace("out", "tcp", self.peerNick, raw, message)
        assert self.transport is not None
        self.transport.write(raw)

    def close(self) -> None:
        """Close a moment after the last message: a peer (the original) that gets the end of the
        stream together with the last move may handle the end first and lose the move."""
        if not self.closing:
            self.closing = True
            self._closeCall = self.lobby.clock.callLater(CLOSE_DELAY, self._closeNow)

    def _closeNow(self) -> None:
        self._closeCall = None
        if self.transport is not None:
            self.transport.loseConnection()

    def dataReceived(self, data: bytes) -> None:
        for raw, item in self.decoder.feed(data):
            self.lobby.trace("in", "tcp", self.peerNick, raw, item)
            if isinstance(item, wire.MalformedMessage):
                self.log.warn("malformed TCP frame from {peer} dropped: {reason}", peer=self.peerNick, reason=str(item))
                self.lobby.frontEnd.notice(f"{self.peerNick} sent a malformed message, dropped: {item}")
                continue
            if self.superseded:
                self.log.info("{peer} sent {raw!r} on a superseded connection; ignored", peer=self.peerNick, raw=raw)
                continue
            if self.match is None or self.closing:
                continue
            if isinstance(item, wire.MatchStart):
                self.match.startReceived(item.who)
            elif isinstance(item, wire.Move):
                self.match.remoteMove(item.position)
            elif isinstance(item, wire.NewGame):
                self.match.remoteNewGame()
            else:
                self.match.remoteGiveUp()

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self._closeCall is not None and self._closeCall.active():
            self._closeCall.cancel()
        self._closeCall = None
        if self.match is not None:
            self.match.connectionLost(reason.getErrorMessage())
        self.lobby.matchClosed(self)
        self.whenClosed.callback(None)


class _MatchFactory(ServerFactory, ClientFactory):
    """Builds the one match protocol of a handshake; refuses any further connection.

    On the invitee's side only the inviter may connect: a connection from
    another address than the one its MSG04 came from is refused, and does
    not use up the handshake.
    """

    def __init__(self, lobby: Lobby, peerNick: str, isInvitee: bool, inviterHost: str | None = None) -> None:
        self.lobby, self.peerNick, self.isInvitee = lobby, peerNick, isInvitee
        self.inviterHost = inviterHost
        self.used = False

    def buildProtocol(self, addr: object) -> MatchProtocol | None:  # type: ignore[override]
        if self.used:
            return None
        host = str(getattr(addr, "host", ""))
        if self.inviterHost is not None and not sameHost(host, self.inviterHost):
            self.lobby.log.warn(
                "TCP connection from {host} refused: {nick}'s invitation came from {inviter}",
                host=host,
                nick=self.peerNick,
                inviter=self.inviterHost,
            )
            self.lobby.frontEnd.notice(
                f"refused a connection from {host} to the port opened for {self.peerNick} ({self.inviterHost})"
            )
            return None
        self.used = True
        return MatchProtocol(self.lobby, self.peerNick, self.isInvitee)


M = TypeVar("M", Inviter, Invitee)


@dataclass
class _Handshake(Generic[M]):
    """A handshake in progress, and whether it still makes us busy."""

    nick: str
    address: str
    machine: M
    active: bool = True
    refusedAsBusy: bool = False
    """Refused only because we were busy: a later copy is a new invitation once we are free."""


class Lobby:
    """One JogoVelha peer: discovery, invitations both ways, and at most one match."""

    log = Logger()

    def __init__(
        self,
        nick: str,
        *,
        clock: IReactorTime,
        sendDatagram: Callable[[bytes, tuple[str, int]], None],
        network: TcpNetwork,
        frontEnd: FrontEnd,
        announceTargets: Iterable[str] = ("255.255.255.255",),
        port: int = PROTOCOL_PORT,
        acceptPolicy: str = "ask",
        autoInvite: str | None = None,
        rng: random.Random | None = None,
        trace: Tracer = noTrace,
        settings: MatchSettings | None = None,
        answerDelay: float = ANSWER_DELAY,
    ) -> None:
        self.nick = wire.checkNick(nick)
        self.clock = clock
        self._sendDatagram = sendDatagram
        self.network = network
        self.frontEnd = frontEnd
        self.announceTargets = list(announceTargets)
        self.port = port
        if acceptPolicy not in ("ask", "always", "never"):
            raise ValueError(f"accept policy must be ask, always or never, not {acceptPolicy!r}")
        self.acceptPolicy = acceptPolicy
        self.autoInvite = autoInvite
        self.random = rng or random.Random()
        self.trace = trace
        self.settings = settings or MatchSettings()
        self.answerDelay = answerDelay
        self.roster = Roster()
        self.floods = AddressBuckets(DATAGRAM_BURST, DATAGRAMS_PER_SECOND * 60, clock, maxAddresses=1024)
        self.inviters: dict[str, _Handshake[Inviter]] = {}
        self.invitees: dict[str, _Handshake[Invitee]] = {}
        self.pendingQuestion: str | None = None
        self.matchProtocol: MatchProtocol | None = None
        self.supersededProtocols: list[MatchProtocol] = []
        self._answers: list[IDelayedCall] = []
        self._announcer: LoopingCall | None = None
        self._expiries: list[IDelayedCall] = []

    # -- life cycle ------------------------------------------------------------

    def start(self) -> None:
        """Say hello now and every 180 s (text MSG01)."""
        self._announcer = LoopingCall(self.announce)
        self._announcer.clock = self.clock
        self._announcer.start(ANNOUNCE_EVERY, now=True)

    def stop(self) -> Deferred[None] | None:
        """Leave: give up a running match (MSG10), withdraw handshakes, say goodbye (MSG03).

        Returns a Deferred that fires once the match connection is closed, so
        the MSG10 really leaves before the process exits.
        """
        if self._announcer is not None and self._announcer.running:
            self._announcer.stop()
        for call in self._expiries + self._answers:
            if call.active():
                call.cancel()
        self._expiries.clear()
        self._answers.clear()
        for inviter in list(self.inviters.values()):
            inviter.machine.cancel()
        for invitee in list(self.invitees.values()):
            invitee.machine.cancel()
        closing: Deferred[None] | None = None
        if self.matchProtocol is not None and self.matchProtocol.match is not None:
            closing = self.matchProtocol.whenClosed
            self.matchProtocol.match.localQuit()
        self._closeSuperseded()
        for target in self.announceTargets:
            self._send(wire.Goodbye(self.nick), target)
        return closing

    # -- discovery ---------------------------------------------------------------

    def announce(self) -> None:
        """Send MSG01 to every target and drop, 15 s later, whoever did not answer.

        Every player already known gets the MSG01 directly too: the original
        program listens on its unicast address and never hears a broadcast,
        so without it the roster would lose it after every announcement. Each
        player still gets one MSG01 per period (text: never less than 3 min).
        """
        probeTime = self.clock.seconds()
        targets = list(self.announceTargets)
        targets += [entry.address for entry in self.roster if entry.address not in targets]
        for target in targets:
            self._send(wire.Hello(self.nick), target)
        self._expiries = [call for call in self._expiries if call.active()]
        self._expiries.append(self.clock.callLater(ANSWER_WINDOW, self._expire, probeTime))

    def _expire(self, probeTime: float) -> None:
        for entry in self.roster.expire(probeTime):
            self.log.info("{nick} did not answer MSG01 within 15 s; dropped", nick=entry.nick)
            self.frontEnd.peerOffline(entry.nick, "did not answer MSG01 within 15 s")

    def _seen(self, nick: str, address: str) -> None:
        if self.roster.seen(nick, address, self.clock.seconds()):
            for gone in self.roster.trim(address):
                self.frontEnd.peerOffline(gone.nick, f"replaced: too many nicks from {gone.address}")
            self.log.info("{nick} is online at {address}", nick=nick, address=address)
            self.frontEnd.peerOnline(nick, address)
            if self.autoInvite is not None and nick.casefold() == self.autoInvite.casefold():
                self.autoInvite = None
                self.invite(nick)

    # -- datagrams in ----------------------------------------------------------

    def datagramReceived(self, data: bytes, host: str) -> None:
        """Decode and route one datagram; malformed ones are logged and dropped."""
        floods = self.floods
        if not floods.available(host):
            return  # logged once, when the address ran out (below)
        floods.fail(host)  # every datagram takes a token; an honest peer never runs out
        if not floods.available(host):
            self.log.warn(
                "{host} sent more than {burst} datagrams at {rate:.0f}/s: dropping its datagrams until it slows down",
                host=host,
                burst=DATAGRAM_BURST,
                rate=DATAGRAMS_PER_SECOND,
            )
        try:
            message = wire.decodeDatagram(data)
        except wire.MalformedMessage as error:
            self.trace("in", "udp", host, data, error)
            self.log.warn(
                "malformed datagram from {host} dropped: {reason} ({raw!r})",
                host=host,
                reason=str(error),
                raw=data[:80],
            )
            return
        if isinstance(message, wire.Hello | wire.Goodbye) and message.nick == self.nick:
            return  # our own broadcast, echoed back (we broadcast nothing else)
        self.trace("in", "udp", host, data, message)
        if isinstance(message, wire.Hello):
            self._seen(message.nick, host)
            self._send(wire.HelloReply(self.nick), host)
        elif isinstance(message, wire.HelloReply):
            self._seen(message.nick, host)
        elif isinstance(message, wire.Goodbye):
            self._goodbye(message.nick)
        elif isinstance(message, wire.Invite):
            self._seen(message.nick, host)
            self._invited(message.nick, host)
        elif isinstance(message, wire.InviteAnswer):
            self._answered(message, host)
        else:
            self._acknowledged(host)

    def _goodbye(self, nick: str) -> None:
        if self.roster.remove(nick) is not None:
            self.frontEnd.peerOffline(nick, "left (MSG03)")
        current = self.matchProtocol
        if current is not None and current.match is not None and current.peerNick.casefold() == nick.casefold():
            current.match.peerLeft()
        inviter, invitee = self.inviters.get(nick.casefold()), self.invitees.get(nick.casefold())
        if inviter is not None and inviter.active:
            inviter.machine.cancel()
        if invitee is not None and invitee.active:
            invitee.machine.cancel()

    def _invited(self, nick: str, host: str) -> None:
        key = nick.casefold()
        existing = self.invitees.get(key)
        if existing is None and not self._roomForInvitation(nick, host):
            return
        busy = self.busyForInvitations()
        if existing is not None and existing.refusedAsBusy and not busy:
            existing.machine.cancel()  # we are free now: this is a new invitation
            existing = None
        if existing is not None:
            existing.machine.repeatInvite()
            return
        machine = InviteeMachine(
            InviteeCore(
                clock=self.clock,
                ask=lambda: self._ask(nick),
                sendAnswer=lambda port: self._send(wire.InviteAnswer(self.nick, port), host),
                listen=lambda: self.network.listen(_MatchFactory(self, nick, isInvitee=True, inviterHost=host)),
                report=lambda outcome, detail: self._handshakeReport(self.invitees, nick, outcome, detail),
                finished=lambda: self._handshakeFinished(self.invitees, nick, machine),
            )
        )
        self.invitees[key] = _Handshake(nick, host, machine, refusedAsBusy=busy)
        if busy:
            self.log.info("busy: refusing {nick}'s invitation", nick=nick)
            machine.invitedWhileBusy()
        else:
            machine.invited()

    def _roomForInvitation(self, nick: str, host: str) -> bool:
        """Bound the invitations, per address and in all: a storm of MSG04 cannot fill memory or ports.

        Finished ones count too while they linger (a refusal is sent three
        times): a forged storm cannot make us send more than that.
        """
        open = list(self.invitees.values())
        fromHost = sum(h.address == host for h in open)
        if fromHost >= INVITATIONS_PER_HOST or len(open) >= OPEN_INVITATIONS:
            self.log.warn(
                "MSG04 from {nick} at {host} ignored: {fromHost} invitations from that address, {total} in all",
                nick=nick,
                host=host,
                fromHost=fromHost,
                total=len(open),
            )
            return False
        return True

    def _ask(self, nick: str) -> None:
        if self.acceptPolicy == "ask":
            self.pendingQuestion = nick
            self.frontEnd.invitationReceived(nick)
            return
        # Decide after the current input has finished (no re-entrant inputs);
        # an acceptance waits answerDelay (a refusal waits in its machine).
        accept = self.acceptPolicy == "always"
        self._answers = [call for call in self._answers if call.active()]
        self._answers.append(self.clock.callLater(self.answerDelay if accept else 0, self.answer, accept, nick))

    def _answered(self, message: wire.InviteAnswer, host: str) -> None:
        handshake = self.inviters.get(message.nick.casefold())
        if handshake is None and message.nick.casefold() == self.nick.casefold():
            # The original program refuses a busy invitation with the
            # *inviter's* nick (ours); the address tells whose answer it is.
            handshake = next((h for h in self.inviters.values() if h.address == host), None)
            if handshake is not None and not message.accepted:
                self.frontEnd.notice(
                    f"{handshake.nick}'s refusal carried our nick instead of its own (the original program"
                    " does this when it is busy)"
                )
        if handshake is None:
            self.log.info("MSG05 from {nick} that no invitation waits for; ignored", nick=message.nick)
            return
        if handshake.address != host:
            self.log.info(
                "MSG05 from {nick} came from {host}, not {expected}",
                nick=message.nick,
                host=host,
                expected=handshake.address,
            )
        if message.accepted:
            handshake.machine.accepted(message.port)
        else:
            handshake.machine.declined()

    def _acknowledged(self, host: str) -> None:
        for handshake in self.invitees.values():
            if handshake.address == host:
                handshake.machine.acknowledged()
                return
        self.log.info("MSG06 from {host} that no answer waits for; ignored", host=host)

    # -- user commands ---------------------------------------------------------------

    def busy(self) -> bool:
        """In a match, or in a handshake that has not finished (we cannot invite anyone now)."""
        return self.matchProtocol is not None or any(
            h.active for table in (self.inviters, self.invitees) for h in table.values()
        )

    def busyForInvitations(self) -> bool:
        """In a match, or inviting someone ourselves: an invitation is refused at once.

        Other open invitations do not count: several may be open at once (a
        storm of forged MSG04 must not make us refuse a real one), and the
        first inviter that connects gets the match; the others are then
        declined or withdrawn.
        """
        return self.matchProtocol is not None or any(h.active for h in self.inviters.values())

    def invite(self, nick: str) -> str | None:
        """Invite ``nick``; a reason if that cannot be done now."""
        entry = self.roster.get(nick)
        if entry is None:
            return f"{nick} is not online (type 'who' to see who is)"
        if self.busy():
            return "you are already playing or inviting"
        key = entry.nick.casefold()
        if key in self.inviters:
            # Only a lingering, finished handshake can be left here (busy()
            # said no active one): its late-duplicate duty ends now.
            self.inviters[key].machine.cancel()
        peerNick, address = entry.nick, entry.address
        machine = InviterMachine(
            InviterCore(
                clock=self.clock,
                sendInvite=lambda: self._send(wire.Invite(self.nick), address),
                sendAck=lambda: self._send(wire.InviteAck(), address),
                connect=lambda port: self.network.connect(address, port, _MatchFactory(self, peerNick, False)),
                report=lambda outcome, detail: self._handshakeReport(self.inviters, peerNick, outcome, detail),
                finished=lambda: self._handshakeFinished(self.inviters, peerNick, machine),
            )
        )
        self.inviters[key] = _Handshake(peerNick, address, machine)
        machine.start()
        return None

    def answer(self, accept: bool, nick: str | None = None) -> str | None:
        """The user's yes/no to the pending (or the named) invitation."""
        nick = nick or self.pendingQuestion
        if nick is None:
            return "nobody has invited you"
        handshake = self.invitees.get(nick.casefold())
        if handshake is None or not handshake.active:
            return f"the invitation from {nick} is no longer open"
        if nick == self.pendingQuestion:
            self.pendingQuestion = None
        if accept:
            handshake.machine.accept()
        else:
            handshake.machine.decline()
        return None

    def play(self, position: int) -> str | None:
        if self.matchProtocol is None or self.matchProtocol.match is None:
            return "no match is running"
        self.matchProtocol.match.localMove(position)
        return None

    def quitMatch(self) -> str | None:
        if self.matchProtocol is None or self.matchProtocol.match is None:
            return "no match is running"
        self.matchProtocol.match.localQuit()
        return None

    # -- handshake and match plumbing ------------------------------------------------

    def _handshakeReport(
        self,
        table: dict[str, _Handshake[Inviter]] | dict[str, _Handshake[Invitee]],
        nick: str,
        outcome: str,
        detail: str,
    ) -> None:
        handshake = table.get(nick.casefold())
        if handshake is not None:
            handshake.active = False
        if nick == self.pendingQuestion and outcome != "connected":
            self.pendingQuestion = None
        self.log.info("invitation with {nick}: {outcome} ({detail})", nick=nick, outcome=outcome, detail=detail)
        self.frontEnd.inviteUpdate(nick, outcome, detail)

    def _handshakeFinished(
        self,
        table: dict[str, _Handshake[Inviter]] | dict[str, _Handshake[Invitee]],
        nick: str,
        machine: Inviter | Invitee,
    ) -> None:
        """Forget a finished handshake (only that one: a newer one may have the same nick)."""
        handshake = table.get(nick.casefold())
        if handshake is not None and handshake.machine is machine:
            del table[nick.casefold()]

    def matchConnected(self, protocol: MatchProtocol) -> Match | None:
        """A match connection is up (either side); refuse it if one already runs.

        One exception: our connection to a newer port of the same invitee,
        while the current match still waits for MSG07 — the original program
        waits on the newest port it opened. The older connection is kept
        open (closing it would end the match on the original's side) until
        the match ends.
        """
        current = self.matchProtocol
        if current is not None:
            replaces = (
                not protocol.isInvitee
                and not current.isInvitee
                and current.peerNick == protocol.peerNick
                and current.match is not None
                and current.match.supersede()
            )
            if not replaces:
                self.log.warn("second match connection from {peer} refused", peer=protocol.peerNick)
                protocol.close()
                return None
            current.superseded = True
            self.supersededProtocols.append(current)
            self.frontEnd.notice(f"{protocol.peerNick} opened a new port for the match; playing there")
        self.matchProtocol = protocol
        match = MatchMachine(
            MatchCore(
                isInvitee=protocol.isInvitee,
                send=protocol.send,
                close=protocol.close,
                observer=self.frontEnd,
                peerNick=protocol.peerNick,
                clock=self.clock,
                settings=self.settings,
                random=self.random,
            )
        )
        protocol.match = match
        if current is None:
            self.frontEnd.matchStarted(protocol.peerNick)
        if protocol.isInvitee:
            handshake = self.invitees.get(protocol.peerNick.casefold())
            if handshake is not None:
                handshake.machine.connected()
            self._endOtherInvitations(protocol.peerNick)
            match.begin()
        else:
            match.awaitStart()
        return match

    def _endOtherInvitations(self, opponent: str) -> None:
        """A match began: decline the invitations still asked about, withdraw the accepted ones."""
        for handshake in list(self.invitees.values()):
            if handshake.active and handshake.nick.casefold() != opponent.casefold():
                if self.pendingQuestion == handshake.nick:
                    self.pendingQuestion = None
                handshake.machine.matchElsewhere()

    def matchClosed(self, protocol: MatchProtocol) -> None:
        if self.matchProtocol is protocol:
            self.matchProtocol = None
            self._closeSuperseded()
        elif protocol in self.supersededProtocols:
            self.supersededProtocols.remove(protocol)

    def _closeSuperseded(self) -> None:
        """The match is over: the older connections it kept open can go."""
        for protocol in list(self.supersededProtocols):
            protocol.close()

    def _send(self, message: wire.DatagramMessage, host: str) -> None:
        raw = wire.encode(message)
        self.trace("out", "udp", host, raw, message)
        self._sendDatagram(raw, (host, self.port))
