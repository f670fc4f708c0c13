"""Each family's rooms feeding the spectators' hub: gobang, Software-Challenge, and velha's own match.

(Gambit's room is in ``tests/test_web.py``.) The machines run alone with
recording fakes and a L{Clock}, as in each family's own tests; the hub is real.
"""

from __future__ import annotations

import random
from typing import Any
from xml.etree.ElementTree import fromstring

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from tests.test_gobang import RecordingChannel
from velhanet.games.kinarow import TICTACTOE, Place
from velhanet.gobang import room as gobangroom
from velhanet.gobang.room import BLACK, WHITE
from velhanet.socha import room as socharoom
from velhanet.socha.games import GAME_TYPES
from velhanet.socha.lobby import Lobby, SochaLimits
from velhanet.velha.spectated import SpectatedMatch
from velhanet.web.hub import GameHub, GameRecord


def only(hub: GameHub) -> GameRecord:
    [record] = hub.games.values()
    return record


class GobangTests(SynchronousTestCase):
    def test_gameFeedsTheHub(self) -> None:
        hub = GameHub(Clock())
        core = gobangroom.RoomCore(1, TICTACTOE, lambda core: None, watcher=hub)
        game = gobangroom.RoomMachine(core)
        black, white = RecordingChannel(100), RecordingChannel(200)
        game.seat(BLACK, black)
        self.assertEqual(hub.games, {}, "not started before both are seated")
        game.seat(WHITE, white)
        record = only(hub)
        self.assertEqual((record.family, record.players), ("gobang", ("black (pid 100)", "white (pid 200)")))
        for channel, x, y in (
            (black, 1, 1),
            (white, 2, 2),
            (white, 3, 3),
            (black, 1, 2),
        ):  # white's second is out of turn
            game.move(channel, x, y)
        # the wire's 1-based (x, y), y from the top, on the drawn board's squares: letters, rows from the bottom
        self.assertEqual([m.text for m in record.moves], ["black a3", "white b2", "black a2"])
        for label in ("a", "b", "c", "1", "2", "3"):
            self.assertIn(f">{label}</text>", record.svg())
        self.assertEqual(record.svg().count('class="stone player0 mark-x"'), 2)  # tic-tac-toe: X marks
        game.resign(white)
        self.assertEqual(record.state, "over")
        self.assertIn("black wins", record.result or "")


class SochaTests(SynchronousTestCase):
    def test_roomFeedsTheHub(self) -> None:
        hub = GameHub(Clock())
        piranhas = GAME_TYPES["swc_2026_piranhas"]
        core = socharoom.RoomCore("room-secret", piranhas, Clock(), lambda roomId: None, [], watcher=hub)
        game: Any = core.gameType.newGame(random.Random(1))
        core.game = game
        core.startWatching(game)
        record = only(hub)
        self.assertEqual(
            (record.family, record.gameType, record.players), ("socha", "swc_2026_piranhas", ("ONE", "TWO"))
        )
        self.assertEqual(record.svg().count('class="fish team0"'), record.svg().count('class="fish team1"'))
        self.assertGreater(record.svg().count('class="fish team0"'), 0)
        game.play(fromstring('<data class="move"><from x="0" y="1"/><direction>UP</direction></data>'))
        core.played(game)
        game.play(fromstring('<data class="move"><from x="1" y="0"/><direction>RIGHT</direction></data>'))
        core.played(game)
        # as the Software-Challenge's rules write a move ("von A1 nach A9"), on the drawn board's A-J and 0-9
        self.assertEqual([m.text for m in record.moves], ["A1 → A9", "B0 → J0"])
        for label in ("A", "J", "0", "9"):
            self.assertIn(f">{label}</text>", record.svg())
        core.cancelled("the server stops")
        self.assertEqual(record.result, "the server stops")
        self.assertNotIn("room-secret", str(record.snapshot()), "the room id lets an administrator act: never shown")

    def test_preparedGamesAreHiddenUnlessShown(self) -> None:
        lobby = Lobby(Clock(), SochaLimits())
        self.assertEqual(
            (
                lobby.newRoom("swc_2026_piranhas", True, False).core.hidden,
                lobby.newRoom("swc_2026_piranhas", False, False).core.hidden,
            ),
            (True, False),
        )
        lobby.showPrepared = True
        self.assertFalse(lobby.newRoom("swc_2026_piranhas", True, False).core.hidden)


class RecordingFrontEnd:
    def __init__(self) -> None:
        self.heard: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self.heard.append(name)


class VelhaTests(SynchronousTestCase):
    def test_eachGameOfTheSeriesIsShownAndTheFrontEndHearsAll(self) -> None:
        hub = GameHub(Clock())
        frontEnd = RecordingFrontEnd()
        match = SpectatedMatch(frontEnd, hub, "Ana", "Bo")
        board = TICTACTOE.initial()
        match.gameStarted(1, False, board)
        for position, byMe in ((5, False), (1, True)):
            board = board.apply(Place((position - 1) % 3, (position - 1) // 3))
            match.moved(board, position, byMe)
        match.yourTurn(board)
        match.gameOver("lost", board, (0, 1))
        match.gameStarted(2, True, TICTACTOE.initial())
        match.matchEnded("Bo gave up")
        first, second = hub.games.values()
        # positions 1-9 from the top left, on the drawn board's squares a-c and 1-3 from the bottom
        self.assertEqual((first.players, [m.text for m in first.moves]), (("Bo", "Ana"), ["Bo: b2", "Ana: a3"]))
        self.assertEqual(first.result, "Bo wins (series Ana 0, Bo 1)")
        self.assertEqual((first.svg().count("mark-x"), first.svg().count("mark-o")), (1, 1))
        self.assertEqual((second.players, second.result), (("Ana", "Bo"), "Bo gave up"))
        self.assertEqual(
            frontEnd.heard, ["gameStarted", "moved", "moved", "yourTurn", "gameOver", "gameStarted", "matchEnded"]
        )


class MoveTextTests(SynchronousTestCase):
    """The squares of the move texts, as the drawn boards label them."""

    def test_piranhasAsTheOfficialRulesWriteIt(self) -> None:
        from velhanet.games.piranhas import Direction, PiranhaMove
        from velhanet.games.piranhasnotation import moveNotation
        from velhanet.games.piranhassetup import PiranhasRules

        start = PiranhasRules().initial(random.Random(7))
        # the rules' own examples for the first move: "von A4 nach C4", "von A1 nach A9"
        self.assertEqual(moveNotation(start.cells, PiranhaMove(0, 4, Direction.RIGHT)), "A4 → C4")
        self.assertEqual(moveNotation(start.cells, PiranhaMove(0, 1, Direction.UP)), "A1 → A9")
        # what a log or a player may hold that is no legal move: its start and direction, never a crash
        self.assertEqual(moveNotation(start.cells, PiranhaMove(0, 0, Direction.UP)), "A0 UP")
        self.assertEqual(moveNotation(start.cells, PiranhaMove(12, 0, Direction.UP)), "(12, 0) UP")

    def test_kInARowSquares(self) -> None:
        from velhanet.games.kinarow import columnName, gobangRules, squareName

        self.assertEqual(squareName(gobangRules(15), 7, 7), "h8")  # the centre, renju's first move
        self.assertEqual(squareName(TICTACTOE, 0, 0), "a3")
        self.assertEqual([columnName(x) for x in (0, 25, 26, 62)], ["a", "z", "aa", "bk"])
