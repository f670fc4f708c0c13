"""Discovery (MSG01/02/03): who is online, as one small machine.

The machine is quiet until started, then announces itself every 180 s
(MSG01; the text forbids less than 3 minutes) and, 15 s after each
announcement, drops whoever did not answer it. Both timers are state data
of ``announcing``, armed there and cancelled by ``stop``; their firing
arrives as the private inputs ``_announce`` and ``_expire``, so a test
drives them with a Clock and nothing else.

In either state it keeps the roster: MSG01 is answered with MSG02, MSG02
and MSG04 say their sender is online, MSG03 says it left. It sends through
an L{IDatagramSender} and reports to an L{IPresenceListener}; it knows
nothing of sockets, invitations or matches.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.i18n import N_, _
from velhanet.indexedmachine import indexed
from velhanet.velha import wire
from velhanet.velha.interfaces import IDatagramSender, IPresenceListener
from velhanet.velha.invite import cancelCall
from velhanet.velha.roster import Roster

ANNOUNCE_EVERY = 180.0
"""MSG01 period; the text forbids less than 3 minutes."""
ANSWER_WINDOW = 15.0
"""Seconds a peer has to answer our MSG01 before it is dropped from the roster."""
SILENT = N_("did not answer MSG01 within 15 s")
"""Why a player left the roster when it stopped answering (translated where it is said)."""


class Presence(typing.Protocol):
    def start(self) -> None:
        "Say hello now and every 180 s."

    def stop(self) -> None:
        "Say goodbye (MSG03) and stop announcing."

    def hello(self, nick: str, host: str) -> None:
        "MSG01 from ``nick``: it is online; answer MSG02."

    def heard(self, nick: str, host: str) -> None:
        "MSG02 or MSG04 from ``nick``: it is online."

    def goodbye(self, nick: str) -> None:
        "MSG03 from ``nick``."

    def _announce(self) -> None:
        "private: time for the next MSG01."

    def _expire(self, probeTime: float) -> None:
        "private: 15 s after the MSG01 sent at ``probeTime``."


@dataclass
class PresenceCore:
    """The roster and the collaborators of the discovery machine."""

    nick: str
    clock: IReactorTime
    datagrams: IDatagramSender
    listener: IPresenceListener
    announceTargets: list[str]
    roster: Roster = field(default_factory=Roster)
    announceEvery: float = ANNOUNCE_EVERY
    answerWindow: float = ANSWER_WINDOW

    def seen(self, nick: str, address: str) -> None:
        if self.roster.seen(nick, address, self.clock.seconds()):
            for gone in self.roster.trim(address):
                self.listener.peerOffline(
                    gone.nick, _("replaced: too many nicks from {address}").format(address=gone.address)
                )
            self.listener.peerOnline(nick, address)

    def sayGoodbye(self) -> None:
        for target in self.announceTargets:
            self.datagrams.send(wire.Goodbye(self.nick), target)


@dataclass
class _Announcing:
    """The next announcement, and the expiry checks of the announcements already sent."""

    next: IDelayedCall
    expiries: list[IDelayedCall]

    def cancel(self) -> None:
        cancelCall(self.next)
        for call in self.expiries:
            cancelCall(call)


def _announceNow(inputs: Presence, core: PresenceCore, expiries: list[IDelayedCall]) -> IDelayedCall:
    """Send MSG01 to every target; check 15 s later who answered; return the next announcement.

    Every player already known gets the MSG01 directly too: the original
    program listens on its unicast address and never hears a broadcast, so
    without it the roster would lose it after every announcement. Each
    player still gets one MSG01 per period (text: never less than 3 min).
    """
    probeTime = core.clock.seconds()
    targets = list(core.announceTargets)
    targets += [entry.address for entry in core.roster if entry.address not in targets]
    for target in targets:
        core.datagrams.send(wire.Hello(core.nick), target)
    expiries[:] = [call for call in expiries if call.active()]
    expiries.append(core.clock.callLater(core.answerWindow, inputs._expire, probeTime))
    return core.clock.callLater(core.announceEvery, inputs._announce)


def _startAnnouncing(inputs: Presence, core: PresenceCore) -> _Announcing:
    expiries: list[IDelayedCall] = []
    return _Announcing(_announceNow(inputs, core, expiries), expiries)


def _hello(inputs: Presence, core: PresenceCore, nick: str, host: str) -> None:
    core.seen(nick, host)
    core.datagrams.send(wire.HelloReply(core.nick), host)


def _heard(inputs: Presence, core: PresenceCore, nick: str, host: str) -> None:
    core.seen(nick, host)


def _goodbye(inputs: Presence, core: PresenceCore, nick: str) -> None:
    if core.roster.remove(nick) is not None:
        core.listener.peerOffline(nick, _("left (MSG03)"))
    core.listener.peerLeft(nick)


def _buildPresence() -> TypeMachine[Presence, PresenceCore]:
    builder = TypeMachineBuilder(Presence, PresenceCore)
    quiet = builder.state("quiet")
    announcing = builder.state("announcing", _startAnnouncing)

    quiet.upon(Presence.start).to(announcing).returns(None)
    announcing.upon(Presence.start).loop().returns(None)
    quiet.upon(Presence.hello).loop()(_hello)
    quiet.upon(Presence.heard).loop()(_heard)
    quiet.upon(Presence.goodbye).loop()(_goodbye)
    announcing.upon(Presence.hello, nodata=True).loop()(_hello)
    announcing.upon(Presence.heard, nodata=True).loop()(_heard)
    announcing.upon(Presence.goodbye, nodata=True).loop()(_goodbye)

    @quiet.upon(Presence.stop).loop()
    def goodbyeOnly(inputs: Presence, core: PresenceCore) -> None:
        core.sayGoodbye()

    @announcing.upon(Presence.stop).to(quiet)
    def leave(inputs: Presence, core: PresenceCore, data: _Announcing) -> None:
        data.cancel()
        core.sayGoodbye()

    @announcing.upon(Presence._announce).loop()
    def announceAgain(inputs: Presence, core: PresenceCore, data: _Announcing) -> None:
        data.next = _announceNow(inputs, core, data.expiries)

    @announcing.upon(Presence._expire).loop()
    def expire(inputs: Presence, core: PresenceCore, data: _Announcing, probeTime: float) -> None:
        for entry in core.roster.expire(probeTime):
            core.listener.peerOffline(entry.nick, _(SILENT))

    return indexed(builder.build())


PresenceMachine = _buildPresence()
