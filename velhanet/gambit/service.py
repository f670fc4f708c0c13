"""``makeService`` for the Gambit relay server."""

from __future__ import annotations

from typing import Any

from twisted.application import strports
from twisted.application.service import IService
from twisted.logger import Logger

from velhanet.gambit.server import GambitServerFactory
from velhanet.listening import withBacklog

log = Logger(namespace="velhanet.gambit.trace")


def traceToLog(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
    """``--trace``: each message in and out, raw and decoded, as a log line."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    described = decoded.describe() if hasattr(decoded, "describe") else f"ERROR {decoded}"
    log.info(
        "{arrow} {peer} {raw} {decoded}",
        arrow="->" if direction == "out" else "<-",
        peer=peer,
        raw=text.rstrip("\n"),
        decoded=described,
    )


def makeService(options: Any, reactor: Any = None) -> IService:
    if reactor is None:
        from twisted.internet import reactor as globalReactor

        reactor = globalReactor
    factory = GambitServerFactory(
        clock=reactor,
        validate=not options["no-validate"],
        trace=traceToLog if options["trace"] else None,
        spacing=options["spacing"],
        language=options["language"],
        limits=options["limits"],
    )
    return strports.service(withBacklog(options["listen"]), factory, reactor=reactor)
