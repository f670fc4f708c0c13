"""``makeService`` for the Gambit relay server."""

from __future__ import annotations

from typing import Any

from twisted.application.service import IService, MultiService

from velhanet.gambit.protocol import GambitServerFactory
from velhanet.startup import ListeningService, StartupReport
from velhanet.tracing import logTracer, orGlobalReactor
from velhanet.web.service import webSite


def _withoutNewline(raw: bytes | str) -> str:
    """A message as ``--trace`` shows it: the ``\\n`` that ends each object written dropped."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    return text.rstrip("\n")


def _describe(decoded: object) -> str:
    return decoded.describe() if hasattr(decoded, "describe") else f"ERROR {decoded}"


traceToLog = logTracer("velhanet.gambit.trace", showRaw=_withoutNewline, describe=_describe)
"""``--trace``: each message in and out, raw and decoded, as a log line."""


def makeService(options: Any, reactor: Any = None) -> IService:
    reactor = orGlobalReactor(reactor)
    report = StartupReport(options, reactor)
    watcher, web = webSite(options, reactor, report)
    factory = GambitServerFactory(
        clock=reactor,
        validate=not options["no-validate"],
        trace=traceToLog if options["trace"] else None,
        spacing=options["spacing"],
        language=options["language"],
        limits=options["limits"],
        watcher=watcher,
    )
    listening = ListeningService(options["listen"], factory, reactor, report)
    if web is None:
        return listening
    both = MultiService()
    listening.setServiceParent(both)
    web.setServiceParent(both)
    return both
