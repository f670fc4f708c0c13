"""Run a few hostile programs through the blocking sandbox and print each verdict as one JSON line.

    python3 tests/sandbox_probe.py

Needs only the standard library and ``velhanet.sandbox`` (no Twisted), so
that a plain system Python can run it as another, ordinary user: the
unprivileged path (a user namespace of its own, no cgroup, setrlimit).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from velhanet.sandbox.limits import MIB, ProgramLimits, SandboxSettings
from velhanet.sandbox.userns import enterUserNamespace

PROGRAMS = {
    "honest": "print('hello from', __import__('os').getcwd())",
    "forkbomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
    "memoryhog": "hoard = []\nwhile True:\n    hoard.append(bytearray(8 * 1024 * 1024))",
    "connector": "import socket, time\nsocket.socket().connect_ex(('198.18.0.9', 80))\ntime.sleep(30)",
    "orphaner": "import subprocess\nsubprocess.Popen(['sleep', '600'])",
}


def main() -> None:
    uid = os.getuid()  # before the user namespace, in which it is 0
    enterUserNamespace()
    from velhanet.sandbox.blocking import BlockingProgram
    from velhanet.sandbox.sandbox import Sandbox

    limits = ProgramLimits(memory=256 * MIB, cpu=20, processes=32, disk=16 * MIB)
    sandbox = Sandbox.forCommand(SandboxSettings("on", limits), say=print)
    for name, code in PROGRAMS.items():
        folder = Path(tempfile.mkdtemp(prefix=f"velhanet-probe-{name}-"))
        (folder / "program.py").write_text(code + "\n")
        program = BlockingProgram(sandbox, [sys.executable, "program.py"], folder=folder)
        verdict = program.stop(grace=15)
        print(json.dumps({"name": name, "uid": uid, **verdict.asDict(), "notes": verdict.notes()}), flush=True)


if __name__ == "__main__":
    main()
