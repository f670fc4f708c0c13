"""Replaying Piranhas game logs: the log reader, the answer times put back in move order, the library
that feeds the spectators' site from a directory, and ``socha-match`` → ``twistd socha-replay`` for real."""

from __future__ import annotations

import json
import os
import random
import shlex
import tempfile
import urllib.request
from pathlib import Path

from twisted.internet.task import Clock
from twisted.logger import capturedLogs
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.piranhas import PiranhasState
from velhanet.games.piranhasnotation import moveNotation
from velhanet.socha.games import PiranhasGame
from velhanet.socha.protocol import SochaFactory
from velhanet.socha.replay import IncompleteLog, LogError, ReplayedGame, moveSeconds, readLog
from velhanet.socha.replayservice import ReplayLibrary
from velhanet.socha.room import PACKET_GAP
from velhanet.web.hub import GameHub

from .processes import Child, freePort, python, twistd
from .test_socha import Peer, moveXml, position


def playedLog(seed: int) -> tuple[bytes, PiranhasState]:
    """A whole game between two random players, as its observer saw it (what ``--log-dir`` keeps),
    and the server's final position."""
    clock = Clock()
    factory = SochaFactory(clock, password="pw")
    admin = Peer(factory)
    admin.send('<authenticate password="pw"/>')
    admin.send(f'<prepare seed="{seed}"><slot displayName="alice"/><slot displayName="bob"/></prepare>')
    [prepared] = admin.messages()
    roomId = prepared.get("roomId", "")
    admin.send(f'<observe roomId="{roomId}"/>')
    admin.messages()
    players = [Peer(factory) for _ in range(2)]
    for player, code in zip(players, prepared.findall("reservation"), strict=True):
        player.send(f'<joinPrepared reservationCode="{code.text}"/>')
    rng = random.Random(seed)
    core = factory.lobby.rooms[roomId].core
    while roomId in factory.lobby.rooms:
        clock.advance(PACKET_GAP)
        for player in players:
            if "moveRequest" in player.classes():
                player.send(moveXml(roomId, rng.choice(position(factory, roomId).legalMoves())))
    assert isinstance(core.game, PiranhasGame)  # the server's own game outlives its room
    log = b"<protocol>\n" + admin.transport.value() + b"</protocol>\n"
    return log, core.game.state


class ReadLogTests(SynchronousTestCase):
    def test_everyPositionAndMoveOfAPlayedGame(self) -> None:
        log, final = playedLog(5)
        game = readLog(log, "game-0000.xml")
        self.assertEqual(len(game.positions), final.turn + 1)
        self.assertEqual(len(game.moves), final.turn)
        self.assertEqual(game.positions[-1], final.cells)
        self.assertEqual(game.players, ("alice", "bob"))
        self.assertRegex(game.result, r"^(alice \(ONE\) wins|bob \(TWO\) wins|draw)")
        # each move leads from one position to the next, by the rules
        for turn, (before, text, after) in enumerate(zip(game.positions, game.moves, game.positions[1:], strict=False)):
            state = PiranhasState(before, turn)
            played = [m for m in state.legalMoves() if moveNotation(before, m) == text]
            self.assertEqual(len(played), 1, text)
            self.assertEqual(state.apply(played[0]).cells, after)

    def test_notALog(self) -> None:
        for data, why in [
            (b"<protocol><room></protocol>", "not well-formed"),
            (b"<protocol></protocol>", "no Piranhas position"),
            (b'<!DOCTYPE x [<!ENTITY a "b">]><protocol/>', "DOCTYPE"),
            (b'<protocol><room><data class="memento"><state><board/></state></data></room></protocol>', "0 fields"),
        ]:
            with self.assertRaises(LogError) as caught:
                readLog(data, "x.xml")
            self.assertIn(why, str(caught.exception))
            self.assertTrue(str(caught.exception).startswith("x.xml: "))

    def test_cutShortIsIncomplete(self) -> None:
        log, _ = playedLog(6)
        self.assertRaises(IncompleteLog, readLog, log.removesuffix(b"</protocol>\n"))


class MoveSecondsTests(SynchronousTestCase):
    def test_timesInterleavedFromTheStartTeam(self) -> None:
        game = ReplayedGame("g", startTeam="ONE", moves=["a", "b", "c", "d", "e"])
        entry = {"teamOne": 1, "answerTimes": [[0.2, 0.4], [0.1, 0.3, 0.5]]}  # player 2 is team ONE
        self.assertEqual(moveSeconds(game, entry), [0.1, 0.2, 0.3, 0.4, 0.5])
        game.startTeam = "TWO"
        self.assertEqual(moveSeconds(game, {"teamOne": 1, "answerTimes": [[0.1, 0.3], [0.2]]})[:3], [0.1, 0.2, 0.3])

    def test_unknownTimesAreNone(self) -> None:
        game = ReplayedGame("g", moves=["a", "b", "c"])
        self.assertEqual(moveSeconds(game, None), [None, None, None])
        self.assertEqual(moveSeconds(game, {"teamOne": 0, "answerTimes": [[0.1], []]}), [0.1, None, None])


class LibraryTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.directory = Path(tempfile.mkdtemp())
        self.hub = GameHub(Clock())
        self.library = ReplayLibrary(self.hub, [self.directory])

    def test_logsOfADirectoryWithTheirTimes(self) -> None:
        log, final = playedLog(7)
        (self.directory / "game-0003.xml").write_bytes(log)
        times = [[0.01 * i for i in range(40)], [0.02 * i for i in range(40)]]
        games = [{"game": 3, "teamOne": 0, "answerTimes": times}]
        (self.directory / "summary.json").write_text(json.dumps({"games": games}))
        self.assertEqual(self.library.scan(), 1)
        self.assertEqual(self.library.scan(), 0)  # read once
        [record] = self.hub.games.values()
        self.assertEqual(record.players, ("alice", "bob"))
        self.assertEqual(len(record.moves), final.turn)
        self.assertEqual([m.seconds for m in record.moves[:3]], [0.0, 0.0, 0.01])
        self.assertIn("game-0003.xml", record.gameType)
        assert record.boardAt is not None
        self.assertIn('class="squid"', record.boardAt(0))
        self.assertNotEqual(record.boardAt(0), record.boardAt(final.turn))

    def test_aLogBeingWrittenIsReadOnceFinished(self) -> None:
        log, _ = playedLog(8)
        half = self.directory / "game-0000.xml"
        half.write_bytes(log[: len(log) // 2])
        with capturedLogs() as events:
            self.assertEqual(self.library.scan(), 0)
            self.assertEqual(self.library.scan(), 0)
        said = [e["reason"] for e in events if e.get("log_namespace") == "velhanet.socha.replay"]
        self.assertEqual(len(said), 1, "said once")
        self.assertIn("game-0000.xml: no </protocol> at the end", said[0])
        half.write_bytes(log)
        self.assertEqual(self.library.scan(), 1)
        [record] = self.hub.games.values()
        self.assertEqual(record.moves[0].seconds, None)  # no summary.json: times unknown

    def test_junkIsReportedOnceAndTheRestReplayed(self) -> None:
        (self.directory / "a.xml").write_bytes(b"not xml at all")
        (self.directory / "b.xml").write_bytes(playedLog(9)[0])
        with capturedLogs() as events:
            self.assertEqual(self.library.scan(), 1)
            self.library.scan()
        warnings = [e for e in events if e.get("log_namespace") == "velhanet.socha.replay"]
        self.assertEqual(len(warnings), 1)
        self.assertIn("a.xml: not well-formed", warnings[0]["reason"])


class NotARegularFileTests(SynchronousTestCase):
    def test_aFifoIsSkippedNotRead(self) -> None:
        """Opening a FIFO for reading would block the whole server until someone writes to it."""
        directory = Path(tempfile.mkdtemp())
        os.mkfifo(directory / "game-0000.xml")
        (directory / "game-0001.xml").write_bytes(playedLog(4)[0])
        library = ReplayLibrary(GameHub(Clock()), [directory])
        with capturedLogs() as events:
            self.assertEqual(library.scan(), 1)
        self.assertEqual([e["file"] for e in events if "file" in e], [str(directory / "game-0000.xml")])


class ReplayEndToEndTests(SynchronousTestCase):
    def test_matchLogsReplayedInTheSite(self) -> None:
        """``socha-match --log-dir`` plays 2 games (one position from both sides); ``twistd socha-replay``
        serves both, and the start boards it draws for them are the same."""
        logs = Path(tempfile.mkdtemp())
        example = shlex.join(
            python("-m", "velhanet.socha.example", "--port", "{port}", "--reservation", "{reservation}")
        )
        match = Child(
            self, python("-m", "velhanet.socha.match", example, example, "--games", "2", "--log-dir", str(logs))
        )
        self.assertEqual(match.wait(120), 0)
        port = freePort()
        Child(self, twistd("socha-replay", "--web", str(port), str(logs))).waitForPort(port)

        def get(path: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
                self.assertEqual(response.status, 200)
                return response.read().decode()

        self.assertIn("velhanet", get("/"))
        first, second = get("/game/1/board/0"), get("/game/2/board/0")
        self.assertIn('class="board piranhas"', first)
        self.assertEqual(first, second)
        self.assertNotEqual(get("/game/1/board/1"), first)
