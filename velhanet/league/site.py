"""``velhanet-league run --web ENDPOINT``: the standings live, the running games, the finished ones.

The spectators' site of the other commands (``velhanet.web.site``), on a
reactor of its own in a thread beside the run (the run itself is Dask's):

- ``/standings`` (and ``/standings.json``): the standings as they stand,
  read afresh from the database at each request, the page reloading itself;
- the list of games and a page per game, as everywhere: each running game
  arrives as the worker playing it tells it (``EVENT`` lines of the game
  process, through Dask's structured events, topic ``task.LIVE``), with its
  board after every move; each finished game is replayed from its XML log
  beside the database (``socha.replayservice.ReplayLibrary``, rescanned every
  2 s), step by step.
"""

from __future__ import annotations

import html
import threading
from typing import Any

from twisted.internet.endpoints import serverFromString
from twisted.internet.task import LoopingCall
from twisted.web.resource import Resource
from twisted.web.server import Request, Site

from velhanet.league.config import League, Player
from velhanet.league.standings import asJson, asText, standingsOf
from velhanet.league.store import Store
from velhanet.league.task import LIVE
from velhanet.socha.replayservice import ReplayLibrary
from velhanet.watching import WatchedGame
from velhanet.web.hub import GameHub
from velhanet.web.site import Root, webEndpoint

RESCAN = 2.0


class StandingsPage(Resource):
    isLeaf = True

    def __init__(self, league: League, players: list[Player], asJsonToo: bool = False) -> None:
        super().__init__()
        self.league, self.players, self.json = league, players, asJsonToo

    def render_GET(self, request: Request) -> bytes:
        store = Store(self.league.databasePath)  # a connection of this thread's own
        try:
            table = standingsOf(store, self.players)
        finally:
            store.close()
        if self.json:
            request.setHeader(b"content-type", b"application/json")
            return asJson(table).encode()
        request.setHeader(b"content-type", b"text/html; charset=utf-8")
        title = html.escape(self.league.name)
        return (
            f'<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">'
            f"<title>{title}: standings</title></head><body><h1>{title}</h1>"
            f'<p><a href="/">the games</a> · <a href="/standings.json">JSON</a></p>'
            f"<pre>{html.escape(asText(table))}</pre></body></html>"
        ).encode()


class LeagueRoot(Root):
    def __init__(self, hub: GameHub, league: League, players: list[Player]) -> None:
        super().__init__(hub)
        self.putChild(b"standings", StandingsPage(league, players))
        self.putChild(b"standings.json", StandingsPage(league, players, asJsonToo=True))


class SiteUnavailable(Exception):
    """``--web`` cannot listen (a port in use, a wrong endpoint): the message is one line for the user."""


class LeagueSite:
    """The site and its reactor thread; ``stop`` ends both. Started before the cluster, so that a
    ``--web`` that cannot listen is said at once; L{follow} then shows the cluster's running games."""

    def __init__(self, endpoint: str, league: League, players: list[Player]) -> None:
        from twisted.internet import reactor as globalReactor

        reactor: Any = globalReactor  # whose interfaces mypy cannot see
        self.reactor = reactor
        self.hub = GameHub(reactor, keepFinished=0)  # a game that ends leaves; its replay comes from its log
        self.live: dict[int, tuple[WatchedGame, list[str]]] = {}
        league.logs.mkdir(parents=True, exist_ok=True)
        self.library = ReplayLibrary(self.hub, [league.logs])
        site = Site(LeagueRoot(self.hub, league, players))
        site.displayTracebacks = False
        description = webEndpoint(endpoint)
        listening = threading.Event()
        failure: list[BaseException] = []

        def start() -> None:
            def listened(port: Any) -> None:
                self.port = port
                listening.set()

            def failed(reason: Any) -> None:
                failure.append(reason.value)
                listening.set()

            serverFromString(reactor, description).listen(site).addCallbacks(listened, failed)
            self.rescan = LoopingCall(self.library.scan)
            self.rescan.clock = reactor
            self.rescan.start(RESCAN)

        reactor.callWhenRunning(start)
        self.thread = threading.Thread(target=reactor.run, kwargs={"installSignalHandlers": False}, daemon=True)
        self.thread.start()
        if not listening.wait(10):
            failure.append(TimeoutError("not listening after 10 s"))
        if failure:
            self.stop()
            raise SiteUnavailable(f"--web {endpoint}: {failure[0]}")
        listeningOn = self.port.getHost().port
        self.address = f"http://127.0.0.1:{listeningOn}/standings" if endpoint.isdigit() else description
        """Where to look: with a bare port (0 too), the one it listens on."""

    def follow(self, client: Any) -> None:
        """Show the games the cluster's workers report as they run."""
        client.subscribe_topic(LIVE, lambda event: self.reactor.callFromThread(self.event, event[1]))

    def event(self, event: dict[str, Any]) -> None:
        game, kind = int(event["game"]), event["event"]
        if kind == "started":
            board = [event["board"]]
            started = self.hub.startedDrawn(event["family"], event["gameType"], event["players"], lambda: board[0])
            self.live[game] = (started, board)
            return
        if game in self.live:
            watched, board = self.live[game]
            board[0] = event.get("board", board[0])
            if kind == "moved":
                watched.moved(event["text"])
            elif kind == "ended":
                watched.ended(event["result"])
                del self.live[game]

    def finished(self, gameId: int, result: dict[str, Any]) -> None:
        """A game was recorded (from the run's thread): its log appears at the next rescan."""

    def stop(self) -> None:
        self.reactor.callFromThread(self.reactor.stop)
        self.thread.join(5)
