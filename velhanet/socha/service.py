"""``makeService`` for the Software-Challenge server."""

from __future__ import annotations

from typing import Any

from twisted.application import strports
from twisted.application.service import IService, MultiService
from twisted.internet.defer import Deferred, gatherResults
from twisted.logger import Logger

from velhanet.listening import withBacklog
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


class SochaService(MultiService):
    """The listening port and the lobby; stopping ends every game properly before the process exits."""

    def __init__(self, lobby: Lobby, listening: IService) -> None:
        super().__init__()
        self.lobby = lobby
        listening.setServiceParent(self)

    def stopService(self) -> Deferred[list[object]]:
        stopped: Deferred[object] = super().stopService()  # type: ignore[assignment]
        closed: Deferred[object] = self.lobby.shutdown()  # type: ignore[assignment]
        return gatherResults([stopped, closed])


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
        limits=options["limits"],
    )
    return SochaService(lobby, strports.service(withBacklog(options["listen"]), lobby, reactor=reactor))
