"""The invitation handshake (MSG04/05/06): one small machine per side.

UDP loses, repeats and reorders datagrams, so both machines resend what
the other side may have missed and absorb what arrives twice:

- the **inviter** sends MSG04 and resends it until MSG05 arrives or its
  30 s window closes; an accepting MSG05 is answered with MSG06 and one TCP
  connection; a repeated MSG05 gets MSG06 again, never a second connection;
- the **invitee** asks its user (or its policy), then either refuses with
  ``nick|0`` or opens a TCP port and sends ``nick|port``, resending it every
  2 s until MSG06 or the inviter's connection arrives; after 30 s without a
  connection it closes the port and gives up.

Each machine holds its timers as state data, so every transition out of a
waiting state cancels them, and no path leaves a delayed call or a listening
port behind. The machines know nothing of sockets: a core of callables sends
datagrams, opens ports and connects (``velhanet.velha.lobby`` provides it).
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

INVITE_RESEND = 5.0
"""Seconds between copies of MSG04 inside the window (six copies at most)."""

ANSWER_RESEND = 2.0
"""Seconds between copies of an accepting MSG05 until MSG06 or the connection."""

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
    """``report(outcome, detail)``: "declined", "timeout", "failed", "cancelled", "connected"."""
    finished: Callable[[], None]
    """Called once, when the machine will never act again (the lobby forgets it)."""
    window: float = INVITE_WINDOW
    resendEvery: float = INVITE_RESEND
    linger: float = LINGER


@dataclass
class _Waiting:
    resend: IDelayedCall
    window: IDelayedCall

    def cancel(self) -> None:
        for call in (self.resend, self.window):
            if call.active():
                call.cancel()


def _startWaiting(inputs: Inviter, core: InviterCore) -> _Waiting:
    core.sendInvite()
    return _Waiting(
        resend=core.clock.callLater(core.resendEvery, inputs._resendInvite),
        window=core.clock.callLater(core.window, inputs._windowClosed),
    )


@dataclass
class _Connecting:
    attempt: Deferred[object]


def _startConnecting(inputs: Inviter, core: InviterCore, port: int) -> _Connecting:
    core.sendAck()
    attempt = core.connect(port)
    attempt.addCallbacks(
        lambda _: inputs.connected(),
        lambda failure: inputs.connectFailed(_reason(failure)),
    )
    return _Connecting(attempt)


def _reason(failure: Failure) -> str:
    return failure.getErrorMessage() or failure.type.__name__  # type: ignore[union-attr]


@dataclass
class _Lingering:
    timer: IDelayedCall = field()


def _startLingering(inputs: Inviter, core: InviterCore) -> _Lingering:
    return _Lingering(core.clock.callLater(core.linger, inputs._lingerOver))


def _buildInviter() -> TypeMachine[Inviter, InviterCore]:
    builder = TypeMachineBuilder(Inviter, InviterCore)
    idle = builder.state("idle")
    waiting = builder.state("waiting", _startWaiting)
    connecting = builder.state("connecting", _startConnecting)
    lingering = builder.state("lingering", _startLingering)
    done = builder.state("done")

    idle.upon(Inviter.start).to(waiting).returns(None)
    for ignored in (Inviter.accepted, Inviter.declined, Inviter.cancel):
        done.upon(ignored).loop().returns(None)
    connecting.upon(Inviter.declined).loop().returns(None)
    lingering.upon(Inviter.declined).loop().returns(None)

    @waiting.upon(Inviter._resendInvite).loop()
    def resend(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        core.sendInvite()
        data.resend = core.clock.callLater(core.resendEvery, inputs._resendInvite)

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

    @connecting.upon(Inviter.accepted).loop()
    def repeatAckWhileConnecting(inputs: Inviter, core: InviterCore, data: _Connecting, port: int) -> None:
        core.sendAck()

    @connecting.upon(Inviter.connected).to(lingering)
    def connectedNow(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        core.report("connected", "connected; the match begins")

    @connecting.upon(Inviter.connectFailed).to(done)
    def failed(inputs: Inviter, core: InviterCore, data: _Connecting, reason: str) -> None:
        core.report("failed", f"could not connect: {reason}")
        core.finished()

    @connecting.upon(Inviter.cancel).to(done)
    def cancelConnecting(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        data.attempt.cancel()
        core.finished()

    @lingering.upon(Inviter.accepted).loop()
    def repeatAckLater(inputs: Inviter, core: InviterCore, data: _Lingering, port: int) -> None:
        core.sendAck()

    @lingering.upon(Inviter._lingerOver).to(done)
    def lingerOver(inputs: Inviter, core: InviterCore, data: _Lingering) -> None:
        core.finished()

    @lingering.upon(Inviter.cancel).to(done)
    def cancelLinger(inputs: Inviter, core: InviterCore, data: _Lingering) -> None:
        data.timer.cancel()
        core.finished()

    return builder.build()


InviterMachine = _buildInviter()


# -- invitee ---------------------------------------------------------------


class Invitee(Protocol):
    def invited(self) -> None:
        "The first MSG04 from this peer arrived: ask whether to accept."

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
    """``report(outcome, detail)``: "expired", "declined", "timeout", "cancelled", "connected"."""
    finished: Callable[[], None]
    window: float = INVITE_WINDOW
    resendEvery: float = ANSWER_RESEND
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
        if self.resend is not None and self.resend.active():
            self.resend.cancel()
        self.resend = None

    def close(self) -> None:
        self.stopResending()
        if self.window.active():
            self.window.cancel()
        self.port.close()


def _startListening(inputs: Invitee, core: InviteeCore) -> _Listening:
    port = core.listen()
    core.sendAnswer(port.portNumber)
    return _Listening(
        port=port,
        resend=core.clock.callLater(core.resendEvery, inputs._resendAnswer),
        window=core.clock.callLater(core.window, inputs._windowClosed),
    )


def _startRefusing(inputs: Invitee, core: InviteeCore) -> _Lingering:
    core.sendAnswer(0)
    return _Lingering(core.clock.callLater(core.linger, inputs._lingerOver))


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
    refused.upon(Invitee.acknowledged).loop().returns(None)
    for ignored in (
        Invitee.repeatInvite,
        Invitee.acknowledged,
        Invitee.accept,
        Invitee.decline,
        Invitee.cancel,
    ):
        done.upon(ignored).loop().returns(None)

    @asking.upon(Invitee.accept).to(listening)
    def accept(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()

    @asking.upon(Invitee.decline).to(refused)
    def decline(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.report("declined", "invitation declined")

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

    @refused.upon(Invitee.repeatInvite).loop()
    def refuseAgain(inputs: Invitee, core: InviteeCore, data: _Lingering) -> None:
        core.sendAnswer(0)

    @refused.upon(Invitee._lingerOver).to(done)
    def refusedOver(inputs: Invitee, core: InviteeCore, data: _Lingering) -> None:
        core.finished()

    @refused.upon(Invitee.cancel).to(done)
    def cancelRefused(inputs: Invitee, core: InviteeCore, data: _Lingering) -> None:
        data.timer.cancel()
        core.finished()

    return builder.build()


InviteeMachine = _buildInvitee()
