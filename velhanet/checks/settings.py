"""What one run of a family's checks is given: plain values, and the L{Target} the checks read.

``velhanet-check`` makes a L{CheckSettings} from its command line
(``command.settingsFrom``); a grading process makes one from the values it
chose for a student's program (a port, a FIFO folder, an address), never
from a command line. L{targetFor} turns either into the L{Target} that the
checks of ``velhanet.checks.<family>.rules`` read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from velhanet.checks.base import Target
from velhanet.sandbox.limits import SandboxSettings

DEFAULT_PORTS = {"velha": 20181, "gambit": 22022, "socha": 13050, "socha-player": 0, "gobang": 0}
"""Each family's port when the target does not name one (the protocols' own)."""

VELHA_TIMEOUT = 15.0
"""Seconds a JogoVelha check waits for an answer when not told: the protocol's own resend and invitation times."""


@dataclass(frozen=True)
class CheckSettings:
    """One run of the checks of ``family`` (the options of ``velhanet-check``, as values)."""

    family: str
    target: str = "127.0.0.1"
    """velha: the peer's address; gambit, socha: HOST[:PORT]; gobang: the server's pid."""
    port: int | None = None
    local: str = "127.0.0.1"
    local2: str = "127.0.0.3"
    local3: str = "127.0.0.4"
    expectInvite: bool = False
    fifoDir: str = "/tmp"
    command: str = ""
    """socha-player: the command that starts the player."""
    timeout: float | None = None
    """Seconds to wait for each answer; None: 3, or L{VELHA_TIMEOUT} for velha."""
    timeScale: float = 1.0
    strict: bool = False
    repeat: int = 1
    only: str = ""
    byteOrder: str = "native"
    destructive: bool = False
    moveDelay: float = 0.3
    startGrace: float = 8.0
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    cwd: str = ""
    """Where commands run from (socha-player's); empty: this process's directory when the target is made."""


def targetFor(settings: CheckSettings, **extra: Any) -> Target:
    """The target the checks read, with ``extra`` added to what they find in ``Target.extra``."""
    if ":" in settings.target:
        host, _, port = settings.target.rpartition(":")
    else:
        host, port = settings.target, ""
    chosen = Target(settings.family, host=host)
    chosen.port = settings.port or (int(port) if port else DEFAULT_PORTS[settings.family])
    if settings.family == "gobang":
        chosen.pid = int(settings.target) if settings.target.isdigit() else 0
        chosen.host = ""
    chosen.fifoDir = settings.fifoDir
    chosen.command = settings.command
    chosen.strict = settings.strict
    chosen.timeScale = settings.timeScale
    chosen.extra.update(
        local=settings.local,
        local2=settings.local2,
        local3=settings.local3,
        expectInvite=settings.expectInvite,
        byteOrder=settings.byteOrder,
        destructive=settings.destructive,
        moveDelay=settings.moveDelay,
        startGrace=settings.startGrace,
        cwd=settings.cwd or os.getcwd(),  # trial's runner changes directory; commands run from here
        sandboxSettings=settings.sandbox,
    )
    chosen.extra.update(extra)
    if settings.timeout is not None:
        chosen.timeout = settings.timeout
    elif settings.family == "velha":
        chosen.timeout = VELHA_TIMEOUT
    return chosen
