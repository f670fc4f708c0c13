"""The inviter's side of the handshake: MSG04 out, MSG05 in, MSG06 and one connection out.

See ``invite.py`` for the handshake as a whole. The machine sends MSG04;
while no MSG05 has come, it asks the invitee's listener with MSG01 whether
it still reads datagrams: if it answers (MSG02), a copy of MSG04 goes at
once; a silent one gets one copy only, 15 s after the last (the original
program shows a dialog per MSG04 it reads). An accepting MSG05 gets MSG06
and, 0.2 s later, one TCP connection; a repeated MSG05 gets MSG06 again, and
a new connection only if it names a new port (the original program waits on
the newest port it opened). It lingers 30 s after connecting to answer late
duplicates.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall
from twisted.python.failure import Failure

from velhanet.i18n import _
from velhanet.indexedmachine import indexed
from velhanet.velha.interfaces import IInviterLink
from velhanet.velha.invite import (
    CONNECT_DELAY,
    INVITE_RESEND,
    PROBE_AFTER,
    SILENT_COPIES,
    HandshakeCore,
    cancelCall,
)


class Inviter(typing.Protocol):
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

    def listenerAnswered(self) -> None:
        "MSG02 from the invitee's address: its listener reads datagrams, so no dialog holds it."

    def _probe(self) -> None:
        "private: time to ask the invitee's listener with MSG01 whether it still reads."

    def _resendInvite(self) -> None:
        "private: 15 s after the last copy, still no answer: the one copy for a silent listener."

    def _windowClosed(self) -> None:
        "private: 30 s without an answer."

    def _connectNow(self) -> None:
        "private: the pause after MSG06 is over: connect."

    def _lingerOver(self) -> None:
        "private: no more late duplicates expected."


@dataclass
class InviterCore(HandshakeCore):
    """The inviter's collaborators: the shared ones, its link, its timings."""

    link: IInviterLink
    resendEvery: float = INVITE_RESEND
    silentCopies: int = SILENT_COPIES
    probeAfter: float = PROBE_AFTER
    connectDelay: float = CONNECT_DELAY
    port: int = 0
    """The invitee's port we connect (or connected) to: the newest one it named."""


@dataclass
class _Waiting:
    """MSG04 is out: the window, the next probe of the invitee's listener, and the silent copy.

    A copy of MSG04 goes at once when the listener answers a probe sent
    after the last copy: a listener that reads holds no dialog open for that
    copy, so the copy was lost (or costs nothing). A MSG02 to an earlier
    probe proves nothing about the last copy, and is not counted.
    """

    window: IDelayedCall
    probe: IDelayedCall
    silentCopy: IDelayedCall | None
    silentCopiesLeft: int
    probed: bool = False
    """A probe has gone out since the last copy of MSG04."""

    def cancel(self) -> None:
        cancelCall(self.window)
        cancelCall(self.probe)
        cancelCall(self.silentCopy)

    def sendCopy(self, inputs: Inviter, core: InviterCore) -> None:
        """One more MSG04; the next probe, and the silent copy, count from it."""
        core.link.sendInvite()
        self.probed = False
        cancelCall(self.probe)
        self.probe = core.clock.callLater(core.probeAfter, inputs._probe)
        if self.silentCopy is not None and self.silentCopy.active():
            self.silentCopy.reset(core.resendEvery)


def _startWaiting(inputs: Inviter, core: InviterCore) -> _Waiting:
    core.link.sendInvite()
    clock = core.clock
    silent = clock.callLater(core.resendEvery, inputs._resendInvite) if core.silentCopies > 0 else None
    return _Waiting(
        window=clock.callLater(core.window, inputs._windowClosed),
        probe=clock.callLater(core.probeAfter, inputs._probe),
        silentCopy=silent,
        silentCopiesLeft=core.silentCopies,
    )


@dataclass
class _Connecting:
    """A pause, then one connection attempt; ``cancel`` stops whichever is pending."""

    pause: IDelayedCall | None = None
    attempts: list[Deferred[object]] = field(default_factory=list)

    def cancel(self) -> None:
        cancelCall(self.pause)
        for attempt in self.attempts:
            attempt.cancel()  # a pending attempt fails with CancelledError: connectFailed, absorbed

    def connectSoon(self, inputs: Inviter, core: InviterCore) -> None:
        cancelCall(self.pause)
        self.pause = core.clock.callLater(core.connectDelay, inputs._connectNow)

    def connectNow(self, inputs: Inviter, core: InviterCore) -> None:
        self.pause = None
        attempt = core.link.connect(core.port)
        self.attempts.append(attempt)
        attempt.addCallbacks(
            lambda _: inputs.connected(),
            lambda failure: inputs.connectFailed(_reason(failure)),
        )


def _startConnecting(inputs: Inviter, core: InviterCore, port: int) -> _Connecting:
    core.port = port
    core.link.sendAck()
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
        cancelCall(self.timer)


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
    for unprobed in (idle, connecting, lingering, done):
        unprobed.upon(Inviter.listenerAnswered).loop().returns(None)

    @waiting.upon(Inviter._probe).loop()
    def probe(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        core.link.sendProbe()
        data.probed = True
        data.probe = core.clock.callLater(core.probeAfter, inputs._probe)

    @waiting.upon(Inviter.listenerAnswered).loop()
    def copyToAReadingListener(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        if data.probed:
            data.sendCopy(inputs, core)

    @waiting.upon(Inviter._resendInvite).loop()
    def copyToASilentListener(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.silentCopiesLeft -= 1
        more = data.silentCopiesLeft > 0
        data.silentCopy = core.clock.callLater(core.resendEvery, inputs._resendInvite) if more else None
        data.sendCopy(inputs, core)

    @waiting.upon(Inviter.accepted).to(connecting)
    def accepted(inputs: Inviter, core: InviterCore, data: _Waiting, port: int) -> None:
        data.cancel()

    @waiting.upon(Inviter.declined).to(done)
    def declined(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.link.sendAck()
        core.end("declined", _("the invitation was declined"))

    @waiting.upon(Inviter._windowClosed).to(done)
    def noAnswer(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.end("timeout", _("no answer within {s:g} s").format(s=core.window))

    @waiting.upon(Inviter.cancel).to(done)
    def cancelWaiting(inputs: Inviter, core: InviterCore, data: _Waiting) -> None:
        data.cancel()
        core.end("cancelled", _("invitation withdrawn"))

    def connectNow(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        data.connectNow(inputs, core)

    def repeatedAnswer(inputs: Inviter, core: InviterCore, data: _Connecting, port: int) -> None:
        core.link.sendAck()
        if port != core.port:
            # The original opened a new port for a second invitation dialog
            # and now waits on that one only.
            core.port = port
            detail = _("the invitee answered again with port {port}; connecting there").format(port=port)
            core.link.report("reconnecting", detail)
            data.connectSoon(inputs, core)

    def lateRefusal(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        """A refusal after an acceptance: the original's busy reply to our second MSG04."""

    def stopConnecting(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        data.cancel()
        core.link.finished()

    # Connecting and lingering share these (a lingering inviter may connect again).
    for state in (connecting, lingering):
        state.upon(Inviter._connectNow).loop()(connectNow)
        state.upon(Inviter.accepted).loop()(repeatedAnswer)
        state.upon(Inviter.declined).loop()(lateRefusal)
        state.upon(Inviter.cancel).to(done)(stopConnecting)
    lingering.upon(Inviter._lingerOver).to(done)(stopConnecting)

    @connecting.upon(Inviter.connected).to(lingering)
    def connectedNow(inputs: Inviter, core: InviterCore, data: _Connecting) -> None:
        core.link.report("connected", _("connected; the match begins"))

    @connecting.upon(Inviter.connectFailed).to(done)
    def failed(inputs: Inviter, core: InviterCore, data: _Connecting, reason: str) -> None:
        data.cancel()
        core.end("failed", _("could not connect: {reason}").format(reason=reason))

    @lingering.upon(Inviter.connected).loop()
    def reconnected(inputs: Inviter, core: InviterCore, data: _Lingering) -> None:
        """The connection to the newer port is up; the peer hands it the match."""

    @lingering.upon(Inviter.connectFailed).loop()
    def reconnectFailed(inputs: Inviter, core: InviterCore, data: _Lingering, reason: str) -> None:
        detail = _("could not connect to the new port {port}: {reason}").format(port=core.port, reason=reason)
        core.link.report("failed", detail)

    return indexed(builder.build())


InviterMachine = _buildInviter()
