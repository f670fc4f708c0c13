"""``--web ENDPOINT`` for every family's service: the hub the rooms report to, and the site's listener.

The site (``twisted.web``, the HTTP and e-mail modules it pulls in, and the
chess library's SVG drawing) is imported only when ``--web`` is given: a
server without it does not carry those modules, several megabytes of a
process that a class runs with hundreds of connections.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import IService

from velhanet.startup import StartupReport
from velhanet.watching import NO_WATCHER, GameWatcher
from velhanet.web.hub import GameHub

WEB_OPTION = [
    "web",
    None,
    None,
    "serve a live spectators' site (read-only) on this endpoint; a bare port listens on 127.0.0.1 only [default: off]",
]
"""The ``--web`` entry of each family's ``optParameters``."""


def webSite(options: Any, reactor: Any, report: StartupReport) -> tuple[GameWatcher, IService | None]:
    """The watcher the rooms report to, and the service of the site (None: ``--web`` not given)."""
    if not options["web"]:
        return NO_WATCHER, None
    from velhanet.web.site import WebService, webEndpoint

    hub = GameHub(reactor)
    return hub, WebService(hub, webEndpoint(options["web"]), reactor, report)
