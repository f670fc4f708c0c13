"""The lobby of a JogoVelha peer: every invitation in progress, ours and theirs, and their rules.

One table per direction, keyed by case-folded nick. The rules that decide
which invitee or inviter machine an invitation datagram goes to live here:
how many invitations one address and all of them may hold open, when a
repeated MSG04 is a new invitation, whose MSG05 an answer is, and when we
are busy. Each entry is the link its machine acts through
(L{IInviterLink}/L{IInviteeLink}): it sends datagrams, opens the match
connection, and reports back here. No sockets: datagrams leave through an
L{IDatagramSender}, connections through L{MatchOpener}.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from zope.interface import implementer

from velhanet.i18n import _
from velhanet.velha import wire
from velhanet.velha.interfaces import IDatagramSender, IInviteeLink, IInviterLink
from velhanet.velha.invite import ANSWER_DELAY, ListeningPort, cancelCall
from velhanet.velha.invitee import Invitee, InviteeCore, InviteeMachine
from velhanet.velha.inviter import Inviter, InviterCore, InviterMachine

INVITATIONS_PER_HOST = 2
"""Open invitations from one address; more are ignored (a peer invites one at a time)."""
OPEN_INVITATIONS = 32
"""Open invitations in all; more are ignored until some end."""


class MatchOpener(typing.Protocol):
    """How a handshake opens its match connection (``protocol.MatchConnections``, or a fake)."""

    def listenFor(self, peerNick: str, inviterHost: str) -> ListeningPort: ...

    def connectTo(self, host: str, port: int, peerNick: str) -> Deferred[object]: ...


class InvitationsFrontEnd(typing.Protocol):
    """What the tables tell the user."""

    def invitationReceived(self, nick: str) -> None: ...

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None: ...

    def notice(self, text: str) -> None: ...


@dataclass(eq=False)
class _Handshake:
    """One handshake in its table, and whether it still makes us busy."""

    table: Lobby
    nick: str
    address: str
    active: bool = True

    def report(self, outcome: str, detail: str) -> None:
        self.active = False
        self.table.reported(self.nick, outcome, detail)

    def finished(self) -> None:
        """Forget this handshake (only this one: a newer one may have the same nick), and its machine: the
        machine's core holds this link, so keeping the machine would be a cycle the collector must free."""
        table = self.table.tableOf(self)
        if table.get(self.nick.casefold()) is self:
            del table[self.nick.casefold()]
        vars(self).pop("machine", None)


@implementer(IInviterLink)
@dataclass(eq=False)
class InviterHandshake(_Handshake):
    machine: Inviter = field(init=False)

    def sendInvite(self) -> None:
        self.table.datagrams.send(wire.Invite(self.table.nick), self.address)

    def sendAck(self) -> None:
        self.table.datagrams.send(wire.InviteAck(), self.address)

    def sendProbe(self) -> None:
        self.table.datagrams.send(wire.Hello(self.table.nick), self.address)

    def connect(self, port: int) -> Deferred[object]:
        return self.table.connections.connectTo(self.address, port, self.nick)


@implementer(IInviteeLink)
@dataclass(eq=False)
class InviteeHandshake(_Handshake):
    machine: Invitee = field(init=False)
    refusedAsBusy: bool = False
    """Refused only because we were busy: a later copy is a new invitation once we are free."""

    def ask(self) -> None:
        self.table.ask(self.nick)

    def sendAnswer(self, port: int) -> None:
        self.table.datagrams.send(wire.InviteAnswer(self.table.nick, port), self.address)

    def listen(self) -> ListeningPort:
        return self.table.connections.listenFor(self.nick, self.address)


class Lobby:
    """Both handshake tables of one peer, and the rules that route MSG04/05/06 to their machines."""

    log = Logger()

    def __init__(
        self,
        nick: str,
        *,
        clock: IReactorTime,
        datagrams: IDatagramSender,
        connections: MatchOpener,
        frontEnd: InvitationsFrontEnd,
        acceptPolicy: str = "ask",
        answerDelay: float = ANSWER_DELAY,
    ) -> None:
        if acceptPolicy not in ("ask", "always", "never"):
            raise ValueError(
                _("accept policy must be ask, always or never, not {policy!r}").format(policy=acceptPolicy)
            )
        self.nick, self.clock, self.datagrams, self.connections = nick, clock, datagrams, connections
        self.frontEnd, self.acceptPolicy, self.answerDelay = frontEnd, acceptPolicy, answerDelay
        self.inviters: dict[str, InviterHandshake] = {}
        self.invitees: dict[str, InviteeHandshake] = {}
        self.pendingQuestion: str | None = None
        self.inMatch = False
        """Set by the coordinator while a match runs."""
        self._answers: list[IDelayedCall] = []

    def tableOf(self, handshake: _Handshake) -> dict[str, InviterHandshake] | dict[str, InviteeHandshake]:
        return self.inviters if isinstance(handshake, InviterHandshake) else self.invitees

    # -- busy ----------------------------------------------------------------------

    def busy(self) -> bool:
        """In a match, or in a handshake that has not finished (we cannot invite anyone now)."""
        return self.inMatch or any(h.active for table in (self.inviters, self.invitees) for h in table.values())

    def busyForInvitations(self) -> bool:
        """In a match, or inviting someone ourselves: an invitation is refused at once.

        Other open invitations do not count: several may be open at once (a
        storm of forged MSG04 must not make us refuse a real one), and the
        first inviter that connects gets the match; the others are then
        declined or withdrawn.
        """
        return self.inMatch or any(h.active for h in self.inviters.values())

    # -- datagrams in ----------------------------------------------------------------

    def invited(self, nick: str, host: str) -> None:
        """MSG04: a new invitation, a copy of an open one, or one too many."""
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
        handshake = InviteeHandshake(self, nick, host, refusedAsBusy=busy)
        handshake.machine = InviteeMachine(InviteeCore(self.clock, handshake))
        self.invitees[key] = handshake
        if busy:
            self.log.info(_("busy: refusing {nick}'s invitation"), nick=nick)
            handshake.machine.invitedWhileBusy()
        else:
            handshake.machine.invited()

    def _roomForInvitation(self, nick: str, host: str) -> bool:
        """Bound the invitations, per address and in all: a storm of MSG04 cannot fill memory or ports.

        Finished ones count too while they linger (a refusal is sent three
        times): a forged storm cannot make us send more than that.
        """
        open = list(self.invitees.values())
        fromHost = sum(h.address == host for h in open)
        if fromHost >= INVITATIONS_PER_HOST or len(open) >= OPEN_INVITATIONS:
            self.log.warn(
                _("MSG04 from {nick} at {host} ignored: {fromHost} invitations from that address, {total} in all"),
                nick=nick,
                host=host,
                fromHost=fromHost,
                total=len(open),
            )
            return False
        return True

    def answered(self, message: wire.InviteAnswer, host: str) -> None:
        """MSG05: to the inviter machine waiting for it."""
        handshake = self.inviters.get(message.nick.casefold())
        if handshake is None and message.nick.casefold() == self.nick.casefold():
            # The original program refuses a busy invitation with the
            # *inviter's* nick (ours); the address tells whose answer it is.
            handshake = next((h for h in self.inviters.values() if h.address == host), None)
            if handshake is not None and not message.accepted:
                text = _(
                    "{nick}'s refusal carried our nick instead of its own (the original program does this when it"
                    " is busy)"
                )
                self.frontEnd.notice(text.format(nick=handshake.nick))
        if handshake is None:
            self.log.info(_("MSG05 from {nick} that no invitation waits for; ignored"), nick=message.nick)
            return
        if handshake.address != host:
            self.log.info(
                _("MSG05 from {nick} came from {host}, not {expected}"),
                nick=message.nick,
                host=host,
                expected=handshake.address,
            )
        if message.accepted:
            handshake.machine.accepted(message.port)
        else:
            handshake.machine.declined()

    def listenerAnswered(self, host: str) -> None:
        """MSG02: the listener at ``host`` reads datagrams; an inviter waiting on it may send a copy."""
        for handshake in self.inviters.values():
            if handshake.address == host:
                handshake.machine.listenerAnswered()

    def acknowledged(self, host: str) -> None:
        """MSG06: to the invitee machine of that address."""
        for handshake in self.invitees.values():
            if handshake.address == host:
                handshake.machine.acknowledged()
                return
        self.log.info(_("MSG06 from {host} that no answer waits for; ignored"), host=host)

    # -- the user ----------------------------------------------------------------------

    def invite(self, nick: str, address: str) -> None:
        """Start inviting ``nick`` at ``address`` (the coordinator checked that we may)."""
        key = nick.casefold()
        if key in self.inviters:
            # Only a lingering, finished handshake can be left here (busy()
            # said no active one): its late-duplicate duty ends now.
            self.inviters[key].machine.cancel()
        handshake = InviterHandshake(self, nick, address)
        handshake.machine = InviterMachine(InviterCore(self.clock, handshake))
        self.inviters[key] = handshake
        handshake.machine.start()

    def ask(self, nick: str) -> None:
        """An invitee machine asks: the user, or the policy."""
        if self.acceptPolicy == "ask":
            self.pendingQuestion = nick
            self.frontEnd.invitationReceived(nick)
            return
        # Decide after the current input has finished (no re-entrant inputs);
        # an acceptance waits answerDelay (a refusal waits in its machine).
        accept = self.acceptPolicy == "always"
        self._answers = [call for call in self._answers if call.active()]
        self._answers.append(self.clock.callLater(self.answerDelay if accept else 0, self.answer, accept, nick))

    def answer(self, accept: bool, nick: str | None = None) -> str | None:
        """The user's yes/no to the pending (or the named) invitation; a reason if there is none."""
        nick = nick or self.pendingQuestion
        if nick is None:
            return _("nobody has invited you")
        handshake = self.invitees.get(nick.casefold())
        if handshake is None or not handshake.active:
            return _("the invitation from {nick} is no longer open").format(nick=nick)
        if nick == self.pendingQuestion:
            self.pendingQuestion = None
        if accept:
            handshake.machine.accept()
        else:
            handshake.machine.decline()
        return None

    def reported(self, nick: str, outcome: str, detail: str) -> None:
        if nick == self.pendingQuestion and outcome != "connected":
            self.pendingQuestion = None
        self.log.info(_("invitation with {nick}: {outcome} ({detail})"), nick=nick, outcome=outcome, detail=detail)
        self.frontEnd.inviteUpdate(nick, outcome, detail)

    # -- the match and the peer's presence -------------------------------------------------

    def matchBegan(self, opponent: str, asInvitee: bool) -> None:
        """Our match connection is up: the invitee's handshake is done; the other invitations end."""
        if not asInvitee:
            return
        handshake = self.invitees.get(opponent.casefold())
        if handshake is not None:
            handshake.machine.connected()
        for other in list(self.invitees.values()):
            if other.active and other.nick.casefold() != opponent.casefold():
                if self.pendingQuestion == other.nick:
                    self.pendingQuestion = None
                other.machine.matchElsewhere()

    def peerLeft(self, nick: str) -> None:
        """MSG03: withdraw whatever handshake is open with ``nick``."""
        inviter, invitee = self.inviters.get(nick.casefold()), self.invitees.get(nick.casefold())
        if inviter is not None and inviter.active:
            inviter.machine.cancel()
        if invitee is not None and invitee.active:
            invitee.machine.cancel()

    def stop(self) -> None:
        """Withdraw every handshake and pending automatic answer."""
        for call in self._answers:
            cancelCall(call)
        self._answers.clear()
        for inviter in list(self.inviters.values()):
            inviter.machine.cancel()
        for invitee in list(self.invitees.values()):
            invitee.machine.cancel()
