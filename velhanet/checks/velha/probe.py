"""Is the JogoVelha target there, and is it still there? ``canTest`` before the checks, ``probe`` after each.

Both ask with MSG01 from a fresh socket connected to the peer's port (an ICMP "port unreachable" then
says that nothing listens) and wait for MSG02 on the checker's own port. A peer is "stopped" only when
MSG01 goes unanswered in every one of L{PROBE_NICKS}' forms after it answered one before: a student's
peer that misreads one length (a buffer reused for every datagram, read whole) is not stopped. Every
probe is in the exchange of the check after which it ran.
"""

from __future__ import annotations

from velhanet.checks.base import Target
from velhanet.checks.velha.player import Udp, helloRoundTrip
from velhanet.i18n import _, ngettext
from velhanet.velha import wire

NICK = "vcheck"
"""The checker's own nick."""


def canTest(target: Target) -> str | None:
    """Something listens on the peer's UDP port (no ICMP 'port unreachable'); remember if it answers MSG01."""
    local = target.extra.get("local", "127.0.0.1")
    try:
        udp = Udp(local, target.port)
    except OSError as error:
        return _("cannot bind our own UDP port {local}:{port} (--local): {error}").format(
            local=local, port=target.port, error=error.strerror or error
        )
    try:
        unreachable, answered = helloRoundTrip(udp, local, target.host, target.port, NICK, target.seconds(HELLO_WAIT))
    finally:
        udp.close()
    if unreachable is not None:
        return unreachable
    target.extra["answersHello"] = answered
    return None


def probe(target: Target) -> str | None:
    """Still serving: its UDP port is open and, if it answered MSG01 before, it still does.

    A peer that never answered MSG01 has only its port to show: the probe
    then waits L{DEAF_WAIT} for the ICMP "port unreachable" of a closed one.
    """
    local = target.extra.get("local", "127.0.0.1")
    try:
        udp = Udp(local, target.port)
    except OSError:
        return None  # our own port is busy for a moment (a check's cleanup): nothing to say about the target
    wait = HELLO_WAIT if target.extra.get("answersHello") else DEAF_WAIT
    try:
        for nick in PROBE_NICKS:  # several lengths, each from a fresh socket: a peer that misreads one still answers
            unreachable, answered = helloRoundTrip(
                udp, local, target.host, target.port, nick, target.seconds(wait), anyMore=True
            )
            if unreachable is not None:
                return unreachable
            if answered or not target.extra.get("answersHello"):
                return None
        forms = ", ".join(repr(wire.encode(wire.Hello(nick)).decode()) for nick in PROBE_NICKS)
        stopped = ngettext(
            "it no longer answers MSG01 in its {n} form ({forms}): its UDP listener stopped",
            "it no longer answers MSG01 in any of {n} forms ({forms}): its UDP listener stopped",
            len(PROBE_NICKS),
        )
        return stopped.format(n=len(PROBE_NICKS), forms=forms)
    finally:
        udp.close()


PROBE_NICKS = (NICK, "vcheck-probe-longer", "vp")
"""The nicks of the MSG01s that ask whether the target still serves: three lengths (a peer that reads a
datagram shorter than the one before with stale bytes misses the short one, not the long one)."""

HELLO_WAIT = 5.0
"""Seconds the checker's own MSG01 (before the checks, and between them) waits for MSG02."""

DEAF_WAIT = 1.0
"""Seconds a check's first MSG01 waits for MSG02 from a peer that did not answer the first MSG01 of the run."""
