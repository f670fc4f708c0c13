"""Where a process is started, for the launch core (``launch.py``): nowhere else in velhanet.

L{popen} is the blocking front end's (``blocking.BlockingProgram``: a
student's program, or velhanet's own helper with the sandbox off);
L{runTool} runs a tool velhanet trusts and waits for (git, Graphviz,
bwrap's probe). The reactor's front end (``program.py``) spawns with
``reactor.spawnProcess``. ``tests/test_layers.py`` fails when a process is
started anywhere else, so that every program gets the same set-up, output
tail and cap, limits and cause when it ends.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from velhanet.i18n import _


def popen(
    argv: Sequence[str],
    *,
    stdin: bool = False,
    cwd: Path | None = None,
    environment: Mapping[str, str] | None = None,
    passFds: Sequence[int] = (),
    beforeExec: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """The blocking front end's process: ``argv`` in a session of its own (so that a stop reaches all of it),
    its standard output and error one pipe, its standard input a pipe (``stdin``) or ``/dev/null``."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=None if environment is None else dict(environment),
        pass_fds=tuple(passFds),
        preexec_fn=beforeExec,
        start_new_session=True,
    )


class ToolFailed(OSError):
    """A tool could not be run, or did not end in time: the line says which and why."""


def runTool(
    argv: Sequence[str],
    *,
    input: bytes | None = None,
    cwd: Path | None = None,
    environment: Mapping[str, str] | None = None,
    timeout: float,
) -> subprocess.CompletedProcess[bytes]:
    """A tool velhanet trusts (git, Graphviz, bwrap's probe), run to its end with its output captured;
    L{ToolFailed} when it cannot be run or takes more than ``timeout`` seconds (it is killed then)."""
    try:
        return subprocess.run(
            list(argv),
            input=input,
            capture_output=True,
            cwd=cwd,
            env=None if environment is None else dict(environment),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolFailed(
            _("{tool} took more than {seconds:.0f} s").format(tool=Path(argv[0]).name, seconds=timeout)
        ) from None
    except OSError as error:
        raise ToolFailed(_("{tool} cannot be run: {error}").format(tool=Path(argv[0]).name, error=error)) from None
