"""The server a ``socha-match`` plays on: a ``--server`` given, or a ``twistd -n socha-server`` it starts.

The server started here is velhanet's own, so it runs through the same launch
as every program (``velhanet.sandbox.program.spawn``) with the sandbox off:
its output goes to ``server.log`` (and its last lines say why, when it
stops), and the match waits until it listens, a bounded number of tries.
"""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import Any

from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.task import deferLater

from velhanet.i18n import _
from velhanet.listening import freePort
from velhanet.sandbox import Sandbox
from velhanet.sandbox.limits import GIB, ProgramLimits, SandboxSettings
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.socha.adminprotocol import AdminError
from velhanet.socha.matchoptions import serverCommand

LISTEN_WAIT = 20.0
"""Seconds the server has to listen (its imports, on a loaded machine)."""
LISTEN_TRY = 0.05
OWN_SERVER = Sandbox.forCommand(SandboxSettings("off", ProgramLimits(output=4 * GIB)), say=lambda line: None)
"""velhanet's own server: trusted, unsandboxed, its whole log kept."""


async def startServer(reactor: Any, arguments: argparse.Namespace) -> tuple[str, int, str, SandboxedProgram | None]:
    """(host, port, admin password, the server program or None for a ``--server``)."""
    if arguments.server:
        host, _colon, port = arguments.server.rpartition(":")
        return host or "127.0.0.1", int(port), arguments.password, None
    port = freePort()
    password = secrets.token_hex(8)
    logDir = Path(arguments.log_dir) if arguments.log_dir else None
    if logDir is not None:
        logDir.mkdir(parents=True, exist_ok=True)
    log = open(logDir / "server.log", "wb") if logDir else None  # noqa: SIM115 (the program closes it)
    server = spawn(OWN_SERVER, reactor, serverCommand(arguments, port, password), output=log)
    for _try in range(int(LISTEN_WAIT / LISTEN_TRY)):
        if server.verdict is not None:
            raise AdminError(_("the server {ended}").format(ended=server.exitedSaying()))
        try:
            listening = await TCP4ClientEndpoint(reactor, "127.0.0.1", port, timeout=1).connect(
                Factory.forProtocol(Protocol)
            )
            listening.transport.loseConnection()  # type: ignore[attr-defined]
            return "127.0.0.1", port, password, server
        except Exception:
            await deferLater(reactor, LISTEN_TRY, lambda: None)
    server.stop()
    raise AdminError(_("the server did not listen within {seconds:g} s").format(seconds=LISTEN_WAIT))
