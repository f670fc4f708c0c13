"""Grading one submission, in a process of its own: ``python -m velhanet.conformance.gradeone``.

``velhanet-grade`` runs one such process per submission, on this machine or on
a worker of the cluster (``gradetask``). It reads the submission on stdin (a
JSON object: family, student, folder, index, options, the sandbox's settings),
enters the user namespace the checks need (before any thread: the checks run
inside the program's own network, so that the checks of two submissions graded
at the same time never see each other's traffic), starts the program in its
sandbox with the placeholders of its ``velhanet-run`` filled in, checks it,
stops it, and prints one line ``RESULT {json}``: the whole report
(``reportdata``) and what the program printed (up to the output limit). The
report speaks the submission's ``language``, the one ``velhanet-grade`` was
told (``--language``) or found in its environment, wherever this runs.
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

from velhanet.conformance import velha
from velhanet.conformance.base import Target
from velhanet.conformance.report import DEFAULT_PORTS, parseArguments, targetFrom
from velhanet.conformance.reportdata import reportToData
from velhanet.conformance.runner import Report, runChecks
from velhanet.i18n import _, current, use
from velhanet.listening import freePort
from velhanet.sandbox import Sandbox, SandboxUnavailable, settingsFrom
from velhanet.sandbox.blocking import BlockingProgram, SandboxStartFailed
from velhanet.sandbox.limits import ProgramLimits, SandboxSettings
from velhanet.sandbox.userns import enterUserNamespace

RUN_FILE = "velhanet-run"
START_WAIT = 10.0


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
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and velha.canTest(chosen) is not None:
        time.sleep(0.2)


def _exitedEarly(family: str, student: str, program: BlockingProgram, log: Path | None) -> Report | None:
    """A program that ended (or was stopped) before it could be tested: the report says so."""
    status = program.poll()
    if status is None and not program.brokeALimit:
        return None
    report = Report(family, student)
    if program.brokeALimit:
        report.cannotTest = _("the program was stopped before it could be tested")
        return report
    said = ""
    if log is not None:
        with contextlib.suppress(OSError):
            lines = log.read_bytes()[-4096:].decode("utf-8", "replace").strip().splitlines()
            said = lines[-1].strip() if lines else ""
    if said:
        report.cannotTest = _("the program exited with status {status} before it could be tested: {said}").format(
            status=status, said=said
        )
    else:
        report.cannotTest = _("the program exited with status {status} before it could be tested").format(status=status)
    return report


def gradeOne(
    family: str,
    student: str,
    submission: Path,
    index: int,
    options: list[str],
    log: Path | None = None,
    sandbox: Sandbox | None = None,
    only: str = "",
) -> Report:
    """Start one submission (in its sandbox), check it from inside its network, stop it; its output goes to ``log``.

    The checks' options are parsed as ``velhanet-check``'s, with ``--language`` of the language this process
    speaks (a parser sets the language it is given, the environment's if none)."""
    options = [*options, "--language", current().code]
    sandbox = sandbox or Sandbox.forCommand(settingsFrom(parseArguments(["gambit", *options])), say=lambda line: None)
    runFile = submission / RUN_FILE
    if not runFile.exists():
        report = Report(family, student)
        report.cannotTest = _("no {file} file in the submission").format(file=RUN_FILE)
        return report
    template = runFile.read_text(encoding="utf-8").strip()
    values = {"port": "", "fifo_dir": "", "address": "", "announce": ""}
    arguments: list[str] = []
    shared: list[Path] = []
    if family in ("gambit", "socha"):
        values["port"], values["address"] = str(freePort()), "127.0.0.1"  # where the checker connects
        arguments = ["--target", f"127.0.0.1:{values['port']}"]
    elif family == "gobang":
        values["fifo_dir"] = tempfile.mkdtemp(prefix="velhanet-grade-")
        shared.append(Path(values["fifo_dir"]))
    elif family == "velha":
        net = f"127.0.{100 + index % 100}"
        # In its own network (the sandbox's) a peer has the protocol's own port, as on a LAN; else a free one.
        port = DEFAULT_PORTS["velha"] if sandbox.active else freePort(socket.SOCK_DGRAM)
        values.update(address=f"{net}.2", announce=f"{net}.1", port=str(port))
        arguments = ["--target", values["address"], "--local", values["announce"], "--local2", f"{net}.3"]
        arguments += ["--local3", f"{net}.4", "--port", values["port"], "--expect-invite"]
    if family == "socha-player":
        parsed = parseArguments([family, "--command", template, *options])
        chosen = targetFrom(parsed)
        chosen.extra.update(cwd=str(submission), folder=submission, sandbox=sandbox, log=log)
        report = runChecks(family, chosen, only, repeat=parsed.repeat)
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
            if family == "gobang":
                pid = _waitForFifo(Path(values["fifo_dir"]), program)
                arguments = ["--target", str(pid), "--fifo-dir", values["fifo_dir"], "--destructive"]
            elif family != "velha":
                _waitForTcp(int(values["port"]), program)
            parsed = parseArguments([family, *arguments, *options])
            chosen = targetFrom(parsed)
            if family == "gobang":
                chosen.extra.update(hostPid=program.hostPid(chosen.pid), agentPrefix=program.inPidNamespace())
            if family == "velha":
                _waitForPeer(chosen, program)
            checked = _exitedEarly(family, student, program, log)
            if checked is None:
                checked = runChecks(family, chosen, only, repeat=parsed.repeat)
                checked.target = f"{student}: {checked.target}"
    finally:
        verdict = program.stop()
    checked.program = verdict
    return checked


def settingsToData(settings: SandboxSettings) -> dict[str, Any]:
    return {"mode": settings.mode, "limits": dataclasses.asdict(settings.limits)}


def settingsFromData(data: dict[str, Any]) -> SandboxSettings:
    return SandboxSettings(str(data["mode"]), ProgramLimits(**data["limits"]))


def main() -> None:
    """One submission from stdin, its ``RESULT`` line on stdout."""
    spec = json.loads(sys.stdin.read())
    use(spec.get("language"))  # the command's, not this machine's environment's
    settings = settingsFromData(spec["sandbox"])
    if settings.mode != "off":
        enterUserNamespace(privateNetwork=True)  # before any thread; the checks run inside the program's network
    try:
        sandbox = Sandbox.forCommand(settings, say=lambda line: None)
    except SandboxUnavailable as error:
        report = Report(spec["family"], spec["student"], cannotTest=str(error))
        print("RESULT " + json.dumps({"report": reportToData(report), "log": None}), flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="velhanet-grade-log-") as scratch:
        log = Path(scratch) / "program.log"
        report = gradeOne(
            spec["family"],
            spec["student"],
            Path(spec["folder"]),
            int(spec["index"]),
            list(spec["options"]),
            log,
            sandbox,
            spec["only"],
        )
        printed = base64.b64encode(log.read_bytes()).decode("ascii") if log.exists() else None
    result = {"report": reportToData(report), "log": printed}
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
