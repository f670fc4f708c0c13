"""``velhanet-league run --web`` and ``standings --web``: the standings, every game, each one watchable.

The spectators' site of the other commands (``velhanet.web.site``), on a
reactor of its own in a thread beside the run (the run itself is Dask's), or
alone over the database of a league that is over (``standings --web``):

- ``/``: the standings (``league.standingspage``), read afresh from the
  database at each request, reloading itself while a run plays; ``/standings``
  sends there, ``/standings.json`` is the same in JSON;
- ``/games`` (``?player=NAME``: one player's): every finished game, and every
  one being played, each with the link to its page below;
- ``/live``, ``/game/<id>``: the list and pages of the other commands' sites;
  each running game arrives as the worker playing it tells it (``EVENT``
  lines of the game process, through Dask's structured events, topic
  ``task.LIVE``), with its board after every move; each finished game is
  replayed from its XML log beside the database
  (``socha.replayservice.ReplayLibrary``, rescanned every 2 s), step by step.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from twisted.internet.endpoints import serverFromString
from twisted.internet.task import LoopingCall
from twisted.web.resource import Resource
from twisted.web.server import Request, Site
from twisted.web.util import Redirect

from velhanet import i18n
from velhanet.i18n import N_, _
from velhanet.league.config import League, Player
from velhanet.league.standings import Standings, asJson, standingsOf
from velhanet.league.standingspage import gamesPage, standingsPage
from velhanet.league.store import Store, asDict
from velhanet.league.task import LIVE
from velhanet.socha.replay import ReplayedGame
from velhanet.socha.replayservice import ReplayLibrary
from velhanet.web.hub import GameHub, GameRecord
from velhanet.web.site import CONTENT_SECURITY_POLICY, Root, webEndpoint
from velhanet.web.texts import requestLanguage

RESCAN = 2.0


class LeagueReplays(ReplayLibrary):
    """The league's logs, each remembered with the game of the hub it became: the database names each game's
    log, so a page links a game of the database to its replay on this site."""

    def __init__(self, hub: GameHub, logs: Path) -> None:
        super().__init__(hub, [logs])
        self.byLog: dict[str, str] = {}
        """A log's file name (``game-00017.xml``) → the hub's game id."""

    def _add(self, file: Path, game: ReplayedGame, modified: float) -> None:
        super()._add(file, game, modified)
        self.byLog[file.name] = next(reversed(self.hub.games))  # the hub adds it last, in this very call


class LeagueGames:
    """Which page of this site shows each game of the database: its live board while a worker plays it, its
    replay once its log is read. Used in the reactor's thread only, as the pages that ask."""

    def __init__(self, hub: GameHub, logs: Path) -> None:
        self.hub = hub
        self.replays = LeagueReplays(hub, logs)
        self.live: dict[int, tuple[GameRecord, list[str]]] = {}
        """The database's id of each game being played → its game on the hub, and its latest board."""

    def event(self, event: dict[str, Any]) -> None:
        """One ``EVENT`` line of a game process, as the worker playing it published it."""
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

    def watch(self, row: Mapping[str, Any]) -> tuple[str, str] | None:
        """(the game's page, what it offers) for a row of the database; None while it has none yet."""
        if row["id"] in self.live:
            return f"/game/{self.live[row['id']][0].gameId}", N_("watch")
        hubId = self.replays.byLog.get(Path(row["log"]).name) if row["log"] else None
        return None if hubId is None else (f"/game/{hubId}", N_("replay"))

    def shown(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows ``/games`` lists: every game finished, and every one being played."""
        return [row for row in rows if row["state"] != "scheduled" or row["id"] in self.live]


class StandingsCache:
    """The standings and every game's row, computed where the database is written: once when the site starts,
    then in the run's thread each time a game is recorded (L{refresh}). A request reads the last value: it
    never opens the database nor fits the ratings on the reactor's thread, whatever the league's size."""

    def __init__(self, league: League, players: Sequence[Player]) -> None:
        self.league, self.players = league, players
        self.current: tuple[Standings, list[dict[str, Any]]] = self._compute()

    def _compute(self) -> tuple[Standings, list[dict[str, Any]]]:
        store = Store(self.league.databasePath)  # this thread's own connection
        try:
            return standingsOf(store, self.players), [asDict(row) for row in store.games()]
        finally:
            store.close()

    def refresh(self) -> None:
        self.current = self._compute()  # one reference replaced: a page reads the old or the new, whole

    @property
    def table(self) -> Standings:
        return self.current[0]

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.current[1]


def pageLanguage(request: Request) -> i18n.Language:
    """The language of a page for this request: the browser's ``Accept-Language`` if velhanet speaks one it
    asks for, else the language of the command (``--language``, or its environment)."""
    return i18n.language(requestLanguage(request))


def _served(request: Request, page: str | bytes, language: i18n.Language | None = None) -> bytes:
    """A page with the headers of every page of the spectators' site (its Content-Security-Policy too); a page
    made for the request's language says which, and that another ``Accept-Language`` gets another."""
    if language is not None:
        request.setHeader(b"content-language", language.code.encode("ascii"))
        request.setHeader(b"vary", b"Accept-Language")
    request.setHeader(b"content-type", b"text/html; charset=utf-8")
    request.setHeader(b"cache-control", b"no-cache")
    request.setHeader(b"content-security-policy", CONTENT_SECURITY_POLICY)
    return page if isinstance(page, bytes) else page.encode("utf-8")


class StandingsJson(Resource):
    isLeaf = True

    def __init__(self, cache: StandingsCache) -> None:
        super().__init__()
        self.cache = cache

    def render_GET(self, request: Request) -> bytes:
        request.setHeader(b"content-type", b"application/json")
        return asJson(self.cache.table).encode()


class GamesPage(Resource):
    isLeaf = True

    def __init__(self, league: League, cache: StandingsCache, games: LeagueGames, running: bool) -> None:
        super().__init__()
        self.league, self.cache, self.games, self.running = league, cache, games, running

    def render_GET(self, request: Request) -> bytes:
        named = (request.args or {}).get(b"player", [])
        player = named[0].decode("utf-8", "replace") if named else None
        rows = self.games.shown(self.cache.rows)
        language = pageLanguage(request)
        page = gamesPage(self.league.name, rows, player, self.games.watch, self.running, language)
        return _served(request, page, language)


class LivePage(Resource):
    """``/live``: the list of the games being played, as every other command's site has it at ``/``."""

    isLeaf = True

    def __init__(self, page: bytes) -> None:
        super().__init__()
        self.page = page

    def render_GET(self, request: Request) -> bytes:
        return _served(request, self.page)


class LeagueRoot(Root):
    """The spectators' site with the standings at ``/``: a class looks at the table first, the games from it."""

    def __init__(
        self, hub: GameHub, league: League, cache: StandingsCache, games: LeagueGames, running: bool = True
    ) -> None:
        super().__init__(hub)
        self.league, self.cache, self.running = league, cache, running
        self.putChild(b"standings", Redirect(b"/"))
        self.putChild(b"standings.json", StandingsJson(cache))
        self.putChild(b"games", GamesPage(league, cache, games, running))
        self.putChild(b"live", LivePage(self.page))

    def render_GET(self, request: Request) -> bytes:
        language = pageLanguage(request)
        return _served(request, standingsPage(self.league.name, self.cache.table, self.running, language), language)


def leagueSite(hub: GameHub, league: League, cache: StandingsCache, games: LeagueGames, running: bool = True) -> Site:
    site = Site(LeagueRoot(hub, league, cache, games, running))
    site.displayTracebacks = False
    return site


class SiteUnavailable(Exception):
    """``--web`` cannot listen (a port in use, a wrong endpoint): the message is one line for the user."""


class LeagueSite:
    """The site and its reactor thread; ``stop`` ends both. Started before the cluster, so that a
    ``--web`` that cannot listen is said at once; L{follow} then shows the cluster's running games.
    ``running=False`` (``standings --web``): the pages do not reload themselves, nothing will change."""

    def __init__(self, endpoint: str, league: League, players: list[Player], running: bool = True) -> None:
        from twisted.internet import reactor as globalReactor

        reactor: Any = globalReactor  # whose interfaces mypy cannot see
        self.reactor = reactor
        self.hub = GameHub(reactor, keepFinished=0)  # a game that ends leaves; its replay comes from its log
        league.logs.mkdir(parents=True, exist_ok=True)
        self.games = LeagueGames(self.hub, league.logs)
        self.library = self.games.replays
        self.standings = StandingsCache(league, players)
        site = leagueSite(self.hub, league, self.standings, self.games, running)
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
            self.rescan.start(RESCAN)  # the first scan now: no request is read before every log is

        reactor.callWhenRunning(start)
        self.thread = threading.Thread(target=reactor.run, kwargs={"installSignalHandlers": False}, daemon=True)
        self.thread.start()
        if not listening.wait(10):
            failure.append(TimeoutError(_("not listening after 10 s")))
        if failure:
            self.stop()
            raise SiteUnavailable(_("--web {endpoint}: {reason}").format(endpoint=endpoint, reason=failure[0]))
        listeningOn = self.port.getHost().port
        self.home = f"http://127.0.0.1:{listeningOn}/" if endpoint.isdigit() else description
        """Where to look: with a bare port (0 too), the one it listens on."""
        self.address = self.home
        """What ``run`` says: the standings, at ``/``."""

    def follow(self, client: Any) -> None:
        """Show the games the cluster's workers report as they run."""
        client.subscribe_topic(LIVE, lambda event: self.reactor.callFromThread(self.event, event[1]))

    def event(self, event: dict[str, Any]) -> None:
        self.games.event(event)

    def finished(self, gameId: int, result: dict[str, Any]) -> None:
        """A game was recorded (in the run's thread): the standings computed again here; its log appears at
        the next rescan."""
        self.standings.refresh()

    def serveUntilInterrupted(self) -> None:
        """``standings --web``: serve until Ctrl-C (a SIGINT the shell left ignored never comes: kill ends it)."""
        try:
            self.thread.join()  # a lock's wait, which SIGINT interrupts on POSIX
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        self.reactor.callFromThread(self.reactor.stop)
        self.thread.join(5)
