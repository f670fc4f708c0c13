"""The invitation handshake (MSG04/05/06): one small machine per side.

UDP loses, repeats and reorders datagrams, so both machines resend what
the other side may have missed and absorb what arrives twice:

- the **inviter** sends MSG04 and, 2 s later, a MSG01 to the invitee alone:
  a MSG02 in answer shows that the invitee's listener is reading datagrams,
  so it holds no dialog open for our MSG04 and the MSG04 was lost (or the
  peer reads on while its user decides, and a copy costs nothing): a copy
  goes at once. A listener that stays silent may be the original program's,
  which shows one modal dialog per MSG04 from its listener thread: it gets
  one copy only, 15 s after the last, so that a person has 15 s before a
  second dialog appears. An accepting
  MSG05 is answered with MSG06 and, 0.2 s later, one TCP connection (the
  original needs a moment after its MSG05 before it can take a connection);
  a repeated MSG05 gets MSG06 again, never a second connection, unless it
  names a *new* port: the original opens a new port for every invitation
  dialog its user accepts and waits on the newest, so velhanet connects there
  too and the peer lets the newer connection take over the match;
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
machines know nothing of sockets: each talks through one narrow link
(``interfaces.IInviterLink`` / ``IInviteeLink``) that a handshake of the
tables in ``velhanet.velha.lobby`` provides, and a test replaces.

This module holds what both sides share (timings, the core, the timer
helper); the machines are in ``inviter.py`` and ``invitee.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.velha.interfaces import IHandshakeLink
from velhanet.velha.interfaces import ListeningPort as ListeningPort

INVITE_WINDOW = 30.0
"""Seconds an inviter waits for MSG05, and an invitee for the TCP connection."""

INVITE_RESEND = 15.0
"""Seconds after the last copy of MSG04 before the one copy that goes to a silent listener."""

SILENT_COPIES = 1
"""Copies of MSG04 to an invitee whose listener does not answer our MSG01 (it may be showing a dialog)."""

PROBE_AFTER = 2.0
"""Seconds after a copy of MSG04 (and between unanswered probes) before MSG01 asks whether the
invitee's listener still reads datagrams; longer than an automatic peer takes to answer MSG04."""

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


@dataclass
class HandshakeCore:
    """What both handshake machines hold: a clock, the link they act through, their windows."""

    clock: IReactorTime
    link: IHandshakeLink
    window: float = INVITE_WINDOW
    linger: float = LINGER

    def end(self, outcome: str, detail: str) -> None:
        """Report how the handshake ended; the machine will not act again."""
        self.link.report(outcome, detail)
        self.link.finished()


def cancelCall(call: IDelayedCall | None) -> None:
    """Cancel a timer that may have fired already: every exit from a waiting state calls this."""
    if call is not None and call.active():
        call.cancel()
