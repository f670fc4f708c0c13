"""Recording fakes for the match machine alone, in the manner of magic-wormhole's ``Dummy``.

One ``RecordingPeer`` stands in for everything the machine talks to: the connection
(``send``, ``close``) and the front end (``MatchObserver``, as the peer
tests' ``Recorder`` writes it down). Every call is
written, in order, to one ``events`` list, so a test asserts the exact
sequence of what the machine did. Time is a ``task.Clock``; nothing touches
a network, a peer or a protocol.
"""

from __future__ import annotations

import random

from twisted.internet.task import Clock

from velhanet.velha import wire
from velhanet.velha.room import Match, MatchCore, MatchMachine, MatchObserver, MatchSettings

from .velha_harness import Recorder

STARTER_WINS = [1, 4, 2, 5, 3]
STARTER_LOSES = [1, 4, 2, 5, 9, 6]
DRAW = [1, 2, 3, 5, 4, 6, 8, 7, 9]
"""Whole games, starter first, alternating; each a list of positions."""


class RecordingPeer(Recorder):
    """The connection and the front end of one match, recorded (the front end as ``velha_harness.Recorder``)."""

    # -- the connection --------------------------------------------------------

    def send(self, message: wire.StreamMessage) -> None:
        self.events.append(("send", message))

    def close(self) -> None:
        self.events.append(("close",))

    # -- reading it back -------------------------------------------------------

    def take(self) -> list[tuple[object, ...]]:
        """The events since the last take."""
        events, self.events = self.events, []
        return events

    def sent(self) -> list[object]:
        return [event[1] for event in self.events if event[0] == "send"]


def newMatch(
    peer: RecordingPeer,
    clock: Clock,
    isInvitee: bool = False,
    settings: MatchSettings | None = None,
    seed: int = 0,
    peerNick: str = "peer",
    observer: MatchObserver | None = None,
) -> Match:
    """A match machine whose every collaborator is ``peer`` (and ``clock``), or a real front end as observer."""
    return MatchMachine(
        MatchCore(
            isInvitee,
            peer.send,
            peer.close,
            observer or peer,
            peerNick,
            clock,
            settings or MatchSettings(),
            random.Random(seed),
        )
    )
