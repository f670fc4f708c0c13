"""One game as one Dask task: what a worker does with it.

``playGame`` runs in a Dask worker (a thread of it). It checks that the
worker runs the same velhanet as the league (``codeVersion``; otherwise
``WrongVersion``, which ends the run with a clear message), unpacks the two
players' archives into its cache, and starts ``python -m velhanet.league.game``
with the game on its stdin. That process dies with the worker
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
import subprocess
import threading
from typing import IO, Any

from velhanet.cluster.archive import unpacked
from velhanet.cluster.workers import refuseOtherVersions, taskProcess
from velhanet.i18n import language

LIVE = "velhanet-league-live"
"""The Dask topic of the games' live events."""

_spares: list[subprocess.Popen[str]] = []
"""Game processes started ahead, waiting for a game on stdin; one per worker thread at most."""
_sparesLock = threading.Lock()


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
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps(spec))
    child.stdin.close()
    with _sparesLock:
        _spares.append(_startGameProcess())  # the next game's, ready when it comes
    errors = _StreamTail(child.stderr)  # read beside stdout: a child that writes much there never waits on it
    outcome: dict[str, Any] | None = None
    for line in child.stdout:
        if line.startswith("RESULT "):
            outcome = json.loads(line[7:])
        elif line.startswith("EVENT ") and publish is not None:
            publish(json.loads(line[6:]))
    status = child.wait()
    if outcome is None:
        said = errors.text().strip().splitlines()
        texts = language(spec.get("language") or "en")  # the run's, not this worker's
        raise RuntimeError(
            texts.gettext("the game process ended with status {status} without a result: {said}").format(
                status=status, said=said[-1] if said else ""
            )
        )
    outcome["worker"] = address
    return outcome


class _StreamTail:
    """The last L{KEEP} characters of a child's stream, read by a thread of its own until the stream ends."""

    KEEP = 65536

    def __init__(self, stream: IO[str] | None) -> None:
        self.kept = ""
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        if stream is not None:
            for chunk in iter(lambda: stream.read(4096), ""):
                self.kept = (self.kept + chunk)[-self.KEEP :]

    def text(self) -> str:
        self.thread.join()
        return self.kept


def _startGameProcess() -> subprocess.Popen[str]:
    return taskProcess("velhanet.league.game")


def _gameProcess() -> subprocess.Popen[str]:
    """A spare game process still alive (it dies with the thread that started it), else a new one."""
    with _sparesLock:
        while _spares:
            spare = _spares.pop()
            if spare.poll() is None:
                return spare
    return _startGameProcess()


def _publisher(gameId: int) -> Any:
    """Events to the scheduler's topic C{LIVE}, which keeps only the last ones (``low-level-log-length``)."""
    from distributed import get_worker

    worker = get_worker()
    return lambda event: worker.log_event(LIVE, {"game": gameId, **event})
