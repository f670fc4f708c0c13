"""One submission as one task of the cluster: what a worker does with it (``velhanet-grade``'s side of
``velhanet.cluster``, as ``velhanet.league.task`` is the league's).

``gradeSubmission`` runs in a Dask worker (a thread of it). It checks that the
worker runs the same velhanet as the command (``refuseOtherVersions``), unpacks
the submission's archive into the worker's cache once per version, and starts
``python -m velhanet.conformance.gradeone`` with the submission on its stdin
(and the language the command speaks: its reports are in it, whatever the
worker's own environment asks for).
That process dies with the worker (``PR_SET_PDEATHSIG``), and the student's
program with it: a worker killed in the middle of a check leaves nothing
behind, and the scheduler gives the task to another worker, whose result is
the one recorded.
"""

from __future__ import annotations

import json
import time
from typing import Any

from velhanet.cluster.archive import unpacked
from velhanet.cluster.workers import refuseOtherVersions, taskProcess
from velhanet.i18n import N_, language

NO_RESULT = N_("the grading process ended with status {status} without a result: {said}")


def gradeSubmission(spec: dict[str, Any], archive: bytes, expected: str) -> dict[str, Any]:
    """Grade the submission ``spec`` (as ``gradeone`` reads it, without its folder yet): its result."""
    address = refuseOtherVersions(expected)
    spec = {**spec, "folder": str(unpacked(spec["version"], archive))}
    began = time.time()
    child = taskProcess("velhanet.conformance.gradeone")
    stdout, stderr = child.communicate(json.dumps(spec))
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[7:])
            result.update(worker=address, began=began, ended=time.time())
            return result
    said = stderr.strip().splitlines()
    speaking = language(spec.get("language") or "en")  # the command's language, not the worker's
    raise RuntimeError(speaking.gettext(NO_RESULT).format(status=child.returncode, said=said[-1] if said else ""))
