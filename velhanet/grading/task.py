"""One submission as one task of a Dask cluster: what a worker does with it (the grading's side of
``velhanet.cluster``, as ``velhanet.league.task`` is the league's).

``gradeSubmission`` runs in a Dask worker (a thread of it). It checks that the
worker runs the same velhanet as the run (``refuseOtherVersions``), unpacks
the submission's archive into the worker's cache once per version, and runs
``python -m velhanet.grading.one`` through the launch core (velhanet's own
process, the sandbox off: ``workers.taskProgram``), which grades it in the
language of the run, whatever the worker's own environment asks for. That
process dies with the worker, and the student's program with it: a worker
killed in the middle of a check leaves nothing behind, and the scheduler
gives the task to another worker, whose result is the one recorded.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from velhanet.cluster.archive import unpacked
from velhanet.cluster.workers import refuseOtherVersions, taskProgram
from velhanet.i18n import N_, language

NO_RESULT = N_("the grading process ended with status {status} without a result: {said}")


def runGrading(spec: dict[str, Any], scratch: Path) -> tuple[dict[str, Any] | None, int | None, str]:
    """Grade ``spec`` (as ``one`` reads it) in a process of its own, waiting for it: (its result or None,
    its exit status, the last line it printed)."""
    specPath, resultPath = scratch / "spec.json", scratch / "result.json"
    specPath.write_text(json.dumps(spec), encoding="utf-8")
    program = taskProgram("velhanet.grading.one", str(specPath), str(resultPath))
    verdict = program.wait()
    said = program.output.lastLine()
    if not resultPath.exists():
        return None, verdict.status, said
    return json.loads(resultPath.read_text(encoding="utf-8")), verdict.status, said


def gradeSubmission(spec: dict[str, Any], archive: bytes, expected: str) -> dict[str, Any]:
    """Grade the submission ``spec`` (its folder not yet among its values) on this worker: its result."""
    address = refuseOtherVersions(expected)
    spec = {**spec, "folder": str(unpacked(spec["version"], archive))}
    began = time.time()
    with tempfile.TemporaryDirectory(prefix="velhanet-task-") as scratch:
        result, status, said = runGrading(spec, Path(scratch))
    if result is None:
        speaking = language(spec["settings"].get("language") or "en")  # the run's language, not the worker's
        raise RuntimeError(speaking.gettext(NO_RESULT).format(status=status, said=said))
    result.update(worker=address, began=began, ended=time.time())
    return result
