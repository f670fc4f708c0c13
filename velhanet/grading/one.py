"""Grading one submission, in a process of its own: ``python -m velhanet.grading.one SPEC RESULT``.

Every grading of a submission runs in such a process, on this machine
(``engines.LocalEngine``) or on a worker of a cluster (``task``): the checks
block, wait and sleep as a client of the protocol does, and a process of its
own keeps all of that away from the reactor that asked for the grading. It
reads the submission from the file SPEC (the L{GradeSettings} as data, the
student, the folder, its index), enters the user namespace the checks need
(before any thread: the checks run inside the program's own network, so that
the checks of two submissions graded at the same time never see each other's
traffic), starts the program in its sandbox with the placeholders of its
``velhanet-run`` filled in, checks it, stops it, and writes the result to the
file RESULT: the whole report (``checks.data``) and what the program printed
(up to the output limit). The report speaks the settings' language, the one
the grading was asked for, wherever this runs. The process dies with the
one that started it.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from velhanet.checks.base import Target
from velhanet.checks.data import reportToData
from velhanet.checks.runner import Report, runChecks, stoppedByDesign
from velhanet.checks.settings import DEFAULT_PORTS, CheckSettings, targetFor
from velhanet.cluster.workers import dieWithParent
from velhanet.grading.settings import GradeSettings
from velhanet.i18n import _, use
from velhanet.listening import freePort
from velhanet.sandbox import Sandbox, SandboxUnavailable
from velhanet.sandbox.blocking import BlockingProgram, SandboxStartFailed
from velhanet.sandbox.userns import enterUserNamespace

RUN_FILE = "velhanet-run"
START_WAIT = 10.0
ENDING_GRACE = 5.0
"""Seconds a program that a check stopped by design has to end by itself before it is stopped."""
OUTPUT_AFTER_EXIT = 2.0
"""Seconds an exited program's output is waited for before its last line is quoted (a whole suite run once
quoted nothing: the report was written before the reader thread had the words ``sh`` printed)."""


def _waitForTcp(port: int, program: BlockingProgram) -> None:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and not program.brokeALimit:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        time.sleep(0.1)


def _waitForFifo(directory: Path, program: BlockingProgram) -> int:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and not program.brokeALimit:
        for path in directory.iterdir():
            if path.name.startswith("gbs") and path.name[4:].isdigit():
                return int(path.name[4:])
        time.sleep(0.1)
    return 0


def _waitForPeer(chosen: Target, program: BlockingProgram) -> None:
    """Until something listens on the peer's UDP port (or the wait is over: canTest then says so)."""
    from velhanet.checks.velha import rules as velha  # the other families' gradings never load it (0.1 s a process)

    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and velha.canTest(chosen) is not None:
        time.sleep(0.2)


def _exitedEarly(family: str, student: str, program: BlockingProgram) -> Report | None:
    """A program that ended (or was stopped) before it could be tested: the report says so."""
    status = program.poll()
    if status is None and not program.brokeALimit:
        return None
    report = Report(family, student)
    if program.brokeALimit:
        report.cannotTest = _("the program was stopped before it could be tested")
        return report
    program.outputRead(OUTPUT_AFTER_EXIT)  # its last line may still be in the pipe
    lines = program.tail.decode("utf-8", "replace").strip().splitlines()
    said = lines[-1].strip() if lines else ""
    if said:
        report.cannotTest = _("the program exited with status {status} before it could be tested: {said}").format(
            status=status, said=said
        )
    else:
        report.cannotTest = _("the program exited with status {status} before it could be tested").format(status=status)
    return report


def gradeOne(
    settings: GradeSettings,
    student: str,
    submission: Path,
    index: int,
    sandbox: Sandbox,
    log: Path | None = None,
) -> Report:
    """Start one submission (in its sandbox), check it from inside its network, stop it; its output goes to ``log``.

    ``index`` tells submissions graded at the same time apart (a JogoVelha peer's addresses)."""
    family = settings.family
    runFile = submission / RUN_FILE
    if not runFile.exists():
        report = Report(family, student)
        report.cannotTest = _("no {file} file in the submission").format(file=RUN_FILE)
        return report
    template = runFile.read_text(encoding="utf-8").strip()
    checks = CheckSettings(
        family, strict=settings.strict, repeat=settings.repeat, only=settings.only, sandbox=settings.sandbox
    )
    values = {"port": "", "fifo_dir": "", "address": "", "announce": ""}
    shared: list[Path] = []
    if family in ("gambit", "socha"):
        values["port"], values["address"] = str(freePort()), "127.0.0.1"  # where the checker connects
        checks = dataclasses.replace(checks, target=f"127.0.0.1:{values['port']}")
    elif family == "gobang":
        values["fifo_dir"] = tempfile.mkdtemp(prefix="velhanet-grade-")
        shared.append(Path(values["fifo_dir"]))
    elif family == "velha":
        net = f"127.0.{100 + index % 100}"
        # In its own network (the sandbox's) a peer has the protocol's own port, as on a LAN; else a free one.
        port = DEFAULT_PORTS["velha"] if sandbox.active else freePort(socket.SOCK_DGRAM)
        values.update(address=f"{net}.2", announce=f"{net}.1", port=str(port))
        checks = dataclasses.replace(
            checks, target=values["address"], local=values["announce"], local2=f"{net}.3", local3=f"{net}.4"
        )
        checks = dataclasses.replace(checks, port=port, expectInvite=True)
    if family == "socha-player":
        checks = dataclasses.replace(checks, command=template, cwd=str(submission))
        chosen = targetFor(checks, folder=submission, sandbox=sandbox, log=log)
        report = runChecks(family, chosen, settings.only, repeat=settings.repeat)
        report.program = chosen.extra.get("verdict")
        return report
    command = template
    for name, value in values.items():
        command = command.replace("{" + name + "}", value)
    try:
        program = BlockingProgram(sandbox, ["/bin/sh", "-c", command], folder=submission, shared=shared, output=log)
    except SandboxStartFailed as error:
        report = Report(family, student)
        report.cannotTest = str(error)
        return report
    checked: Report | None = None
    try:
        with program.network():
            extra: dict[str, object] = {}
            if family == "gobang":
                pid = _waitForFifo(Path(values["fifo_dir"]), program)
                checks = dataclasses.replace(checks, target=str(pid), fifoDir=values["fifo_dir"], destructive=True)
                extra.update(hostPid=program.hostPid(pid), agentPrefix=program.inPidNamespace())
            elif family != "velha":
                _waitForTcp(int(values["port"]), program)
            chosen = targetFor(checks, **extra)
            if family == "velha":
                _waitForPeer(chosen, program)
            checked = _exitedEarly(family, student, program)
            if checked is None:
                checked = runChecks(family, chosen, settings.only, repeat=settings.repeat)
                checked.target = f"{student}: {checked.target}"
    finally:
        # A program a check stopped by design (Gobang's Kill) is given a moment to end by itself: its exit
        # status is then its own every time, not whether it was quicker than velhanet's stop.
        ending = checked is not None and stoppedByDesign(checked)
        verdict = program.stop(grace=ENDING_GRACE if ending else 0.0)
    checked.program = verdict
    return checked


def gradeFromSpec(spec: dict[str, Any], log: Path) -> dict[str, Any]:
    """One submission as its grading task describes it (``GradeSettings`` as data, the student, the folder,
    its index): ``{"report": …, "log": base64 of what its program printed, or None}``."""
    settings = GradeSettings.fromData(spec["settings"])
    use(settings.language or None)  # the command's, not this machine's environment's
    try:
        sandbox = Sandbox.forCommand(settings.sandbox, say=lambda line: None)
    except SandboxUnavailable as error:
        report = Report(settings.family, spec["student"], cannotTest=str(error))
        return {"report": reportToData(report), "log": None}
    report = gradeOne(settings, spec["student"], Path(spec["folder"]), int(spec["index"]), sandbox, log)
    printed = base64.b64encode(log.read_bytes()).decode("ascii") if log.exists() else None
    return {"report": reportToData(report), "log": printed}


def main() -> None:
    """``python -m velhanet.grading.one SPEC RESULT``: the submission SPEC (JSON) graded, its result in RESULT."""
    specPath, resultPath = Path(sys.argv[1]), Path(sys.argv[2])
    dieWithParent()
    spec = json.loads(specPath.read_text(encoding="utf-8"))
    if spec["settings"]["sandbox"]["mode"] != "off":
        enterUserNamespace(privateNetwork=True)  # before any thread; the checks run inside the program's network
    with tempfile.TemporaryDirectory(prefix="velhanet-grade-log-") as scratch:
        result = gradeFromSpec(spec, Path(scratch) / "program.log")
    written = resultPath.with_suffix(".partial")
    written.write_text(json.dumps(result), encoding="utf-8")
    written.replace(resultPath)  # whole or not at all: a reader never sees half a result


if __name__ == "__main__":
    main()
