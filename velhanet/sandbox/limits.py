"""What a sandboxed program may use, and the command-line options that set it.

Every command that starts programs velhanet did not write (``velhanet-grade``,
``velhanet-check --command``, ``socha-match``, ``velhanet-league``,
``gambit-client --engine``) takes the
same options, added by L{addSandboxArguments} and read back by
L{settingsFrom}:

    --sandbox auto|on|off   --limit-memory SIZE   --limit-cpu SECONDS
    --limit-processes N     --limit-disk SIZE     --limit-output SIZE

The defaults are far above what a normal player or student server uses (a
Java player with its JVM stays under 512 MiB and 64 threads, a game of
Piranhas costs a player at most about 60 s of CPU): only a program that
misbehaves meets them. Pure: parsing and formatting, no I/O.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from velhanet.i18n import _, ngettext

MODES = ("auto", "on", "off")

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class ProgramLimits:
    """The limits of one program, the whole tree of its processes and threads together."""

    memory: int = 2 * GIB
    """Bytes of memory (resident, tmpfs files included)."""
    cpu: float = 600.0
    """Seconds of CPU time, all its processes together."""
    processes: int = 256
    """Processes and threads at once (a JVM alone runs about 30 threads)."""
    disk: int = 256 * MIB
    """Bytes it may write: its private copy of its folder, and its private /tmp, each."""
    output: int = 1 * MIB
    """Bytes of its output (stdout and stderr) kept; the rest is read and dropped."""


DEFAULT_LIMITS = ProgramLimits()

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024 * GIB}


def parseSize(text: str) -> int:
    """``512M``, ``2G``, ``1.5GiB``, ``65536`` (bytes): a size in bytes; ValueError otherwise."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(_("{text!r} is not a size (say 512M, 2G or a number of bytes)").format(text=text))
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value < 1:
        raise ValueError(_("{text!r}: a size must be at least 1 byte").format(text=text))
    return int(value)


def parseSeconds(text: str) -> float:
    """``20``, ``20s``, ``5m``, ``1.5h``: seconds; ValueError otherwise."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$", text, re.IGNORECASE)
    if match is None:
        raise ValueError(_("{text!r} is not a duration (say 20, 20s, 5m)").format(text=text))
    seconds = float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2).lower()]
    if seconds <= 0:
        raise ValueError(_("{text!r}: a duration must be more than 0 s").format(text=text))
    return seconds


def sizeArgument(text: str) -> int:
    """L{parseSize} for argparse: its error is the line the user reads (argparse hides a ValueError's)."""
    try:
        return parseSize(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def secondsArgument(text: str) -> float:
    """L{parseSeconds} for argparse, as L{sizeArgument}."""
    try:
        return parseSeconds(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def formatSize(size: int) -> str:
    """``512 MiB``, ``2 GiB``, ``1.5 MiB``, ``300 bytes``: as a student reads it in a cause."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit:
            value = size / unit
            return f"{value:.0f} {name}" if value == int(value) else f"{value:.1f} {name}"
    return ngettext("{n} byte", "{n} bytes", size).format(n=size)


def formatSeconds(seconds: float) -> str:
    return f"{seconds:g} s"


@dataclass(frozen=True)
class SandboxSettings:
    """``--sandbox`` and the ``--limit-*`` options, as one command was given them."""

    mode: str = "auto"
    limits: ProgramLimits = DEFAULT_LIMITS


def addSandboxArguments(parser: argparse.ArgumentParser) -> None:
    """The same ``--sandbox`` and ``--limit-*`` options on every command that starts programs."""
    group = parser.add_argument_group(
        "sandbox",
        "every program this command starts runs in a bubblewrap sandbox: it sees the system read-only, "
        "a private copy of its own folder and a private /tmp, and can reach only its own game "
        "(docs/security.md)",
    )
    limits = DEFAULT_LIMITS
    group.add_argument(
        "--sandbox",
        choices=MODES,
        default="auto",
        help="auto: the sandbox where bwrap works here, else a warning; on: refuse to run without it; "
        "off: run the programs as yourself, for programs you trust (default: %(default)s)",
    )
    group.add_argument(
        "--limit-memory",
        type=sizeArgument,
        default=limits.memory,
        metavar="SIZE",
        help=f"memory per program, all its processes together (default: {formatSize(limits.memory)})",
    )
    group.add_argument(
        "--limit-cpu",
        type=secondsArgument,
        default=limits.cpu,
        metavar="SECONDS",
        help=f"CPU time per program (default: {formatSeconds(limits.cpu)})",
    )
    group.add_argument(
        "--limit-processes",
        type=int,
        default=limits.processes,
        metavar="N",
        help=f"processes and threads per program at once (default: {limits.processes})",
    )
    group.add_argument(
        "--limit-disk",
        type=sizeArgument,
        default=limits.disk,
        metavar="SIZE",
        help=f"what a program may write, in its folder and in /tmp each (default: {formatSize(limits.disk)})",
    )
    group.add_argument(
        "--limit-output",
        type=sizeArgument,
        default=limits.output,
        metavar="SIZE",
        help=f"output kept per program; the rest is dropped (default: {formatSize(limits.output)})",
    )


def settingsFrom(arguments: argparse.Namespace) -> SandboxSettings:
    if arguments.limit_processes < 1:
        raise ValueError(_("--limit-processes must be at least 1"))
    return SandboxSettings(
        mode=arguments.sandbox,
        limits=ProgramLimits(
            memory=arguments.limit_memory,
            cpu=arguments.limit_cpu,
            processes=arguments.limit_processes,
            disk=arguments.limit_disk,
            output=arguments.limit_output,
        ),
    )
