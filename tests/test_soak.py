"""The soak's short version: every long-running service keeps nothing per finished game.

Each test runs ``python -m benchmarks.soak --inside`` for one service, in a process of its own (as a
server runs: nothing of trial's in it, whose ``-j`` workers keep every log line until the test ends):
the service as ``twistd`` builds it, ``benchmarks/soak_load.py``'s clients beside it, a warm-up round, a
reference round, two measured rounds and more until they played L{LEAK_GAMES} games (``benchmarks/soak_inside.py``
says how it looks). The test
asserts what it saw:

- every round played games, and nothing went wrong (no game or client that did not end in time);
- the process's descriptors came back after every round;
- none of the service's objects waited for the cyclic collector (each finished game, connection,
  handshake, stream is freed at once, by reference counting);
- what was allocated from the reference round on and is still alive at the end stays under
  L{BYTES_PER_GAME} a game of the measured rounds, plus L{SLACK} for what a process keeps whatever it
  does (dictionaries that grew a size, small bounded caches); the reactor's cancelled timers, which Twisted
  leaves in its heap for a while, are dropped before each snapshot: a leak of a kilobyte a game fails
  (shown by hand, with a kilobyte kept per finished game in each service's room).

``benchmarks/soak.py`` without ``--inside`` is the long version, against a ``twistd`` process, in resident
memory (``docs/performance.md``, *a semester's memory*).
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.error import ProcessExitedAlready
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure
from twisted.trial.unittest import TestCase

from .processes import ENVIRONMENT, ROOT

BYTES_PER_GAME = 512
SLACK = 24 * 1024
LEAK_GAMES = SLACK // (1024 - BYTES_PER_GAME) + 1
"""Games the measured rounds must play for a kilobyte kept a game to be over the bound (49): rounds last their
seconds, and on a busy machine two of them played 21 to 34 games of some services, where a kilobyte a game
hid in the slack; the soak plays more rounds until it has these."""


class Soak(ProcessProtocol):
    """The soak's process: its output, its exit status; killed by the test's cleanup if it still runs."""

    def __init__(self) -> None:
        self.out, self.err = b"", b""
        self.ended: Deferred[int] = Deferred()

    def outReceived(self, data: bytes) -> None:
        self.out += data

    def errReceived(self, data: bytes) -> None:
        self.err += data

    def processEnded(self, reason: Failure) -> None:
        code = getattr(reason.value, "exitCode", None)
        self.ended.callback(-1 if code is None else code)  # None: ended by a signal

    def kill(self) -> Deferred[int] | None:
        """Kill it if it still runs, and wait for its end (the reactor is left clean)."""
        if self.ended.called or self.transport is None:
            return None
        with contextlib.suppress(ProcessExitedAlready):
            self.transport.signalProcess("KILL")
        return self.ended


class SoakTests(TestCase):
    timeout = 300

    @inlineCallbacks
    def soak(self, service: str, seconds: float, games: int, churn: int, *more: str, rounds: int = 2) -> Any:
        """At least ``rounds`` measured rounds, and more until they played L{LEAK_GAMES} games."""
        arguments = ["--inside", "--json", "--only", service, "--rounds", str(rounds), *more]
        arguments += ["--min-games", str(LEAK_GAMES)]
        arguments += ["--seconds", str(seconds), "--games", str(games), "--churn", str(churn)]
        soak = Soak()
        command = [sys.executable, "-m", "benchmarks.soak", *arguments]
        reactor.spawnProcess(soak, command[0], command, env=ENVIRONMENT, path=str(ROOT))
        self.addCleanup(soak.kill)
        code = yield soak.ended
        self.assertEqual(code, 0, soak.err.decode("utf-8", "replace"))
        found = json.loads(soak.out.decode("utf-8").strip().splitlines()[-1])
        machine = (
            f"this soak ran {found['ran']:.1f} s on a processor and waited {found['waited']:.1f} s for one "
            "(ready to run, the machine busy)"
        )
        self.assertEqual(found["problems"], [], machine)
        self.assertTrue(all(played > 0 for played, _ in found["rounds"]), f"{found['rounds']}; {machine}")
        self.assertGreaterEqual(
            found["games"],
            LEAK_GAMES,
            f"the measured rounds played {found['games']} games ({found['rounds']}): too few for a kilobyte kept "
            f"a game to be over the bound; {machine}",
        )
        self.assertEqual(found["descriptors"], [], "descriptors still open after a round")
        self.assertEqual(found["cycles"], {}, "the service's objects left to the cyclic collector")
        bound = BYTES_PER_GAME * found["games"] + SLACK
        self.assertLessEqual(
            found["grown"],
            bound,
            f"{found['grown']} bytes kept over {found['games']} games (bound {bound}); allocated by:\n"
            + "\n".join(found["top"]),
        )
        return found

    def test_socha(self) -> Deferred[Any]:
        """Games played to their end, and clients that vanish in the waiting room, mid-game and mid-move; the
        games are velhanet's tic-tac-toe, the same protocol as Piranhas at a tenth of the CPU a game (the
        benchmark soaks Piranhas: docs/performance.md)."""
        return self.soak("socha", 2, 40, 30, "--socha-game", "velhanet_tictactoe")

    def test_gambit(self) -> Deferred[Any]:
        """Games of 30 plies; pairs where one resets mid-game, half messages, lone CREATEs."""
        return self.soak("gambit", seconds=2, games=10, churn=30)

    def test_web(self) -> Deferred[Any]:
        """gambit-server --web: its games, and spectators of the list, the pages, the streams and boards coming
        and going (by closing or by a reset)."""
        return self.soak("web", seconds=2, games=10, churn=40)

    def test_velha(self) -> Deferred[Any]:
        """A peer invited to one best-of-5 after another while datagrams from thousands of nicks arrive (both
        peers are velhanet's, and both are counted). Its games are series: a round of 8 s plays 4 to 8 of them,
        so this soak plays six to twelve rounds until it measured enough."""
        return self.soak("velha", seconds=8, games=1, churn=500)

    def test_gobang(self) -> Deferred[Any]:
        """Client processes that play game after game, players killed mid-game, kibitzers, words from no game."""
        return self.soak("gobang", seconds=3, games=3, churn=8)
