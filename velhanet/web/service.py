"""``--web ENDPOINT`` for every family's service: the hub the rooms report to, and the site's listener.

The site (``twisted.web``, the HTTP and e-mail modules it pulls in, and the
chess library's SVG drawing) is imported only when ``--web`` is given: a
server without it does not carry those modules, several megabytes of a
process that a class runs with hundreds of connections.
"""

from __future__ import annotations

from typing import Any

from twisted.application.service import IService, MultiService

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


def withSite(parent: MultiService, web: IService | None, listening: IService | None = None) -> MultiService:
    """The one way every service holds its spectators' site and its listener: both children of ``parent``.

    The site first: its port is bound (``privilegedStartService``, before
    twistd drops privileges) and it starts before the game's listener, so a
    server whose site cannot listen never takes a player, and a program that
    waits for the game's port (``socha-match``, the tests) finds the site up.
    A service whose game is not a listener (velha's UDP port, gobang's FIFO)
    gives no ``listening``: its site is still bound first, and the service
    opens its own way in when it starts.
    """
    if web is not None:
        web.setServiceParent(parent)
    if listening is not None:
        listening.setServiceParent(parent)
    return parent


def webSite(options: Any, reactor: Any, report: StartupReport) -> tuple[GameWatcher, IService | None]:
    """The watcher the rooms report to, and the service of the site (None: ``--web`` not given).

    The site speaks the service's ``--language`` when it was given; else each page the language its browser
    asks for (``Accept-Language``), else the process's (L{velhanet.web.texts.requestLanguage}).
    """
    if not options["web"]:
        return NO_WATCHER, None
    from velhanet.web.site import WebService, webEndpoint

    hub = GameHub(reactor, language=options.get("language") or None)
    return hub, WebService(hub, webEndpoint(options["web"]), reactor, report)
