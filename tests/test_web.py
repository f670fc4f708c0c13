"""The spectators' site in memory: the hub, its streams, the resources, and the Gambit room feeding it.

Every request goes through a real ``twisted.web`` L{Site} and L{HTTPChannel}
on a C{StringTransport} with a L{Clock}: the same parser, the same
producer chain (transport → channel → request → L{Stream}) as a real
connection, without a socket.
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from tests.processes import python
from tests.test_gambit import RecordingPlayer
from velhanet.gambit.room import RoomCore, RoomMachine
from velhanet.gambit.texts import Texts
from velhanet.games.kinarow import TICTACTOE, Place, gobangRules
from velhanet.watching import NO_WATCHER, WatchedGame
from velhanet.web.boards import kInARowBoard
from velhanet.web.hub import GameHub
from velhanet.web.site import StreamsPerAddress, spectatorSite, webEndpoint


class Browser:
    """One HTTP/1.1 connection to the site, in memory."""

    def __init__(
        self,
        hub: GameHub,
        clock: Clock,
        path: bytes,
        method: bytes = b"GET",
        perAddress: StreamsPerAddress | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        site = spectatorSite(hub, perAddress)
        site.timeOut = None
        site.reactor = clock
        channel: Any = site.buildProtocol(IPv4Address("TCP", host, 40000))
        self.channel = channel  # HTTP/1.1 behind Twisted's protocol-negotiating wrapper
        self.transport = StringTransport(peerAddress=IPv4Address("TCP", host, 40000))
        channel.makeConnection(self.transport)
        channel.dataReceived(method + b" " + path + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")

    def producer(self) -> Any:
        """What the transport pauses when its buffer is full (the channel, which pauses the request's producer)."""
        assert self.transport.producer is not None
        return self.transport.producer

    def status(self) -> int:
        return int(self.transport.value().split(b" ", 2)[1])

    def body(self) -> bytes:
        return self.transport.value().partition(b"\r\n\r\n")[2]

    def events(self) -> list[tuple[str, Any]]:
        """The server-sent events received so far (chunked framing dropped)."""
        found = []
        for block in self.body().decode("utf-8").split("\n\n"):
            lines = [line for line in block.splitlines() if line.startswith(("event: ", "data: "))]
            if len(lines) == 2:
                found.append((lines[0][7:], json.loads(lines[1][6:])))
        return found


class Drawn:
    """A board that counts its drawings."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"<svg>{self.count}</svg>"


class HubTestCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.clock.advance(1000)
        self.hub = GameHub(self.clock, maxSpectators=3, backlog=4, keepFinished=2)
        self.drawn = Drawn()

    def game(self, hidden: bool = False) -> WatchedGame:
        return self.hub.startedDrawn("gambit", "chess", ["alice", "<b>bob</b>"], self.drawn, hidden)

    def open(self, path: bytes, method: bytes = b"GET") -> Browser:
        return Browser(self.hub, self.clock, path, method)

    def otherTimers(self) -> list[Any]:
        """What is scheduled besides the heartbeat of open streams."""
        return [call for call in self.clock.getDelayedCalls() if getattr(call, "func", None) != self.hub._beat]


class PageTests(HubTestCase):
    def test_listAndGamePages(self) -> None:
        self.game()
        for path in (b"/", b"/game/1", b"/game/1/"):
            page = self.open(path)
            self.assertEqual(page.status(), 200, path)
            self.assertIn(b"text/html", page.transport.value())
            self.assertIn(b'<script src="/static/watch.js">', page.body())
        script = self.open(b"/static/watch.js")
        self.assertEqual(script.status(), 200)
        self.assertIn(b"EventSource", script.body())

    def test_unknownAndMalformedPathsAreClear404s(self) -> None:
        self.game()
        for path in (
            b"/game/2",
            b"/game/abc",
            b"/game/",
            b"/game/1/moves",
            b"/game/1/events/x",
            b"/game/%2e%2e",
            b"/static/../tap.py",
            b"/static/nothing.js",
            b"/nope",
            b"/events/x",
            b"/game/" + b"9" * 40,
        ):
            page = self.open(path)
            self.assertEqual(page.status(), 404, path)
            self.assertIn(b"404 Not Found", page.body(), path)

    def test_readOnly(self) -> None:
        """No method but GET and HEAD: POST, PUT, DELETE are refused on every resource, and the game is unchanged."""
        record = self.hub.games["1"] if self.game() else None
        assert record is not None
        for method in (b"POST", b"PUT", b"DELETE"):
            for path in (b"/", b"/events", b"/game/1", b"/game/1/events", b"/static/watch.js"):
                # 405 for a method a resource could have, 501 for one twisted.web does not know there
                self.assertIn(self.open(path, method).status(), (405, 501), (method, path))
        self.assertEqual((record.moves, record.result, self.hub.spectators), ([], None, 0))

    def test_hiddenGameIsNowhere(self) -> None:
        self.game(hidden=True)
        self.assertEqual(self.open(b"/game/1").status(), 404)
        self.assertEqual(self.open(b"/game/1/events").status(), 404)
        listing = self.open(b"/events")
        self.assertEqual(listing.events(), [("games", [])])
        self.hub.games["1"].moved("e2e4")
        self.assertEqual(len(listing.events()), 1)
        self.assertEqual(self.drawn.count, 0)

    def test_bareWebPortIsLoopback(self) -> None:
        self.assertEqual(webEndpoint("8080"), "tcp:8080:interface=127.0.0.1")
        self.assertEqual(webEndpoint("tcp:8080:interface=0.0.0.0"), "tcp:8080:interface=0.0.0.0")


class StreamTests(HubTestCase):
    def test_lateSpectatorGetsTheWholeGame(self) -> None:
        game = self.game()
        self.clock.advance(2.5)
        game.moved("e2e4")
        self.clock.advance(1)
        game.moved("e7e5")
        self.assertEqual(self.drawn.count, 0, "nobody watched: nothing drawn")
        late = self.open(b"/game/1/events")
        self.assertIn(b"text/event-stream", late.transport.value())
        [(name, snapshot)] = late.events()
        assert isinstance(snapshot, dict)
        self.assertEqual(name, "snapshot")
        self.assertEqual(snapshot["moveList"], [[1, "e2e4", 2.5], [2, "e7e5", 1.0]])
        self.assertEqual(snapshot["players"], ["alice", "<b>bob</b>"])
        self.assertEqual((snapshot["svg"], snapshot["state"]), ("<svg>1</svg>", "playing"))
        game.moved("g1f3")
        game.ended("alice wins")
        self.assertEqual(
            [name for name, _ in late.events()],
            ["snapshot", "move", "end"],
        )
        self.assertEqual(
            late.events()[2][1], {"result": "alice wins", "moves": 3, "svg": "<svg>2</svg>", "steps": False}
        )
        self.assertEqual(self.otherTimers(), [], "the end took the board's place")

    def test_movesAtOnceOneBoardPerIntervalForAllSpectators(self) -> None:
        game = self.game()
        spectators = [self.open(b"/game/1/events") for _ in range(3)]
        self.assertEqual(self.drawn.count, 1)
        for move in ("e2e4", "e7e5", "g1f3"):
            game.moved(move)
        self.assertEqual(self.drawn.count, 1, "moves go at once, the board waits")
        self.clock.advance(0.25)
        self.assertEqual(self.drawn.count, 2, "one board after three moves, for all three spectators")
        game.moved("b8c6")
        self.clock.advance(0.25)
        self.assertEqual(self.drawn.count, 3)
        for spectator in spectators:
            events = spectator.events()[1:]
            self.assertEqual(
                [(name, data.get("move", [0, ""])[1] or data.get("moves")) for name, data in events],
                [("move", "e2e4"), ("move", "e7e5"), ("move", "g1f3"), ("board", 3), ("move", "b8c6"), ("board", 4)],
            )
            self.assertEqual(events[3][1]["svg"], "<svg>2</svg>")
        for spectator in spectators:
            spectator.channel.connectionLost(Exception("gone"))
        game.moved("g1f3")
        self.assertEqual(self.clock.getDelayedCalls(), [], "nobody watches: no board scheduled")

    def test_listFollowsStartsMovesAndEnds(self) -> None:
        listing = self.open(b"/events")
        game = self.game()
        game.moved("e2e4")
        game.ended("draw")
        summaries = [e[1] for e in listing.events()]
        self.assertEqual(summaries[0], [])
        self.assertEqual(
            [(s["moves"], s["state"], s["result"]) for s in summaries[1:]],
            [(0, "playing", None), (1, "over", "draw")],  # the end, at once, says the move count too
        )
        self.clock.advance(1)
        self.assertEqual(len(listing.events()), 3, "nothing left to tell")
        self.assertEqual(self.drawn.count, 0, "nobody watched the game's page: its board was never drawn")
        self.assertEqual(self.open(b"/game/1/events").events()[0][1]["svg"], "<svg>1</svg>")

    def test_listMovesAreCoalescedPerInterval(self) -> None:
        """Moves reach the list at most once a second per game, with the latest count; nothing stays scheduled."""
        listing = self.open(b"/events")
        one, two = self.game(), self.game()
        for n in range(5):
            one.moved(f"a{n}")
            two.moved(f"b{n}")
        self.assertEqual(len(listing.events()), 3)
        self.clock.advance(0.999)
        self.assertEqual(len(listing.events()), 3)
        self.clock.advance(0.001)
        self.assertEqual([(e[1]["id"], e[1]["moves"]) for e in listing.events()[3:]], [("1", 5), ("2", 5)])
        self.assertEqual(self.otherTimers(), [])
        one.moved("a5")
        self.hub.stop()
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_stuckSpectatorIsDroppedAndTheGameGoesOn(self) -> None:
        """A browser that reads nothing: paused by its transport, it keeps ``backlog`` events, then is dropped."""
        game = self.game()
        stuck = self.open(b"/game/1/events")
        fine = self.open(b"/game/1/events")
        stuck.producer().pauseProducing()  # what the TCP transport does when its buffer is full
        written = len(stuck.transport.value())
        for n in range(4):
            game.moved(f"m{n}")
        self.assertEqual(len(stuck.transport.value()), written, "nothing written while paused")
        self.assertFalse(stuck.transport.disconnecting)
        self.assertEqual(self.hub.spectators, 2)
        game.moved("m4")  # the fifth event: over the backlog of 4
        self.assertTrue(stuck.transport.disconnecting)
        self.assertEqual((self.hub.spectators, len(self.hub.games["1"].streams)), (1, 1))
        game.moved("m5")
        self.assertEqual(len(fine.events()), 7)
        self.assertEqual(len(self.hub.games["1"].moves), 6)

    def test_pausedSpectatorWithinTheBacklogCatchesUpInOrder(self) -> None:
        game = self.game()
        slow = self.open(b"/game/1/events")
        slow.producer().pauseProducing()
        for n in range(3):
            game.moved(f"m{n}")
        self.assertEqual(len(slow.events()), 1)
        slow.producer().resumeProducing()
        self.assertEqual([e[1]["move"][1] for e in slow.events()[1:]], ["m0", "m1", "m2"])
        self.assertFalse(slow.transport.disconnecting)

    def test_spectatorCapAnswers503(self) -> None:
        self.game()
        for _ in range(3):
            self.assertEqual(self.open(b"/events").status(), 200)
        refused = self.open(b"/game/1/events")
        self.assertEqual(refused.status(), 503)
        self.assertIn(b"too many spectators", refused.body())

    def test_oneAddressCannotTakeEverySlot(self) -> None:
        self.game()
        self.hub.maxSpectators = 10
        perAddress = StreamsPerAddress(limit=2)

        def watch(host: str) -> Browser:
            return Browser(self.hub, self.clock, b"/game/1/events", perAddress=perAddress, host=host)

        first, second = watch("198.18.0.1"), watch("198.18.0.1")
        self.assertEqual((first.status(), second.status()), (200, 200))
        refused = watch("198.18.0.1")
        self.assertEqual(refused.status(), 503)
        self.assertIn(b"too many streams from your address", refused.body())
        self.assertEqual(watch("198.18.0.2").status(), 200)  # another address is not held back
        first.channel.connectionLost(Exception("gone"))
        self.assertEqual(watch("198.18.0.1").status(), 200)
        self.assertEqual(perAddress.open, {"198.18.0.1": 2, "198.18.0.2": 1})

    def test_pagesAllowOnlyTheirOwnScript(self) -> None:
        self.game()
        for path in (b"/", b"/game/1"):
            page = self.open(path)
            head = page.transport.value().partition(b"\r\n\r\n")[0].lower()
            self.assertIn(b"content-security-policy: default-src 'self'; script-src 'self';", head)

    def test_closedConnectionFreesItsPlace(self) -> None:
        self.game()
        viewers = [self.open(b"/events") for _ in range(3)]
        viewers[0].channel.connectionLost(Exception("gone"))
        self.assertEqual(self.hub.spectators, 2)
        self.assertEqual(self.open(b"/game/1/events").status(), 200)

    def test_finishedGamesAreForgottenOldestFirst(self) -> None:
        listing = self.open(b"/events")
        for n in range(3):
            self.game().ended(f"end {n}")
        self.assertEqual(sorted(self.hub.games), ["2", "3"])
        self.assertIn(("gone", {"id": "1"}), listing.events())
        self.assertEqual(self.open(b"/game/1").status(), 404)


class GambitRoomTests(SynchronousTestCase):
    """The Gambit room reports start, each legal move (as UCI, never with the game id) and the end."""

    def test_roomFeedsTheHub(self) -> None:
        clock = Clock()
        hub = GameHub(clock)
        white, black = RecordingPlayer("alice"), RecordingPlayer("bob")
        core = RoomCore("e215", white, True, lambda gameId: None, Texts("en"), watcher=hub)
        room = RoomMachine(core)
        self.assertEqual(hub.games, {})
        room.join(black)
        [record] = hub.games.values()
        self.assertEqual((record.family, record.players), ("gambit", ("alice", "bob")))
        for player, move in ((white, "e215:f2f3"), (black, "e215:e7e5"), (white, "e215:e2e5"), (white, "e215:g2g4")):
            room.move(player, move)
        room.move(black, "e215:d8h4")
        self.assertEqual([m.text for m in record.moves], ["f2f3", "e7e5", "g2g4", "d8h4"])
        self.assertEqual(record.state, "over")
        self.assertIn("checkmate", (record.result or "").lower())
        self.assertIn('class="check"', record.svg())

    def test_withoutWebNothingIsKept(self) -> None:
        core = RoomCore("e215", RecordingPlayer("alice"), True, lambda gameId: None, Texts("en"))
        self.assertIs(core.watcher, NO_WATCHER)
        room = RoomMachine(core)
        room.join(RecordingPlayer("bob"))
        room.move(core.white, "e215:e2e4")
        self.assertEqual(core.board.fullmove_number, 1)
        self.assertEqual(core.board.turn, False)


class Boards:
    """A replayed game's boards: each says which position it is, and every drawing is counted."""

    def __init__(self) -> None:
        self.drawn: list[int] = []

    def __call__(self, n: int) -> str:
        self.drawn.append(n)
        return f'<svg xmlns="http://www.w3.org/2000/svg"><text>n={n}</text></svg>'


class ReplayTests(HubTestCase):
    """Finished games read from logs: listed like any other, never forgotten, their board shown after any move."""

    MOVES = (("a1", 1.5), ("b2", None), ("c3", 0.25))

    def replay(self, startedAt: float | None = 5.0) -> Boards:
        boards = Boards()
        self.hub.replayed("socha", "piranhas", ["one", "<i>two</i>"], self.MOVES, "one wins", boards, startedAt)
        return boards

    def test_listedAsOverAndListSpectatorsAreTold(self) -> None:
        listing = self.open(b"/events")
        self.replay()
        self.replay(startedAt=None)
        [(_, first), (_, second)] = listing.events()[1:]
        self.assertEqual(
            first,
            {
                "id": "1",
                "family": "socha",
                "gameType": "piranhas",
                "players": ["one", "<i>two</i>"],
                "moves": 3,
                "state": "over",
                "result": "one wins",
                "startedAt": 5.0,
            },
        )
        self.assertEqual((second["id"], second["startedAt"]), ("2", 1000.0), "started now by default")
        self.assertEqual(self.open(b"/events").events(), [("games", [first, second])])
        self.assertEqual(self.otherTimers(), [])

    def test_snapshotHasStepsEveryMoveAndTheFinalBoard(self) -> None:
        boards = self.replay()
        self.game().moved("e2e4")
        [(_, replayed)] = self.open(b"/game/1/events").events()
        self.assertEqual(replayed["moveList"], [[1, "a1", 1.5], [2, "b2", None], [3, "c3", 0.25]])
        self.assertEqual((replayed["steps"], replayed["state"]), (True, "over"))
        self.assertIn("<text>n=3</text>", replayed["svg"])
        self.assertEqual(boards.drawn, [3], "the final board, drawn once")
        [(_, live)] = self.open(b"/game/2/events").events()
        self.assertEqual((live["steps"], live["moveList"]), (False, [[1, "e2e4", 0.0]]))

    def test_boardAfterAnyMoveIsServedAsSvg(self) -> None:
        boards = self.replay()
        for n in (0, 1, 3):
            page = self.open(f"/game/1/board/{n}".encode())
            self.assertEqual(page.status(), 200, n)
            head = page.transport.value().partition(b"\r\n\r\n")[0].lower()
            self.assertIn(b"content-type: image/svg+xml", head)
            self.assertIn(b"x-content-type-options: nosniff", head)
            self.assertIn(b"content-security-policy: default-src 'self'; script-src 'self';", head)
            self.assertIn(f"<text>n={n}</text></svg>".encode(), page.body())
        self.open(b"/game/1/board/1")
        self.open(b"/game/1/board/0")
        self.assertEqual(boards.drawn, [0, 1, 3], "stepping back and forth draws each board once")

    def test_boardsThatDoNotExistAre404(self) -> None:
        boards = self.replay()
        self.game().moved("e2e4")
        for path in (
            b"/game/1/board/4",
            b"/game/1/board/-1",
            b"/game/1/board/x",
            b"/game/1/board/1.0",
            b"/game/1/board/",
            b"/game/1/board",
            b"/game/1/board/0000001",
            b"/game/1/board/" + b"9" * 40,
            b"/game/1/board/1/x",
            b"/game/2/board/0",  # a live game has no steps
            b"/game/3/board/0",
        ):
            page = self.open(path)
            self.assertEqual(page.status(), 404, path)
            self.assertIn(b"404 Not Found", page.body(), path)
        self.assertEqual(boards.drawn, [])
        self.assertIn(self.open(b"/game/1/board/0", b"POST").status(), (405, 501))
        self.assertEqual(self.open(b"/game/1/board/000001").status(), 200)

    def test_replayedGamesAreNeverForgotten(self) -> None:
        """``keepFinished`` (2 here) counts the games played on this server only."""
        for _ in range(5):
            self.replay()
        listing = self.open(b"/events")
        for n in range(3):
            self.game().ended(f"end {n}")
        self.assertEqual(sorted(self.hub.games, key=int), ["1", "2", "3", "4", "5", "7", "8"])
        self.assertEqual([e for e in listing.events() if e[0] == "gone"], [("gone", {"id": "6"})])
        self.assertEqual(self.open(b"/game/1/board/3").status(), 200)

    def test_aReplayIsNotChangedByReports(self) -> None:
        """A replayed game is over: a stray move or end reported on it changes nothing."""
        record = self.hub.replayed("socha", "piranhas", ["one", "two"], self.MOVES, "one wins", Boards())
        record.moved("z9")
        record.ended("two wins")
        self.assertEqual((len(record.moves), record.result), (3, "one wins"))
        self.assertEqual(self.clock.getDelayedCalls(), [])


IMPORTS_OF_A_SERVER = """
import sys
from twisted.internet.task import Clock
from velhanet.{family} import service, tap
options = tap.Options()
options.parseOptions({arguments!r})
service.makeService(options, Clock())
print(sorted(m for m in sys.modules if m in ("chess", "velhanet.games.piranhas") or m.startswith(
    ("twisted.web", "chess.", "velhanet.web.site"))))
"""
"""Which of the modules only some servers need a service loads, made as twistd makes it."""


class ImportCostTests(SynchronousTestCase):
    """A server loads what it uses: the site (``twisted.web``, ``chess.svg``) only with ``--web``, and no other
    family's game engine (``chess`` is 1.7 MB of RSS imported alone, the Piranhas tables 1.3 MB)."""

    def loaded(self, family: str, *arguments: str) -> list[str]:
        script = IMPORTS_OF_A_SERVER.format(family=family, arguments=list(arguments))
        output = subprocess.run(python("-c", script), capture_output=True, text=True, timeout=60, check=True).stdout
        return list(json.loads(output.strip().replace("'", '"')))

    def test_eachServerLoadsOnlyItsOwn(self) -> None:
        listen = ("--listen", "tcp:0:interface=127.0.0.1")
        self.assertEqual(self.loaded("gambit", *listen), ["chess"])
        self.assertEqual(self.loaded("socha", *listen), ["velhanet.games.piranhas"])
        self.assertEqual(self.loaded("velha", "--nick", "Ana", "--bot", "--interface", "127.0.0.1"), [])

    def test_theSiteWithWeb(self) -> None:
        loaded = self.loaded("gambit", "--listen", "tcp:0:interface=127.0.0.1", "--web", "0")
        self.assertIn("twisted.web.server", loaded)
        self.assertIn("velhanet.web.site", loaded)


class HeartbeatTests(HubTestCase):
    """Every open stream gets a comment line every 15 s, so that a vanished spectator cannot keep its slot."""

    def test_idleStreamsGetACommentLine(self) -> None:
        self.game()
        listing, watching = self.open(b"/events"), self.open(b"/game/1/events")
        self.clock.advance(14.9)
        self.assertNotIn(b": alive", watching.body())
        self.clock.advance(0.1)
        for page in (listing, watching):
            self.assertEqual(page.body().count(b": alive\n\n"), 1)
        self.clock.advance(15)
        self.assertEqual(watching.body().count(b": alive\n\n"), 2)
        self.assertEqual(len(watching.events()), 1, "comments are no events")

    def test_aStreamNobodyReadsIsDroppedByItsHeartbeats(self) -> None:
        """A stuck spectator of an idle game: paused by its transport, 4 comment lines later it is gone."""
        self.game()
        stuck = self.open(b"/game/1/events")
        stuck.producer().pauseProducing()
        for _ in range(4):  # one heartbeat at a time: a Clock schedules the next one after advancing
            self.clock.advance(15)
        self.assertFalse(stuck.transport.disconnecting)
        self.clock.advance(15)
        self.assertTrue(stuck.transport.disconnecting, "a fifth comment overflows the backlog of 4: dropped")
        self.assertEqual(self.hub.spectators, 0)
        self.assertEqual(self.clock.getDelayedCalls(), [], "no stream left: no heartbeat")

    def test_noHeartbeatWithoutStreams(self) -> None:
        page = self.open(b"/game/1/events")  # no such game: a 404, no stream
        self.assertEqual(page.status(), 404)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        listing = self.open(b"/events")
        self.assertEqual(len(self.clock.getDelayedCalls()), 1)
        listing.channel.connectionLost(Exception("gone"))
        self.assertEqual(self.clock.getDelayedCalls(), [])


class PositionDrawingTests(SynchronousTestCase):
    """The rooms hand over their engines' states; the site chooses the drawing."""

    def test_eachEnginesStateIsDrawnByItsOwnDrawing(self) -> None:
        import chess

        from velhanet.games.piranhas import teamOf
        from velhanet.games.piranhassetup import PiranhasRules
        from velhanet.web.boards import drawPosition

        board = chess.Board()
        board.push_uci("e2e4")
        self.assertIn("<svg", drawPosition(board))
        self.assertIn('class="stone player0 mark-x"', drawPosition(TICTACTOE.initial().apply(Place(1, 1))))
        start = PiranhasRules().initial(random.Random(7))
        fish = sum(teamOf(value) is not None for value in start.cells)
        self.assertEqual(drawPosition(start).count('class="fish team'), fish)
        self.assertGreater(fish, 0)
        self.assertEqual(drawPosition(None), "")
        with self.assertRaises(TypeError):
            drawPosition(object())

    def test_theHubDrawsThePositionWhenSomeoneWatches(self) -> None:
        clock = Clock()
        hub = GameHub(clock)
        states = [TICTACTOE.initial()]
        watched = hub.started("velha", "tic-tac-toe", ["ana", "bo"], lambda: states[-1])
        record = hub.visible("1")
        assert record is not None
        self.assertNotIn("mark-x", record.svg())
        states.append(states[-1].apply(Place(0, 0)))
        watched.moved("ana: 1")
        self.assertIn("mark-x", record.svg())


class KInARowBoardTests(SynchronousTestCase):
    def test_ticTacToeIsXAndOGobangIsStones(self) -> None:
        ticTacToe = TICTACTOE.initial().apply(Place(0, 0)).apply(Place(1, 1))
        drawn = kInARowBoard(ticTacToe)
        self.assertEqual(
            (drawn.count('class="stone player0 mark-x"'), drawn.count('class="stone player1 mark-o"')), (1, 1)
        )
        gobang = gobangRules(9).initial().apply(Place(4, 4)).apply(Place(5, 5))
        drawn = kInARowBoard(gobang)
        self.assertEqual(drawn.count('class="stone player0" '), 1)
        self.assertEqual(drawn.count('class="stone player1" '), 1)
        self.assertNotIn("mark-", drawn)
