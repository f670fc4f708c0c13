"""``--web ENDPOINT`` for every family's service: the hub the rooms report to, and the site's listener."""

from __future__ import annotations

from typing import Any

from twisted.application.service import IService

from velhanet.startup import ListeningService, StartupReport
from velhanet.web.hub import NO_WATCHER, GameHub, GameWatcher
from velhanet.web.site import spectatorSite, webEndpoint

WEB_OPTION = [
    "web",
    None,
    None,
    "serve a live spectators' site (read-only) on this endpoint; a bare port listens on 127.0.0.1 only [default: off]",
]
"""The ``--web`` entry of each family's ``optParameters``."""


class WebService(ListeningService):
    """The site's listening port; stopping it leaves no list update scheduled."""

    def __init__(self, hub: GameHub, description: str, reactor: Any, report: StartupReport) -> None:
        super().__init__(description, spectatorSite(hub), reactor, report, "--web")
        self.hub = hub

    def stopService(self) -> Any:
        self.hub.stop()
        return super().stopService()


def webSite(options: Any, reactor: Any, report: StartupReport) -> tuple[GameWatcher, IService | None]:
    """The watcher the rooms report to, and the service of the site (None: ``--web`` not given)."""
    if not options["web"]:
        return NO_WATCHER, None
    hub = GameHub(reactor)
    return hub, WebService(hub, webEndpoint(options["web"]), reactor, report)
