"""The cluster's workers: connecting to them, checking they run this velhanet, and the task's side of it.

Dask (``distributed``) is an extra (``pip install 'velhanet[cluster]'``): a class is graded on this machine
without it (``local.LocalEngine``); what needs it (``--scheduler``, ``velhanet-league run``) asks
L{requireDask} first, which says in one line which command installs it.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from velhanet.i18n import _
from velhanet.sandbox.blocking import BlockingProgram
from velhanet.sandbox.sandbox import Sandbox

PR_SET_PDEATHSIG = 1

QUIET_DASK = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}
"""Dask's monitoring for its dashboards, which velhanet does not open: with Dask's defaults (a statistical
profile every 10 ms, an event-loop tick every 20 ms) an idle LocalCluster of 4 workers takes a quarter of a
core, with these a twentieth (measured in docs/performance.md) — time the players' turns would lose."""


CLUSTER_INSTALL = "pip install 'velhanet[cluster]'"
"""The command that installs Dask's distributed beside velhanet, as the refusals name it."""


class DaskMissing(Exception):
    """Something that needs Dask was asked for, and this installation has none: the one line says how to get it."""


def requireDask(what: str, install: str = CLUSTER_INSTALL) -> None:
    """Nothing if Dask's ``distributed`` can be imported, else L{DaskMissing} naming ``what`` and ``install``."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise DaskMissing(
            _("{what} needs Dask, which this installation lacks: {install}").format(what=what, install=install)
        ) from None


class RunRefused(Exception):
    """The run cannot start or go on (a worker of another velhanet, a scheduler gone): the line says why."""


class WrongVersion(Exception):
    """A worker runs another velhanet than the run: its results would not be the same.

    Raised on the worker, said by the command: it carries the facts, and its text is made where it is read,
    in the language of the command that started the run (not the worker's)."""

    def __init__(self, address: str, version: str, expected: str) -> None:
        super().__init__(address, version, expected)  # what pickling gives back to the command
        self.address, self.version, self.expected = address, version, expected

    def __str__(self) -> str:
        return _("the worker at {address} runs velhanet {version}, the run {expected}").format(
            address=self.address, version=self.version, expected=self.expected
        )


def codeVersion() -> str:
    """velhanet's version and a hash of its own code: what every worker must run too."""
    import velhanet

    package = Path(velhanet.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return f"{velhanet.__version__}+{digest.hexdigest()[:10]}"


def localCluster(workers: int) -> tuple[Any, Any]:
    """A client and its LocalCluster of one-thread worker processes: pinned to loopback, no dashboard, quiet."""
    import dask
    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    dask.config.set(QUIET_DASK)
    local = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address="127.0.0.1:0",  # None still serves it, on 8787: a second cluster here warns
        worker_dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    return Client(local), local


def connect(scheduler: str | None, workers: int) -> tuple[Any, Any]:
    """(the client, the LocalCluster it runs on or None): ``scheduler`` if given, else ``workers`` here.

    Needs Dask: the caller has asked L{requireDask}."""
    from distributed import Client

    if scheduler:
        return Client(scheduler, timeout="30s"), None
    return localCluster(max(1, workers))


def checkWorkers(client: Any, what: str) -> str:
    """This velhanet's version, once every worker runs it too; else L{RunRefused} naming one that does not.

    ``what`` names the run in the reader's language (``_("this league")``)."""
    expected = codeVersion()
    versions = client.run(codeVersion)
    if not versions:
        raise RunRefused(_("the cluster has no worker"))
    wrong = {address: version for address, version in versions.items() if version != expected}
    if wrong:
        address, version = sorted(wrong.items())[0]
        raise RunRefused(
            _(
                "the worker at {address} runs velhanet {version}, {what} {expected}:"
                " install the same velhanet on every worker (pip install the same checkout or wheel)"
            ).format(address=address, version=version, what=what, expected=expected)
        )
    return expected


def workerCount(client: Any) -> int:
    """Worker threads the cluster has now: tasks it runs at once."""
    info = client.scheduler_info()
    return sum(int(worker.get("nthreads", 1)) for worker in info.get("workers", {}).values())


# -- on a worker ----------------------------------------------------------------------------


def refuseOtherVersions(expected: str) -> str:
    """On a worker, before a task: this worker's address, or L{WrongVersion} if it runs another velhanet."""
    mine = codeVersion()
    address = workerAddress()
    if mine != expected:
        raise WrongVersion(address, mine, expected)
    return address


def workerAddress() -> str:
    """The Dask worker's address; on this machine without Dask, ``local:`` and the thread that runs the task."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"local:{threading.current_thread().name}"


PARENT_VARIABLE = "VELHANET_PARENT"
"""The pid of the process that started a task's process: it dies with that one (L{dieWithParent})."""


def taskEnvironment() -> dict[str, str]:
    """The environment of a task's process started here: this one's, and this process as its parent."""
    return {**os.environ, PARENT_VARIABLE: str(os.getpid())}


def dieWithParent() -> None:
    """First thing in a task's process (a grading, a league's game): it dies with the process that started it
    (``PR_SET_PDEATHSIG``), and its sandboxes with it; if that one is gone already, it ends at once."""
    parent = int(os.environ.get(PARENT_VARIABLE) or 0)
    if not parent:
        return
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the line above: nobody waits for this process
        os._exit(1)


def taskProgram(
    module: str, *arguments: str, stdin: bool = False, reader: Callable[[bytes], None] | None = None
) -> BlockingProgram:
    """``python -m module arguments`` for a task, started through the launch core with the sandbox off (it is
    velhanet's own): its output's tail kept, and the cause when it ends; it dies with this process."""
    return BlockingProgram(
        Sandbox.off(),
        [sys.executable, "-m", module, *arguments],
        environment=taskEnvironment(),
        stdin=stdin,
        reader=reader,
    )


def holding(archive: bytes) -> bytes:
    """The task whose result is a program's archive: Dask recomputes a task whose worker died, not scattered data."""
    return archive
