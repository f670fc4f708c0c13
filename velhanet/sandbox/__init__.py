"""Running programs velhanet did not write: students' players, peers and servers.

Every command that starts such a program (``velhanet-grade``,
``velhanet-check --command``, ``socha-match``, ``velhanet-league``, and
``gambit-client --engine`` for a chess engine) goes
through this package, with the same options (``limits.addSandboxArguments``):
a bubblewrap sandbox (``jail.py``) in which the program sees the system
read-only and a private copy of its own folder, reaches only its own game
(``network.py``), and is held to limits of memory, CPU time, processes, disk
and output (``cgroups.py`` where the machine gives control groups,
``setrlimit`` otherwise; ``monitor.py`` watches). A program that breaks a
limit is stopped and loses with a cause a student can act on
(``verdict.py``). ``sandbox.py`` holds a command's settings; ``program.py``
runs a program from a Twisted reactor, ``blocking.py`` from plain code;
``availability.py`` says whether bwrap works here; ``userns.py`` gives an ordinary user
the privileges to set a sandbox up. Only ``program.py`` needs Twisted.
"""

from velhanet.sandbox.limits import ProgramLimits, SandboxSettings, addSandboxArguments, settingsFrom
from velhanet.sandbox.sandbox import Sandbox, SandboxUnavailable
from velhanet.sandbox.verdict import Verdict

__all__ = [
    "ProgramLimits",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "Verdict",
    "addSandboxArguments",
    "settingsFrom",
]
