"""The league's site: the standings at ``/``, each player's games, their replays, and ``standings --web``.

One small league, filled by hand (no game is played): three players, ten
finished games with every kind of end the standings count (regular wins, a
draw, losses on time, crashes, an illegal move) and fourteen still to play, and
one real Piranhas log for a replay. The site is asked in memory (its own
resources on a StringTransport), then served by the real command, then looked
at in a real headless Chromium.
"""

from __future__ import annotations

import functools
import json
import signal
import socket
import urllib.request
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from tests.chromium import CHROMIUM, NO_CHROMIUM, Chromium, Page
from tests.processes import Child, freePort, python
from tests.test_socha_replay import playedLog
from velhanet.league.config import League, Player, discoverPlayers, loadLeague
from velhanet.league.ratings import Game, fitRatings
from velhanet.league.schedule import schedule
from velhanet.league.site import LeagueGames, StandingsCache, leagueSite
from velhanet.league.store import Outcome, Store
from velhanet.web.hub import GameHub

NAMES = ("ana", "bo", "cy")
RESULTS: dict[tuple[str, str], list[tuple[str | None, str, str]]] = {
    ("ana", "bo"): [
        ("ana", "", "ana has the larger swarm"),
        ("ana", "time", "bo took 2.41 s for a move"),
        ("ana", "time", "bo took 3.02 s for a move"),
        (None, "", "both swarms are as large"),
    ],
    ("ana", "cy"): [
        ("cy", "crash", "ana exited with status 1: <script>alert(1)</script>"),
        ("ana", "rule", "cy sent an illegal move"),
        ("ana", "", "ana has the larger swarm"),
        ("ana", "crash", "cy closed its connection"),
    ],
    ("bo", "cy"): [
        ("bo", "time", "cy took 2.2 s for a move"),
        ("cy", "crash", "bo exited with status 137"),
    ],
}
"""The first games of each pairing, in the order they are played (winner, loss kind, reason); the other 14 of
the league's 24 (three pairings, four pairs of two games) stay scheduled."""

LOSSES = {
    "ana": "crash 1",
    "bo": "time 2, on the board 1, crash 1",
    "cy": "on the board 1, time 1, illegal move 1, crash 1",
}
"""What the standings must say of each player's losses (the most frequent cause first)."""

RANKED = ["ana", "cy", "bo"]
"""The standings' order: ana 6½ points of 8, cy 2 of 6 (one of them against ana), bo 1½ of 6."""


@functools.cache
def piranhasLog() -> bytes:
    """A whole real game's log (two random players), its players renamed ana and bo."""
    log, _ = playedLog(3)
    return log.replace(b'name="alice"', b'name="ana"').replace(b'name="bob"', b'name="bo"')


def scheduledLeague(
    testCase: SynchronousTestCase, names: Iterable[str], leagueFile: str
) -> tuple[League, list[Player], Store, list[Any]]:
    """A league of players ``names`` (``leagueFile`` its TOML), its games scheduled in its open database."""
    root = Path(testCase.mktemp()).resolve()
    for name in names:
        (root / "players" / name).mkdir(parents=True)
        (root / "players" / name / "velhanet-run").write_text(f"python3 {name}.py --port {{port}}\n")
    (root / "league.toml").write_text(leagueFile)
    league = loadLeague(root / "league.toml")
    players = discoverPlayers(league)
    store = Store(league.databasePath)
    store.addPlayers(players)
    games = schedule(league, players)
    store.schedule(games)
    return league, players, store, games


def filledLeague(testCase: SynchronousTestCase) -> tuple[League, list[Player], int]:
    """The league of L{RESULTS} in its database, and the id of the game with a log: bo's first loss on time."""
    league, players, store, games = scheduledLeague(testCase, NAMES, 'name = "Class <A> & co"\npairs = 4\nseed = 3\n')
    left = {pairing: list(results) for pairing, results in RESULTS.items()}
    logged = 0
    for gameId, game in store.pending(games):
        results = left[(game.a.name, game.b.name)]
        if not results:
            continue
        winner, kind, reason = results.pop(0)
        log = ""
        if kind == "time" and not logged:
            logged = gameId
            league.logs.mkdir(parents=True, exist_ok=True)
            path = league.logs / f"game-{gameId:05d}.xml"
            path.write_bytes(piranhasLog())
            log = str(path)
        store.finish(gameId, Outcome(winner, False, kind, reason, 30, 4.5, "tcp://127.0.0.1:1", log=log), game.a.name)
    store.close()
    return league, players, logged


def expectedIntervals(players: list[Player]) -> dict[str, tuple[float, str]]:
    """Each player's rating and 95 % interval as the page must print it, from the fit of L{RESULTS} made here."""
    index = {p.name: i for i, p in enumerate(players)}
    games = [
        Game(index[a], index[b], 0.5 if winner is None else float(winner == a))
        for (a, b), results in RESULTS.items()
        for winner, _, _ in results
    ]
    shown = {}
    for player, rating in zip(players, fitRatings(len(players), games), strict=True):
        low, high = rating.elo - rating.margin, rating.elo + rating.margin
        shown[player.name] = (rating.elo, f"±{rating.margin:.0f} ({low:+.0f} to {high:+.0f})")
    return shown


class Tables(HTMLParser):
    """Every table of a page by its id: rows of cells, each cell its text and the links in it."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, list[str]]]]] = {}
        self.current: list[list[tuple[str, list[str]]]] | None = None
        self.cell: list[Any] | None = None
        self.meta: list[dict[str, str | None]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "table":
            self.current = self.tables.setdefault(attributes.get("id") or "", [])
        elif tag == "tr" and self.current is not None:
            self.current.append([])
        elif tag in ("td", "th") and self.current is not None:
            self.cell = ["", []]
        elif tag == "a" and self.cell is not None:
            self.cell[1].append(attributes.get("href") or "")
        elif tag == "meta":
            self.meta.append(attributes)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.current is not None:
            self.current[-1].append((self.cell[0].strip(), self.cell[1]))
            self.cell = None
        elif tag == "table":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell[0] += data

    def body(self, table: str) -> list[list[tuple[str, list[str]]]]:
        """The rows of a table after its heading row."""
        return self.tables[table][1:]


def column(table: Tables, name: str) -> int:
    """The index of the column headed ``name`` in the standings."""
    return [text for text, _ in table.tables["standings"][0]].index(name)


class InMemory:
    """The league's site over a hub on a fake clock, asked one request at a time in memory."""

    def __init__(self, league: League, players: list[Player], running: bool) -> None:
        self.clock = Clock()
        self.hub = GameHub(self.clock, keepFinished=0)
        self.games = LeagueGames(self.hub, league.logs)
        self.games.replays.scan()
        self.standings = StandingsCache(league, players)
        self.site = leagueSite(self.hub, league, self.standings, self.games, running)
        self.site.timeOut = None
        self.site.reactor = self.clock

    def get(self, path: str) -> tuple[int, dict[str, str], str]:
        """(status, headers, body) of ``GET path``."""
        channel: Any = self.site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
        transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 40000))
        channel.makeConnection(transport)
        channel.dataReceived(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        head, _, body = transport.value().partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        return int(lines[0].split(" ")[1]), headers, body.decode("utf-8")

    def page(self, path: str) -> Tables:
        status, headers, body = self.get(path)
        assert status == 200, (path, status, body)
        assert headers["content-type"] == "text/html; charset=utf-8", headers
        return Tables(body)


class StandingsPageTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.league, self.players, self.logged = filledLeague(self)

    def test_theTableOfRatingsPointsAndLossesByCause(self) -> None:
        site = InMemory(self.league, self.players, running=False)
        page = site.page("/")
        rows = page.body("standings")
        names = [row[column(page, "player")][0] for row in rows]
        intervals = expectedIntervals(self.players)
        self.assertEqual(names, RANKED)
        self.assertEqual(names, sorted(intervals, key=lambda name: -intervals[name][0]))  # best rating first
        versions = {p.name: p.version for p in self.players}
        for rank, (row, name) in enumerate(zip(rows, names, strict=True), 1):
            self.assertEqual(row[column(page, "#")][0], str(rank))
            self.assertEqual(row[column(page, "version")][0], versions[name])
            self.assertEqual(row[column(page, "interval (95 %)")][0], intervals[name][1])
            self.assertEqual(row[column(page, "losses by cause")][0], LOSSES[name])
            self.assertEqual(row[column(page, "player")][1], [f"/games?player={name}"])
        ana = rows[0]
        self.assertEqual([ana[column(page, c)][0] for c in ("games", "W", "D", "L")], ["8", "6", "1", "1"])
        self.assertEqual(ana[column(page, "points (score)")][0], "6.5 (81.2 %)")
        _, _, body = site.get("/")
        self.assertIn("10 games counted, 14 still to play, 0 void", body)
        self.assertIn("<title>Class &lt;A&gt; &amp; co: standings</title>", body)
        self.assertEqual(page.meta[-1].get("http-equiv"), None, "a league that is over does not reload its page")

    def test_pagesAreServedFromTheLastStandingsComputed(self) -> None:
        """A request never opens the database: a game recorded counts once the run's thread refreshes."""
        site = InMemory(self.league, self.players, running=True)
        store = Store(self.league.databasePath)
        self.addCleanup(store.close)
        (gameId, game), *_ = store.pending(schedule(self.league, self.players))
        store.finish(gameId, Outcome(game.a.name, False, "", "r", 30, 4.5, "w"), game.a.name)
        self.assertIn("10 games counted, 14 still to play", site.get("/")[2])
        self.assertNotIn(f"game {gameId}", site.get("/games")[2])
        site.standings.refresh()  # what LeagueSite.finished does, in the run's thread
        self.assertIn("11 games counted, 13 still to play", site.get("/")[2])
        self.assertEqual(json.loads(site.get("/standings.json")[2])["games"], 11)

    def test_aPlayersGamesEachWithItsReplay(self) -> None:
        site = InMemory(self.league, self.players, running=False)
        every = site.page("/games").body("games")
        self.assertEqual(len(every), 10)
        page = site.get("/games?player=bo")[2]
        rows = Tables(page).body("games")
        self.assertEqual(len(rows), 6)
        self.assertTrue(all("bo" in row[1][0] for row in rows))
        self.assertIn("Class &lt;A&gt; &amp; co: the games of bo", page)
        logged = next(row for row in rows if row[0][0] == str(self.logged))
        self.assertEqual(logged[2][0], "ana won")
        self.assertEqual(logged[3][0], "bo: time — bo took 2.41 s for a move")
        self.assertEqual(logged[6], ("replay", ["/game/1"]))
        self.assertEqual([row[6][1] for row in rows if row is not logged], [[]] * 5)  # no log, no replay
        status, headers, board = site.get("/game/1/board/1")
        self.assertEqual((status, headers["content-type"]), (200, "image/svg+xml; charset=utf-8"))
        self.assertIn('class="board piranhas"', board)
        self.assertEqual(site.get("/game/1")[0], 200)
        crashed = site.get("/games?player=ana")[2]
        self.assertIn("ana: crash", crashed)
        self.assertNotIn("<script>alert", crashed)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", crashed)

    def test_whileARunPlaysAGameIsWatchedAndThePagesReload(self) -> None:
        site = InMemory(self.league, self.players, running=True)
        for path in ("/", "/games", "/games?player=cy"):
            self.assertEqual(site.page(path).meta[-1].get("http-equiv"), "refresh", path)
        store = Store(self.league.databasePath)
        playing = next(row["id"] for row in store.games("scheduled"))
        store.close()
        started = {"game": playing, "event": "started", "family": "socha", "gameType": "swc_2026_piranhas"}
        site.games.event({**started, "players": ["bo", "cy"], "board": "<svg/>"})
        site.games.event({"game": playing, "event": "moved", "text": "A1 → B2"})
        rows = site.page("/games?player=cy").body("games")
        self.assertEqual(rows[0][0][0], str(playing))  # the game being played comes first
        self.assertEqual(rows[0][2][0], "playing")
        self.assertEqual(rows[0][6], ("watch", ["/game/2"]))
        self.assertIn("A1 → B2", str(site.hub.games["2"].snapshot()))
        site.games.event({"game": playing, "event": "ended", "result": "bo won"})
        self.assertEqual(len(site.page("/games?player=cy").body("games")), 6)  # listed again once it is recorded

    def test_theOtherAddresses(self) -> None:
        site = InMemory(self.league, self.players, running=True)
        status, headers, _ = site.get("/standings")
        self.assertEqual((status, headers["location"]), (302, "/"))
        self.assertIn('"losses_by_cause"', site.get("/standings.json")[2])
        self.assertIn('<script src="/static/watch.js">', site.get("/live")[2])
        self.assertEqual(site.get("/nothing")[0], 404)
        self.assertEqual(site.page("/games?player=nobody").body("games"), [])


def get(base: str, path: str) -> str:
    with urllib.request.urlopen(base + path, timeout=30) as response:
        assert response.status == 200, (path, response.status)
        return str(response.read().decode("utf-8"))


def serveStandings(testCase: SynchronousTestCase, league: League) -> tuple[Child, str]:
    """``velhanet-league standings LEAGUE.toml --web PORT`` running, listening, and its address."""
    port = freePort()
    command = python("-m", "velhanet.league.cli", "standings", str(league.path), "--web", str(port))
    child = Child(testCase, command, interruptible=True)
    child.waitForPort(port)
    return child, f"http://127.0.0.1:{port}"


class StandingsCommandTests(SynchronousTestCase):
    """``velhanet-league standings LEAGUE.toml --web PORT``: the same site over a league that is over."""

    timeout = 180

    def test_servedUntilCtrlC(self) -> None:
        league, _, logged = filledLeague(self)
        child, base = serveStandings(self, league)
        self.assertEqual(
            child.readLine(), f"velhanet-league: standings and games of {league.name} at {base}/ (Ctrl-C stops)\n"
        )
        standings = Tables(get(base, "/")).body("standings")
        self.assertEqual([row[-1][0] for row in standings], [LOSSES[name] for name in RANKED])
        games = Tables(get(base, "/games?player=bo")).body("games")
        replay = next(row[6][1][0] for row in games if row[0][0] == str(logged))
        self.assertIn('class="board piranhas"', get(base, replay + "/board/0"))
        child.process.send_signal(signal.SIGINT)
        self.assertEqual(child.wait(30), 0)
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=5).close()


class StandingsBrowserTests(SynchronousTestCase):
    """The page in a real headless Chromium: the table shows, a player's link and a replay's link work."""

    timeout = 180

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)

    def follow(self, page: Page, link: str) -> None:
        """Click the link the JavaScript expression ``link`` finds, and wait for the next page's load."""
        page.evaluate(f"{link}.click(), true")
        page.browser.waitForEvent("Page.loadEventFired", page.session)

    def test_theTableShowsAndItsLinksLead(self) -> None:
        league, _, _ = filledLeague(self)
        _, base = serveStandings(self, league)
        browser = Chromium(self)
        page = browser.open(base + "/")
        table = "document.getElementById('standings')"
        shown = page.waitFor(
            f"{table} && {table}.getBoundingClientRect().height > 100",
            f"[...{table}.tBodies[0].rows].map(r => [r.cells[1].innerText, r.cells[10].innerText,"
            " r.getBoundingClientRect().height > 0])",
        )
        self.assertEqual(shown, [[name, LOSSES[name], True] for name in RANKED])
        self.follow(page, "document.querySelector('tr[data-player=\"bo\"] td.player a')")
        self.assertEqual(page.evaluate("location.pathname + location.search"), "/games?player=bo")
        self.assertEqual(page.evaluate("document.querySelectorAll('#games tbody tr').length"), 6)
        self.follow(page, "[...document.querySelectorAll('#games a')].find(a => a.textContent === 'replay')")
        board = "document.querySelector('#board svg')"
        moves = page.waitFor(
            f"{board} && document.querySelectorAll('#moves li').length > 0",
            "document.querySelectorAll('#moves li').length",
        )
        self.assertGreater(moves, 10)
        self.assertIn("ana", page.evaluate("document.body.innerText"))
