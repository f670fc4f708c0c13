"""The invitation handshake (MSG04/05/06): one small machine per side.

UDP loses, repeats and reorders datagrams, so both machines resend what
the other side may have missed and absorb what arrives twice:

- the **inviter** sends MSG04, and once more after 15 s if no MSG05 has come
  (the original program opens one modal dialog per MSG04 it receives, so a
  person gets 15 s to answer before a second dialog appears); an accepting
  MSG05 is answered with MSG06 and, 0.2 s later, one TCP connection (the
  original needs a moment after its MSG05 before it can take a connection);
  a repeated MSG05 gets MSG06 again, never a second connection, unless it
  names a *new* port: the original opens a new port for every invitation
  dialog its user accepts and waits on the newest, so velhanet connects there
  too and the lobby lets the newer connection take over the match;
- the **invitee** asks its user (or its policy), then either refuses with
  ``nick|0`` or opens a TCP port and sends ``nick|port``, resending it every
  2 s until MSG06 or the inviter's connection arrives; after 30 s without a
  connection it closes the port and gives up. No answer leaves sooner than
  0.5 s after the invitation (an instant refusal is lost on the original,
  which sends MSG04 before it starts waiting for the answer); a refusal is
  sent three times, 2 s apart, unless MSG06 confirms it.

Each machine holds its timers as state data, so every transition out of a
waiting state cancels them, and no path leaves a delayed call or a listening
port behind; a connection attempt cancelled half way is absorbed. The
machines know nothing of sockets: a core of callables sends datagrams, opens
ports and connects (``velhanet.velha.lobby`` provides it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.python.failure import Failure

INVITE_WINDOW = 30.0
"""Seconds an inviter waits for MSG05, and an invitee for the TCP connection."""

INVITE_RESEND = 15.0
"""Seconds after which MSG04 is sent once more if no MSG05 came."""

INVITE_COPIES = 2
"""Copies of MSG04 per invitation."""

CONNECT_DELAY = 0.2
"""Seconds between MSG06 and the TCP connection to the invitee."""

ANSWER_DELAY = 0.5
"""Least time between an invitation and an automatic answer to it."""

ANSWER_RESEND = 2.0
"""Seconds between copies of MSG05 (accepting: until MSG06 or the connection; refusing: 3 copies)."""

REFUSAL_COPIES = 3
"""Copies of a refusing MSG05 when no MSG06 confirms it."""

LINGER = 30.0
"""Seconds a finished handshake keeps answering late duplicates (MSG05, MSG04)."""


class ListeningPort(Protocol):
    """The invitee's TCP port, opened for the inviter's one connection."""

    @property
    def portNumber(self) -> int: ...

    def close(self) -> None: ...


# -- inviter -------------------------------------------------------------


class Inviter(Protocol):
    def start(self) -> None:
        "The user invites the peer: send MSG04."

    def accepted(self, port: int) -> None:
        "MSG05 with a port arrived."

    def declined(self) -> None:
        "MSG05 with port 0 arrived."

    def connected(self) -> None:
        "Our TCP connection to the invitee is up; the match takes over."

    def connectFailed(self, reason: str) -> None:
        "The TCP connection could not be made."

    def cancel(self) -> None:
        "The user or the service gives up the invitation."

    def _resendInvite(self) -> None:
        "private: time to send MSG04 again."

    def _windowClosed(self) -> None:
        "private: 30 s without an answer."

    def _connectNow(self) -> None:
        "private: the pause after MSG06 is over: connect."

    def _lingerOver(self) -> None:
        "private: no more late duplicates expected."


@dataclass
class InviterCore:
    """What the inviter machine may do, and what it reports."""

    clock: IReactorTime
    sendInvite: Callable[[], None]
    sendAck: Callable[[], None]
    connect: Callable[[int], Deferred[object]]
    report: Callable[[str, str], None]
    """``report(outcome, detail)``: "declined", "timeout", "failed", "cancelled", "connected", "reconnecting"."""
    finished: Callable[[], None]
    """Called once, when the machine will never act again (the lobby forgets it)."""
    window: float = INVITE_WINDOW
    resendEvery: float = INVITE_RESEND
    copies: int = INVITE_COPIES
    connectDelay: float = CONNECT_DELAY
    linger: float = LINGER
    port: int = 0
    """The invitee's port we connect (or connected) to: the newest one it named."""


def _cancelCall(call: IDelayedCall | None) -> None:
    if call is not None and call.active():
        call.cancel()


@dataclass
class _Waiting:
    resend: IDelayedCall | None
    window: IDelayedCall
    sent: int = 1

    def cancel(self) -> None:
        _cancelCall(self.resend)
        _cancelCall(self.window)


def _startWaiting(inputs: Inviter, core: InviterCore) -> _Waiting:
    core.sendInvite()
    resend = core.clock.callLater(core.resendEvery, inputs._resendInvite) if core.copies > 1 else None
    return _Waiting(resend, core.clock.callLater(core.window, inputs._windowClosed))


@dataclass
class _Connecting:
    """A pause, then one connection attempt; ``cancel`` stops whichever is pending."""

    pause: IDelayedCall | None = None
    attempts: list[Deferred[object]] = field(default_factory=list)

    def cancel(self) -> None:
        _cancelCall(self.pause)
        for attempt in self.attempts:
            attempt.cancel()  # a pending attempt fails with CancelledError: connectFailed, absorbed

    def connectSoon(self, inputs: Inviter, core: InviterCore) -> None:
        _cancelCall(self.pause)
        self.pause = core.clock.callLater(core.connectDelay, inputs._connectNow)

    def connectNow(self, inputs: Inviter, core: InviterCore) -> None:
        self.pause = None
        attempt = core.connect(core.port)
        self.attempts.append(attempt)
        attempt.addCallbacks(
            lambda _: inputs.connected(),
            lambda failure: inputs.connectFailed(_reason(failure)),
        )


def _startConnecting(inputs: Inviter, core: InviterCore, port: int) -> _Connecting:
    core.port = port
    core.sendAck()
    connecting = _Connecting()
    connecting.connectSoon(inputs, core)
    return connecting


def _reason(failure: Failure) -> str:
    return failure.getErrorMessage() or failure.type.__name__  # type: ignore[union-attr]


@dataclass
class _Lingering(_Connecting):
    """Connected: late MSG05s get MSG06; a new port gets a new connection."""

    timer: IDelayedCall | None = None

    def cancel(self) -> None:
        super().cancel()
        _cancelCall(self.timer)


def _startLingering(inputs: Inviter, core: InviterCore) -> _Lingering:
    return _Lingering(timer=core.clock.callLater(core.linger, inputs._lingerOver))


def _buildInviter() -> TypeMachine[Inviter, InviterCore]:
    builder = TypeMachineBuilder(Inviter, InviterCore)
    idle = builder.state("idle")
    waiting = builder.state("waiting", _startWaiting)
    connecting = builder.state("connecting", _startConnecting)
    lingering = builder.state("lingering", _startLingering)
    done = builder.state("done")

    idle.upon(Inviter.start).to(waiting).returns(None)
    for ignored in (Inviter.accepted, Inviter.declined, Inviter.cancel, Inviter.connected, Inviter.connectFailed):
        done.upon(ignored).loop().returns(None)

    @waiting.upon(Inviter._resendInvite).loop()
    def resend(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        core.sendInvite()
        data.sent += 1
        more = data.sent < core.copies
        data.resend = core.clock.callLater(core.resendEvery, inputs._resendInvite) if more else None

    @waiting.upon(Inviter.accepted).to(connecting)
    def accepted(inputs: Inviter, core: InviterCore, data: _Waiting, port: int) -> None:
        data.cancel()

    @waiting.upon(Inviter.declined).to(done)
    def declined(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.sendAck()
        core.report("declined", "the invitation was declined")
        core.finished()

    @waiting.upon(Inviter._windowClosed).to(done)
    def noAnswer(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.report("timeout", f"no answer within {core.window:g} s")
        core.finished()

    @waiting.upon(Inviter.cancel).to(done)
    def cancelWaiting(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.report("cancelled", "invitation withdrawn")
        core.finished()

    def connectNow(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        data.connectNow(inputs, core)

    def repeatedAnswer(inputs: Inviter, core: InviterCore, data: _Connecting, port: int) -> None:
        core.sendAck()
        if port != core.port:
            # The original opened a new port for a second invitation dialog
            # and now waits on that one only.
            core.port = port
            core.report("reconnecting", f"the invitee answered again with port {port}; connecting there")
            data.connectSoon(inputs, core)

    def lateRefusal(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        """A refusal after an acceptance: the original's busy reply to our second MSG04."""

    def stopConnecting(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        data.cancel()
        core.finished()

    # Connecting and lingering share these (a lingering inviter may connect again).
    for state in (connecting, lingering):
        state.upon(Inviter._connectNow).loop()(connectNow)
        state.upon(Inviter.accepted).loop()(repeatedAnswer)
        state.upon(Inviter.declined).loop()(lateRefusal)
        state.upon(Inviter.cancel).to(done)(stopConnecting)
    lingering.upon(Inviter._lingerOver).to(done)(stopConnecting)

    @connecting.upon(Inviter.connected).to(lingering)
    def connectedNow(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        core.report("connected", "connected; the match begins")

    @connecting.upon(Inviter.connectFailed).to(done)
    def failed(inputs: Inviter, core: InviterCore, data: _Connecting, reason: str) -> None:
        data.cancel()
        core.report("failed", f"could not connect: {reason}")
        core.finished()

    @lingering.upon(Inviter.connected).loop()
    def reconnected(inputs: Inviter, core: InviterCore, data: _Lingering) -> None:
        """The connection to the newer port is up; the lobby hands it the match."""

    @lingering.upon(Inviter.connectFailed).loop()
    def reconnectFailed(inputs: Inviter, core: InviterCore, data: _Lingering, reason: str) -> None:
        core.report("failed", f"could not connect to the new port {core.port}: {reason}")

    return builder.build()


InviterMachine = _buildInviter()


# -- invitee ---------------------------------------------------------------


class Invitee(Protocol):
    def invited(self) -> None:
        "The first MSG04 from this peer arrived: ask whether to accept."

    def invitedWhileBusy(self) -> None:
        "The first MSG04 from this peer arrived while we play or invite: refuse."

    def repeatInvite(self) -> None:
        "Another copy of MSG04 from the same peer."

    def accept(self) -> None:
        "Our user (or policy) accepts."

    def decline(self) -> None:
        "Our user (or policy) refuses."

    def acknowledged(self) -> None:
        "MSG06 arrived."

    def connected(self) -> None:
        "The inviter's TCP connection arrived; the match takes over."

    def cancel(self) -> None:
        "The service stops, or the inviter went offline (MSG03)."

    def matchElsewhere(self) -> None:
        "Another inviter connected first: refuse if still asking, withdraw if accepted."

    def _resendAnswer(self) -> None:
        "private: time to send MSG05 again."

    def _windowClosed(self) -> None:
        "private: the 30 s window is over."

    def _lingerOver(self) -> None:
        "private: no more late MSG04 expected."


@dataclass
class InviteeCore:
    clock: IReactorTime
    ask: Callable[[], None]
    """Ask the user (or apply the --accept policy); the answer comes as accept() or decline()."""
    sendAnswer: Callable[[int], None]
    """Send MSG05 ``ownnick|port``; port 0 refuses."""
    listen: Callable[[], ListeningPort]
    report: Callable[[str, str], None]
    """``report(outcome, detail)``: "expired", "declined", "busy", "redeclined", "timeout", "cancelled", "connected"."""
    finished: Callable[[], None]
    window: float = INVITE_WINDOW
    resendEvery: float = ANSWER_RESEND
    answerDelay: float = ANSWER_DELAY
    refusalCopies: int = REFUSAL_COPIES
    linger: float = LINGER


@dataclass
class _Asking:
    window: IDelayedCall


def _startAsking(inputs: Invitee, core: InviteeCore) -> _Asking:
    window = core.clock.callLater(core.window, inputs._windowClosed)
    core.ask()
    return _Asking(window)


@dataclass
class _Listening:
    port: ListeningPort
    resend: IDelayedCall | None
    window: IDelayedCall

    def stopResending(self) -> None:
        _cancelCall(self.resend)
        self.resend = None

    def close(self) -> None:
        self.stopResending()
        _cancelCall(self.window)
        self.port.close()


def _startListening(inputs: Invitee, core: InviteeCore) -> _Listening:
    port = core.listen()
    core.sendAnswer(port.portNumber)
    return _Listening(
        port=port,
        resend=core.clock.callLater(core.resendEvery, inputs._resendAnswer),
        window=core.clock.callLater(core.window, inputs._windowClosed),
    )


@dataclass
class _Refusing:
    """Refusal copies still to send, and the linger window for late MSG04s."""

    resend: IDelayedCall | None
    linger: IDelayedCall
    since: float
    left: int

    def stopResending(self) -> None:
        _cancelCall(self.resend)
        self.resend = None

    def cancel(self) -> None:
        self.stopResending()
        _cancelCall(self.linger)


def _startRefusing(inputs: Invitee, core: InviteeCore) -> _Refusing:
    return _Refusing(
        resend=core.clock.callLater(core.answerDelay, inputs._resendAnswer),
        linger=core.clock.callLater(core.linger, inputs._lingerOver),
        since=core.clock.seconds(),
        left=core.refusalCopies,
    )


def _buildInvitee() -> TypeMachine[Invitee, InviteeCore]:
    builder = TypeMachineBuilder(Invitee, InviteeCore)
    idle = builder.state("idle")
    asking = builder.state("asking", _startAsking)
    listening = builder.state("listening", _startListening)
    refused = builder.state("refused", _startRefusing)
    done = builder.state("done")

    idle.upon(Invitee.invited).to(asking).returns(None)
    asking.upon(Invitee.repeatInvite).loop().returns(None)
    asking.upon(Invitee.acknowledged).loop().returns(None)
    for ignored in (
        Invitee.repeatInvite,
        Invitee.acknowledged,
        Invitee.accept,
        Invitee.decline,
        Invitee.cancel,
        Invitee.matchElsewhere,
    ):
        done.upon(ignored).loop().returns(None)
    refused.upon(Invitee.matchElsewhere).loop().returns(None)

    @idle.upon(Invitee.invitedWhileBusy).to(refused)
    def busy(inputs: Invitee, core: InviteeCore) -> None:
        core.report("busy", "declined at once: you are playing or inviting")

    @asking.upon(Invitee.accept).to(listening)
    def accept(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()

    @asking.upon(Invitee.decline).to(refused)
    def decline(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.report("declined", "invitation declined")

    @asking.upon(Invitee.matchElsewhere).to(refused)
    def playingElsewhere(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.report("busy", "declined: a match with another player has begun")

    @asking.upon(Invitee._windowClosed).to(done)
    def tooLate(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        core.report("expired", f"not answered within {core.window:g} s; the inviter has given up")
        core.finished()

    @asking.upon(Invitee.cancel).to(done)
    def cancelAsking(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.report("cancelled", "invitation withdrawn")
        core.finished()

    @listening.upon(Invitee._resendAnswer).loop()
    def resend(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        core.sendAnswer(data.port.portNumber)
        data.resend = core.clock.callLater(core.resendEvery, inputs._resendAnswer)

    @listening.upon(Invitee.repeatInvite).loop()
    def answerAgain(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        core.sendAnswer(data.port.portNumber)

    @listening.upon(Invitee.acknowledged).loop()
    def acknowledged(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.stopResending()

    @listening.upon(Invitee.connected).to(done)
    def connected(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.report("connected", "the inviter connected; the match begins")
        core.finished()

    @listening.upon(Invitee._windowClosed).to(done)
    def neverConnected(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.report("timeout", f"the inviter did not connect within {core.window:g} s")
        core.finished()

    @listening.upon(Invitee.cancel).to(done)
    def cancelListening(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.report("cancelled", "invitation withdrawn")
        core.finished()

    @listening.upon(Invitee.matchElsewhere).to(done)
    def withdrawn(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.report("cancelled", "withdrawn: another inviter connected first")
        core.finished()

    @refused.upon(Invitee._resendAnswer).loop()
    def sendRefusal(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        core.sendAnswer(0)
        data.left -= 1
        data.resend = core.clock.callLater(core.resendEvery, inputs._resendAnswer) if data.left > 0 else None

    @refused.upon(Invitee.repeatInvite).loop()
    def refuseAgain(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        if data.resend is not None:
            # A copy is on its way already; it must not arrive sooner than
            # answerDelay after this MSG04 (the original would lose it), and
            # this invitation deserves its own copies too.
            due = data.resend.getTime() - core.clock.seconds()
            if due < core.answerDelay:
                data.resend.reset(core.answerDelay)
            data.left = core.refusalCopies
            return
        # A new copy of the refusal, as the first: not at once (the original
        # starts waiting only after its MSG04 is out) and not just once.
        data.left = core.refusalCopies
        data.resend = core.clock.callLater(core.answerDelay, inputs._resendAnswer)
        ago = core.clock.seconds() - data.since
        core.report("redeclined", f"invited again {ago:.0f} s after the refusal; declined automatically")

    @refused.upon(Invitee.acknowledged).loop()
    def refusalSeen(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        if data.left < core.refusalCopies:  # at least one copy went out
            data.stopResending()

    @refused.upon(Invitee._lingerOver).to(done)
    @refused.upon(Invitee.cancel).to(done)
    def refusedOver(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        data.cancel()
        core.finished()

    return builder.build()


InviteeMachine = _buildInvitee()
