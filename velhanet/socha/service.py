"""``makeService`` for the Software-Challenge server."""

from __future__ import annotations

from typing import Any

from twisted.application import strports
from twisted.application.service import IService
from twisted.logger import Logger

from velhanet.socha.lobby import Lobby

log = Logger(namespace="velhanet.socha.trace")


def traceToLog(direction: str, peer: str, raw: str, what: str) -> None:
    """``--trace``: each message in and out, raw and decoded (its element name)."""
    log.info(
        "{arrow} {peer} <{what}> {raw}",
        arrow="->" if direction == "out" else "<-",
        peer=peer,
        what=what,
        raw=raw.strip(),
    )


def makeService(options: Any, reactor: Any = None) -> IService:
    if reactor is None:
        from twisted.internet import reactor as globalReactor

        reactor = globalReactor
    lobby = Lobby(
        clock=reactor,
        password=options["password"],
        timeouts=not options["no-timeout"],
        paused=options["paused"],
        trace=traceToLog if options["trace"] else None,
    )
    return strports.service(options["listen"], lobby, reactor=reactor)
