"""The soak inside one process: the service as ``twistd`` builds it, its clients beside it, and what the process keeps.

``python -m benchmarks.soak --inside`` (and ``tests/test_soak.py``, which runs it as a process of its own):
the service is made from its plugin's options by its ``makeService`` and started in this process, on loopback,
and ``benchmarks/soak_load.py``'s clients drive it in the same reactor. A warm-up round, a reference round,
then the measured rounds; after each round the process's descriptors must be back to their number after the
warm-up (every connection, port and FIFO of the round closed on both sides; the warm-up's own connections
closed too, it may leave what a process opens once, a pipe of the reactor's). Three things are looked at:

- **cycles**: during the reference round the collector keeps what it finds (``gc.DEBUG_SAVEALL``): every object
  of the service's own modules among it is a finished game, connection or handshake that reference counting
  did not free, and that waited for the cyclic collector's next full pass;
- **memory kept**: ``tracemalloc`` counts, from the reference round on, what was allocated and is still alive
  after the last round (after a full collection), and which lines allocated most of it;
- **problems**: a game or client that did not end in time, a client that could not connect; beside them, how
  long the process ran and how long it waited for a processor (``/proc/self/task/*/schedstat``): the service
  and all its clients share one process, and on a busy machine a game that did not end in time is told from
  a game that hung by that wait.

The clients are in the same process, so what they kept would count too: they keep nothing per game. The process
logs to a file, as ``twistd`` does (a process that logs nowhere keeps its first 65,536 events in memory).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import heapq
import os
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twisted.internet.defer import maybeDeferred

from benchmarks.soak_load import (
    PIRANHAS_GAME,
    GambitLoad,
    GobangLoad,
    RoundCount,
    SochaLoad,
    SpectatorLoad,
    VelhaLoad,
    freeUdpPort,
    sleep,
)
from velhanet.sandbox.monitor import treeSchedule

VELHA_SOAKED, VELHA_INVITER = "127.0.0.71", "127.0.0.72"
VELHA_STORM = [f"127.0.0.{last}" for last in range(73, 80)]


def velhaOptions(port: int) -> list[str]:
    """Both peers of a velha soak: bots at full speed, every protocol timer at a tenth (a best-of-5 takes a
    fraction of a second); ``--start-grace 2`` (0.2 s then) leaves a busy machine the time to start a game."""
    return ["--bot", "--port", str(port), "--move-delay", "0", "--start-grace", "2", "--time-scale", "0.1"]


MACHINES = ("automat._typed.Typed<",)
"""The automat machines' instances: a room, a handshake, a match, a session."""
GAMBIT_SERVER = ("velhanet.gambit.protocol", "velhanet.gambit.lobby", "velhanet.gambit.room", *MACHINES)
SERVER_MODULES: dict[str, tuple[str, ...]] = {
    "socha": (
        *("velhanet.socha.protocol", "velhanet.socha.lobby", "velhanet.socha.room", "velhanet.socha.games"),
        *MACHINES,
    ),
    "gambit": GAMBIT_SERVER,
    "web": (*GAMBIT_SERVER, "velhanet.web."),
    "velha": ("velhanet.velha", "velhanet.games", *MACHINES),
    "gobang": ("velhanet.gobang", *MACHINES),
}
"""The modules whose objects are the service's (the clients here share some of the others, a decoder or a reader).
Both velha peers are servers."""

LEAVE_OUT: dict[str, str] = {"web": "*/chess/*"}
"""Allocations not counted, per service: the site keeps the last 32 finished games (``docs/security.md``), and
which of them have a board drawn (15 kB of SVG) and their moves as chess boards depends on which pages the
spectators opened. The chess library's allocations are left out; the records that hold them are counted."""


WARM_GAMES = {"web": 64}
"""Games the warm-up plays at least, in as many rounds as that takes (else one round): more than the spectators'
site keeps finished (32), so that the reference round starts with that cache full."""


MAX_MEASURED_ROUNDS = 16
"""Measured rounds at most, however few games they play (a soak never waits for ever)."""


@dataclass
class InsideResult:
    service: str
    rounds: list[tuple[int, int]] = field(default_factory=list)
    """(games, churned) of every round, the warm-up and the reference included."""
    games: int = 0
    """Games of the measured rounds (after the reference round)."""
    grown: int = 0
    """Bytes allocated from the reference round on and still alive after the last round."""
    top: list[str] = field(default_factory=list)
    """The lines that allocated most of it."""
    cycles: dict[str, int] = field(default_factory=dict)
    """The service's objects the collector found in cycles during the reference round, by type."""
    descriptors: list[str] = field(default_factory=list)
    """Descriptors still open after a round beyond those after the warm-up (empty: all were back)."""
    problems: list[str] = field(default_factory=list)
    ran: float = 0.0
    """Seconds this process ran on a processor, from the warm-up to the end."""
    waited: float = 0.0
    """Seconds its threads were ready to run and waited for a processor (a busy machine: a game that does
    not end in time then says why)."""


def started(reactor: Any, plugin: str, *arguments: str) -> Any:
    """The service of ``twistd PLUGIN ARGUMENTS``, started in this process."""
    from velhanet.gambit import tap as gambit
    from velhanet.gobang import tap as gobang
    from velhanet.socha import tap as socha
    from velhanet.velha import tap as velha

    tap: Any = {"socha-server": socha, "gambit-server": gambit, "gobang-server": gobang, "velha": velha}[plugin]
    options = tap.Options()
    options.parseOptions(list(arguments))
    service = tap.makeService(options, reactor)
    service.privilegedStartService()
    service.startService()
    return service


def listeningPort(service: Any, site: bool = False) -> int:
    """The port the service's game listener (or, with ``site``, its spectators' site) took."""
    from velhanet.startup import ListeningService
    from velhanet.web.site import WebService

    for child in service:
        if isinstance(child, ListeningService) and isinstance(child, WebService) == site and child.port is not None:
            return int(child.port.getHost().port)  # type: ignore[attr-defined]
    raise RuntimeError("the service listens nowhere")


async def startInside(
    reactor: Any, name: str, work: Path, sochaGame: str = PIRANHAS_GAME
) -> tuple[Any, list[Callable[[], object]]]:
    """The service of ``name`` in this process, the load that drives it, and what to stop afterwards."""
    loopback = "tcp:0:interface=127.0.0.1"
    if name in ("socha", "gambit", "web"):
        family = "socha-server" if name == "socha" else "gambit-server"
        service = started(reactor, family, "--listen", loopback, *(["--web", "0"] if name == "web" else []))
        port = listeningPort(service)
        if name == "socha":
            return SochaLoad(reactor, port, gameType=sochaGame), [service.stopService]
        games = GambitLoad(reactor, port)
        if name == "web":
            return SpectatorLoad(reactor, games, listeningPort(service, site=True)), [service.stopService]
        return games, [service.stopService]
    if name == "gobang":
        fifos = work / "fifos"
        fifos.mkdir()
        service = started(reactor, "gobang-server", "--fifo-dir", str(fifos))
        return GobangLoad(reactor, str(fifos), os.getpid()), [service.stopService]
    port = freeUdpPort(VELHA_SOAKED, VELHA_INVITER)
    soaked = started(
        reactor,
        "velha",
        "--nick",
        "Soak",
        "--interface",
        VELHA_SOAKED,
        "--announce",
        VELHA_INVITER,
        *velhaOptions(port),
    )
    inviter = started(
        reactor,
        "velha",
        "--nick",
        "Inviter",
        "--interface",
        VELHA_INVITER,
        "--announce",
        VELHA_SOAKED,
        *velhaOptions(port),
    )
    for _ in range(200):  # the inviter hears the soaked peer's first MSG01 at once, on loopback
        if inviter.peer.roster.get("Soak") is not None:
            break
        await sleep(reactor, 0.05)
    velha = VelhaLoad(reactor, inviter.peer, "Soak", (VELHA_SOAKED, port), VELHA_STORM)
    return velha, [velha.stop, inviter.stopService, soaked.stopService]


def ownCycles(garbage: list[Any], modules: tuple[str, ...]) -> dict[str, int]:
    """The types of ``modules`` whose objects are members of a reference cycle in ``garbage``, with how many.

    An object that only hangs off someone else's cycle is not counted: an outgoing TCP connection leaves
    Twisted's connector and client in a cycle, and the factory that made the connection hangs off it.
    """
    inGarbage = {id(found) for found in garbage}
    byKind: dict[str, list[Any]] = collections.defaultdict(list)
    for found in garbage:
        kind = f"{type(found).__module__}.{type(found).__qualname__}"
        if kind.startswith(modules):
            byKind[kind].append(found)
    return {kind: len(found) for kind, found in byKind.items() if any(_inCycle(one, inGarbage) for one in found[:3])}


def _inCycle(start: Any, inGarbage: set[int]) -> bool:
    """Does ``start`` reach itself through objects of the garbage?"""
    seen, todo = {id(start)}, [start]
    while todo:
        for referent in gc.get_referents(todo.pop()):
            if referent is start:
                return True
            if id(referent) in inGarbage and id(referent) not in seen:
                seen.add(id(referent))
                todo.append(referent)
    return False


def openDescriptors() -> list[str]:
    """What this process's descriptors are open on (``socket:[…]``, ``pipe:[…]``, paths)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the one listdir itself used, closed by now
            found.append(os.readlink(f"/proc/self/fd/{name}"))
    return sorted(found)


async def settled(reactor: Any, closed: Callable[[list[str]], bool], reference: list[str]) -> list[str]:
    """Wait (at most 10 s) until this process's open descriptors are ``closed``; [] then, else those open beyond
    ``reference``."""
    for _ in range(500):
        if closed(openDescriptors()):
            return []
        await sleep(reactor, 0.02)
    extra = collections.Counter(openDescriptors()) - collections.Counter(reference)
    return sorted(extra.elements())


async def timersDone(reactor: Any, idle: int) -> None:
    """Wait (at most 10 s) until no more timers are pending than when the service was ``idle``: what a round's
    last clients left running (a handshake's resends, a roster's expiry) is over before memory is measured, at
    the reference and at the end alike, so that live state is not counted as kept."""
    for _ in range(500):
        if len(reactor.getDelayedCalls()) <= idle:
            break
        await sleep(reactor, 0.02)
    dropCancelledTimers(reactor)


def dropCancelledTimers(reactor: Any) -> None:
    """Take the cancelled timers out of the reactor's heap, as it does itself only once more than 50 are
    cancelled and they are half of the heap (``ReactorBase._cancelCallLater``): until then each holds its
    function and arguments, up to some hundred of them, more or fewer at the reference than at the end depending
    on how a busy machine timed the last round. What a service keeps is measured without that noise."""
    pending = getattr(reactor, "_pendingTimedCalls", None)
    if pending is None:  # not a ReactorBase: nothing of the kind to drop
        return
    reactor._pendingTimedCalls = [call for call in pending if not call.cancelled]
    heapq.heapify(reactor._pendingTimedCalls)
    reactor._cancellations = 0


async def measureInside(
    reactor: Any,
    name: str,
    rounds: int,
    seconds: float,
    games: int,
    churn: int,
    work: Path,
    sochaGame: str = PIRANHAS_GAME,
    minGames: int = 0,
) -> InsideResult:
    """Warm-up, reference round, ``rounds`` measured rounds of the service ``name`` in this process, and more
    (up to L{MAX_MEASURED_ROUNDS} in all) until they played ``minGames``: rounds last their seconds, and on a
    busy machine they play fewer games, each of which a leak must show in to be told from what any process keeps."""
    result = InsideResult(name)
    load, stops = await startInside(reactor, name, work, sochaGame)
    after: list[str] = []

    async def round() -> RoundCount:
        count = await load.round(seconds, games, churn)
        result.rounds.append((count.games, count.churned))
        result.problems += count.problems
        if not result.descriptors:
            result.descriptors = await settled(reactor, lambda now: len(now) <= len(after), after)
        return count

    def sockets(descriptors: list[str]) -> int:
        return sum(descriptor.startswith("socket:") for descriptor in descriptors)

    ranBefore, waitedBefore = treeSchedule(os.getpid())
    try:
        before = openDescriptors()
        warmed = 0
        while not result.rounds or warmed < WARM_GAMES.get(name, 0):  # the warm-up: the first games fill caches
            warm = await load.round(seconds, games, churn)
            result.rounds.append((warm.games, warm.churned))
            result.problems += warm.problems
            warmed += warm.games
            if not warm.games:
                break
        # Its connections closed, it may have left what a process opens once (the reactor's pipe, /dev/null).
        result.descriptors = await settled(reactor, lambda now: sockets(now) <= sockets(before), before)
        after.extend(openDescriptors())
        idle = len(reactor.getDelayedCalls())
        gc.collect()
        tracemalloc.start(1)
        gc.set_debug(gc.DEBUG_SAVEALL)  # the collector keeps what it finds, to be looked at here
        try:
            await round()  # what one round's games leave until the next (kept games) is traced from here on
            gc.collect()
        finally:
            gc.set_debug(0)
        result.cycles = ownCycles(gc.garbage, SERVER_MODULES[name])
        del gc.garbage[:]
        await timersDone(reactor, idle)
        gc.collect()
        reference = tracemalloc.take_snapshot()
        measured = 0
        while measured < rounds or (result.games < minGames and measured < MAX_MEASURED_ROUNDS):
            result.games += (await round()).games
            measured += 1
        await timersDone(reactor, idle)
        gc.collect()
        last = tracemalloc.take_snapshot()
        tracemalloc.stop()
        if name in LEAVE_OUT:
            leaveOut = [tracemalloc.Filter(False, LEAVE_OUT[name])]
            reference, last = reference.filter_traces(leaveOut), last.filter_traces(leaveOut)
        result.grown = sum(stat.size_diff for stat in last.compare_to(reference, "filename"))
        result.top = [str(stat) for stat in last.compare_to(reference, "lineno")[:8]]
    finally:
        ranAfter, waitedAfter = treeSchedule(os.getpid())
        result.ran, result.waited = ranAfter - ranBefore, waitedAfter - waitedBefore
        for stop in stops:
            await maybeDeferred(stop)
    return result
