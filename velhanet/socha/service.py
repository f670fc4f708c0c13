"""``makeService`` for the Software-Challenge server."""

from __future__ import annotations

from typing import Any

from twisted.application.service import IService, MultiService
from twisted.internet.defer import Deferred, gatherResults

from velhanet.socha.protocol import SochaFactory
from velhanet.startup import ListeningService, StartupReport
from velhanet.tracing import asText, logTracer, orGlobalReactor
from velhanet.web.service import webSite, withSite


def _stripped(raw: bytes | str) -> str:
    """A packet as one trace line shows it: without the newline and indentation it is written with."""
    return asText(raw).strip()


traceToLog = logTracer("velhanet.socha.trace", "{arrow} {peer} <{decoded}> {raw}", _stripped)
"""``--trace``: each message in and out, raw and decoded (its element name)."""


class SochaService(MultiService):
    """The listening port and the lobby; stopping ends every game properly before the process exits."""

    def __init__(self, factory: SochaFactory, listening: IService, web: IService | None = None) -> None:
        super().__init__()
        self.factory = factory
        withSite(self, web, listening)

    def stopService(self) -> Deferred[list[object]]:
        stopped: Deferred[object] = super().stopService()
        closed: Deferred[object] = self.factory.shutdown()  # type: ignore[assignment]
        return gatherResults([stopped, closed])


def makeService(options: Any, reactor: Any = None) -> IService:
    reactor = orGlobalReactor(reactor)
    report = StartupReport(options, reactor)
    watcher, web = webSite(options, reactor, report)
    factory = SochaFactory(
        clock=reactor,
        password=options["password"],
        timeouts=not options["no-timeout"],
        timeScale=options["time-scale"],
        paused=options["paused"],
        trace=traceToLog if options["trace"] else None,
        limits=options["limits"],
        watcher=watcher,
        showPrepared=options["web-show-prepared"],
    )
    listening = ListeningService(options["listen"], factory, reactor, report)
    return SochaService(factory, listening, web)
