"""``makeService`` for the Gambit relay server."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from twisted.application.service import IService, MultiService

from velhanet.gambit.protocol import GambitServerFactory
from velhanet.gambit.texts import WIRE_LANGUAGE
from velhanet.startup import ListeningService, StartupReport
from velhanet.tracing import logTracer, orGlobalReactor
from velhanet.watching import bothWatchers
from velhanet.web.service import webSite, withSite


def _withoutNewline(raw: bytes | str) -> str:
    """A message as ``--trace`` shows it: the ``\\n`` that ends each object written dropped."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text.rstrip("\n")


def _describe(decoded: object) -> str:
    return decoded.describe() if hasattr(decoded, "describe") else f"ERROR {decoded}"


traceToLog = logTracer("velhanet.gambit.trace", showRaw=_withoutNewline, describe=_describe)
"""``--trace``: each message in and out, raw and decoded, as a log line."""


class GambitService(MultiService):
    """The relay's listener and, with ``--web``, its spectators' site."""

    def __init__(self, factory: GambitServerFactory, listening: IService, web: IService | None) -> None:
        super().__init__()
        self.factory = factory
        withSite(self, web, listening)


def makeService(options: Any, reactor: Any = None) -> IService:
    reactor = orGlobalReactor(reactor)
    report = StartupReport(options, reactor)
    watcher, web = webSite(options, reactor, report)
    if options.get("pgn-dir"):
        from velhanet.gambit.pgnarchive import PgnArchive  # chess.pgn only where games are kept (ImportCostTests)

        site = f"velhanet gambit-server on {socket.gethostname()}"
        watcher = bothWatchers(watcher, PgnArchive(Path(options["pgn-dir"]), reactor, site=site))
    factory = GambitServerFactory(
        clock=reactor,
        validate=not options["no-validate"],
        trace=traceToLog if options["trace"] else None,
        spacing=options["spacing"],
        language=options["language"] or WIRE_LANGUAGE,
        limits=options["limits"],
        watcher=watcher,
    )
    return GambitService(factory, ListeningService(options["listen"], factory, reactor, report), web)
