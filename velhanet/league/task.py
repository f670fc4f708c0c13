"""One game as one Dask task: what a worker does with it.

``playGame`` runs in a Dask worker (a thread of it). It checks that the
worker runs the same velhanet as the league (``codeVersion``; otherwise
``WrongVersion``, which ends the run with a clear message), unpacks the two
players' archives into its cache, and starts ``python -m velhanet.league.game``
with the game on its stdin, through the launch core (velhanet's own
process, the sandbox off: ``workers.taskProgram``). That process dies with the worker
(``PR_SET_PDEATHSIG``), and its sandboxes with it: a worker killed in the
middle of a game leaves nothing behind, and the scheduler gives the task to
another worker. While a game is played, the worker already starts the
process of its next one (``spare``), which does its imports and waits for
its game on stdin: the next game begins without that start-up time.
``EVENT`` lines go to the run's spectators' site through
Dask's structured events (topic ``LIVE``), when the run watches.

What a person reads of a game (its reason, the sandbox's causes, this task's
own errors) is in the language of the command that started the run, which
the game's ``spec`` carries (``language``): never the worker's environment's.
"""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

from velhanet.cluster.archive import unpacked
from velhanet.cluster.workers import refuseOtherVersions, taskProgram
from velhanet.i18n import language

LIVE = "velhanet-league-live"
"""The Dask topic of the games' live events."""

_spares: list[GameProcess] = []
"""Game processes started ahead, waiting for a game on stdin; one per worker thread at most."""
_sparesLock = threading.Lock()


class GameProcess:
    """``python -m velhanet.league.game``, started through the launch core (``workers.taskProgram``): its
    ``EVENT`` and ``RESULT`` lines read as they come, the rest of what it prints kept as its tail."""

    def __init__(self) -> None:
        self.lines = queue.Queue[str | None]()
        self._partial = b""
        self.program = taskProgram("velhanet.league.game", stdin=True, reader=self._read)

    def _read(self, chunk: bytes) -> None:
        if not chunk:  # the end of its output
            self.lines.put(None)
            return
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        for line in complete:
            if line.startswith((b"RESULT ", b"EVENT ")):
                self.lines.put(line.decode("utf-8", "replace"))

    def alive(self) -> bool:
        return self.program.poll() is None


def playGame(gameId: int, spec: dict[str, Any], archives: list[bytes], expected: str) -> dict[str, Any]:
    """Play game ``gameId`` (``spec`` as ``game.py`` reads it, its teams without folders yet); its outcome."""
    address = refuseOtherVersions(expected)
    spec = dict(spec)
    spec["teams"] = [
        {**team, "folder": str(unpacked(team["version"], archive))}
        for team, archive in zip(spec["teams"], archives, strict=True)
    ]
    publish = _publisher(gameId) if spec.get("live") else None
    child = _gameProcess()
    child.program.write(json.dumps(spec).encode())
    child.program.closeStdin()
    with _sparesLock:
        _spares.append(GameProcess())  # the next game's, ready when it comes
    outcome: dict[str, Any] | None = None
    for line in iter(child.lines.get, None):
        if line.startswith("RESULT "):
            outcome = json.loads(line[7:])
        elif publish is not None:
            publish(json.loads(line[6:]))
    verdict = child.program.wait()
    if outcome is None:
        texts = language(spec.get("language") or "en")  # the run's, not this worker's
        raise RuntimeError(
            texts.gettext("the game process ended with status {status} without a result: {said}").format(
                status=verdict.status, said=child.program.output.lastLine()
            )
        )
    outcome["worker"] = address
    return outcome


def _gameProcess() -> GameProcess:
    """A spare game process still alive (it dies with the worker that started it), else a new one."""
    with _sparesLock:
        while _spares:
            spare = _spares.pop()
            if spare.alive():
                return spare
    return GameProcess()


def _publisher(gameId: int) -> Any:
    """Events to the scheduler's topic C{LIVE}, which keeps only the last ones (``low-level-log-length``)."""
    from distributed import get_worker

    worker = get_worker()
    return lambda event: worker.log_event(LIVE, {"game": gameId, **event})
