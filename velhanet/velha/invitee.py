"""The invitee's side of the handshake: MSG04 in, MSG05 out (resent), one connection in.

See ``invite.py`` for the handshake as a whole. The machine asks its user
(or policy), then refuses with ``nick|0`` (three copies, no sooner than
0.5 s after the invitation) or opens a TCP port and sends ``nick|port``
every 2 s until MSG06 or the inviter's connection; after 30 s without a
connection it closes the port.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall

from velhanet.i18n import _
from velhanet.indexedmachine import indexed
from velhanet.velha.interfaces import IInviteeLink
from velhanet.velha.invite import (
    ANSWER_DELAY,
    ANSWER_RESEND,
    REFUSAL_COPIES,
    HandshakeCore,
    ListeningPort,
    cancelCall,
)


class Invitee(typing.Protocol):
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
class InviteeCore(HandshakeCore):
    """The invitee's collaborators: the shared ones, its link, its timings."""

    link: IInviteeLink
    resendEvery: float = ANSWER_RESEND
    answerDelay: float = ANSWER_DELAY
    refusalCopies: int = REFUSAL_COPIES


@dataclass
class _Asking:
    window: IDelayedCall


def _startAsking(inputs: Invitee, core: InviteeCore) -> _Asking:
    window = core.clock.callLater(core.window, inputs._windowClosed)
    core.link.ask()
    return _Asking(window)


@dataclass
class _Resending:
    """A state that resends MSG05 until told to stop."""

    resend: IDelayedCall | None

    def stopResending(self) -> None:
        cancelCall(self.resend)
        self.resend = None


@dataclass
class _Listening(_Resending):
    port: ListeningPort
    window: IDelayedCall

    def close(self) -> None:
        self.stopResending()
        cancelCall(self.window)
        self.port.close()


def _startListening(inputs: Invitee, core: InviteeCore) -> _Listening:
    port = core.link.listen()
    core.link.sendAnswer(port.portNumber)
    return _Listening(
        port=port,
        resend=core.clock.callLater(core.resendEvery, inputs._resendAnswer),
        window=core.clock.callLater(core.window, inputs._windowClosed),
    )


@dataclass
class _Refusing(_Resending):
    """Refusal copies still to send, and the linger window for late MSG04s."""

    linger: IDelayedCall
    since: float
    left: int

    def cancel(self) -> None:
        self.stopResending()
        cancelCall(self.linger)


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
        core.link.report("busy", _("declined at once: you are playing or inviting"))

    @asking.upon(Invitee.accept).to(listening)
    def accept(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()

    @asking.upon(Invitee.decline).to(refused)
    def decline(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.link.report("declined", _("invitation declined"))

    @asking.upon(Invitee.matchElsewhere).to(refused)
    def playingElsewhere(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.link.report("busy", _("declined: a match with another player has begun"))

    @asking.upon(Invitee._windowClosed).to(done)
    def tooLate(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        core.end("expired", _("not answered within {s:g} s; the inviter has given up").format(s=core.window))

    @asking.upon(Invitee.cancel).to(done)
    def cancelAsking(inputs: Invitee, core: InviteeCore, data: _Asking) -> None:
        data.window.cancel()
        core.end("cancelled", _("invitation withdrawn"))

    @listening.upon(Invitee._resendAnswer).loop()
    def resend(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        core.link.sendAnswer(data.port.portNumber)
        data.resend = core.clock.callLater(core.resendEvery, inputs._resendAnswer)

    @listening.upon(Invitee.repeatInvite).loop()
    def answerAgain(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        core.link.sendAnswer(data.port.portNumber)

    @listening.upon(Invitee.acknowledged).loop()
    def acknowledged(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.stopResending()

    @listening.upon(Invitee.connected).to(done)
    def connected(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.end("connected", _("the inviter connected; the match begins"))

    @listening.upon(Invitee._windowClosed).to(done)
    def neverConnected(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.end("timeout", _("the inviter did not connect within {s:g} s").format(s=core.window))

    @listening.upon(Invitee.cancel).to(done)
    def cancelListening(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.end("cancelled", _("invitation withdrawn"))

    @listening.upon(Invitee.matchElsewhere).to(done)
    def withdrawn(inputs: Invitee, core: InviteeCore, data: _Listening) -> None:
        data.close()
        core.end("cancelled", _("withdrawn: another inviter connected first"))

    @refused.upon(Invitee._resendAnswer).loop()
    def sendRefusal(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        core.link.sendAnswer(0)
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
        detail = _("invited again {s:.0f} s after the refusal; declined automatically").format(s=ago)
        core.link.report("redeclined", detail)

    @refused.upon(Invitee.acknowledged).loop()
    def refusalSeen(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        if data.left < core.refusalCopies:  # at least one copy went out
            data.stopResending()

    @refused.upon(Invitee._lingerOver).to(done)
    @refused.upon(Invitee.cancel).to(done)
    def refusedOver(inputs: Invitee, core: InviteeCore, data: _Refusing) -> None:
        data.cancel()
        core.link.finished()

    return indexed(builder.build())


InviteeMachine = _buildInvitee()
