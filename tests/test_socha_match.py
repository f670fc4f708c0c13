"""``socha-match``: the statistics against values computed by hand, the pairing and side swapping,
the judging of a game from what an observer saw, and real matches against ``twistd socha-server``."""

from __future__ import annotations

import json
import math
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.sandbox.verdict import Verdict
from velhanet.socha.judging import Deadlines, Ending, ProgramEnd, judge
from velhanet.socha.match import ObservingAdmin, matchParser, parseArguments, serverCommand
from velhanet.socha.matchstats import (
    GameResult,
    MatchStats,
    commandLine,
    elo,
    gameSeed,
    pairedPositions,
    report,
    sides,
    statsOf,
    summary,
)
from velhanet.socha.replay import loadLog
from velhanet.socha.wire import XmlStreamReader

from .processes import Child, python
from .test_help import argparseProblems

EXAMPLE = shlex.join(
    python("-m", "velhanet.socha.example", "--host", "{host}", "--port", "{port}", "--reservation", "{reservation}")
)
SOCHA_PLAYER = shlex.join(python(str(Path(__file__).parent / "socha_player.py"), "{port}", "{seed}")) + (
    " --reservation {reservation}"
)
"""A real ``socha==4.3.9`` player (random moves unless given ``--greedy``)."""
LEAVER = """
import socket, sys
connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
connection.sendall(b'<protocol><joinPrepared reservationCode="' + sys.argv[2].encode() + b'"/>')
seen = b""
while b"moveRequest" not in seen:
    chunk = connection.recv(65536)
    if not chunk:
        break
    seen += chunk
connection.close()
"""
"""Joins, closes its connection when first asked for a move, and exits 0."""


class StatisticsTests(SynchronousTestCase):
    def test_tenFiveFive(self) -> None:
        """W 10, L 5, D 5 (n 20), by hand with cutechess-cli's formulas:

        score = (10 + 2.5) / 20 = 0.625; w, l, d = .5, .25, .25;
        var = .5·.375² + .25·.625² + .25·.125² = .0703125 + .09765625 + .00390625 = .171875;
        half width = 1.959964 · sqrt(.171875 / 20) = 1.959964 · .0927025 = .181694 → [.44331, .80669];
        Elo = -400 log10(1/.625 - 1) = -400 log10(.6) = 88.74;
        elo(.80669) = -400 log10(.23963) = 248.19, elo(.44331) = -400 log10(1.25575) = -39.56,
        margin = (248.19 + 39.56) / 2 = 143.87 (cutechess prints "Elo difference: 88.7 +/- 143.9");
        LOS = ½ (1 + erf(5 / sqrt(30))) = ½ (1 + .80330) = .9016; 0.5 is inside: not significant.
        """
        stats = MatchStats(10, 5, 5)
        self.assertEqual((stats.games, stats.score), (20, 0.625))
        self.assertAlmostEqual(stats.variance, 0.171875)
        low, high = stats.interval
        self.assertAlmostEqual(low, 0.44331, places=4)
        self.assertAlmostEqual(high, 0.80669, places=4)
        self.assertAlmostEqual(stats.elo, 88.74, places=2)
        self.assertAlmostEqual(stats.eloMargin, 143.87, places=1)
        self.assertAlmostEqual(stats.los, 0.9016, places=3)
        self.assertFalse(stats.significant)
        self.assertIn("Elo difference: 88.7 +/- 143.9", "\n".join(stats.lines()))

    def test_sixtyThirtyTen(self) -> None:
        """W 60, L 30, D 10 (n 100): score .65; var = .6·.35² + .3·.65² + .1·.15² = .2025, sd .45;
        half width = 1.959964 · .045 = .088198 → [.56180, .73820], which excludes ½: significant;
        Elo = -400 log10(.53846) = 107.54; elo(.7382) = 180.10, elo(.5618) = 43.18, margin 68.46.
        """
        stats = MatchStats(60, 30, 10)
        self.assertAlmostEqual(stats.variance, 0.2025)
        low, high = stats.interval
        self.assertAlmostEqual(low, 0.56180, places=4)
        self.assertAlmostEqual(high, 0.73820, places=4)
        self.assertAlmostEqual(stats.elo, 107.54, places=2)
        self.assertAlmostEqual(stats.eloMargin, 68.46, places=1)
        self.assertTrue(stats.significant)
        self.assertIn("player 1 is significantly stronger", stats.verdict())
        self.assertTrue(MatchStats(30, 60, 10).significant)
        self.assertIn("player 2 is significantly stronger", MatchStats(30, 60, 10).verdict())

    def test_edges(self) -> None:
        self.assertEqual(elo(0.5), 0.0)
        self.assertEqual((elo(1.0), elo(0.0)), (math.inf, -math.inf))
        none = MatchStats(0, 0, 0)
        self.assertEqual((none.score, none.significant, none.los), (0.5, False, 0.5))
        self.assertEqual(MatchStats(0, 0, 4).variance, 0.0)
        self.assertEqual(MatchStats(3, 0, 0).asDict()["elo"], "+inf")
        self.assertEqual(MatchStats(2, 0, 0).eloMargin, math.inf)
        # Every game won: the interval is a point, the sign test decides (LOS ½(1 + erf(n / sqrt(2n)))).
        self.assertFalse(MatchStats(2, 0, 0).significant)  # LOS .921
        self.assertTrue(MatchStats(0, 6, 0).significant)  # LOS .0072
        self.assertFalse(MatchStats(0, 0, 30).significant)
        json.dumps(MatchStats(3, 0, 0).asDict())  # no infinity in the JSON


class PairingTests(SynchronousTestCase):
    def test_startAlternatesAndPairsShareASeed(self) -> None:
        self.assertEqual([sides(game) for game in range(4)], [(0, 1), (1, 0), (0, 1), (1, 0)])
        self.assertEqual([gameSeed(7, game) for game in range(5)], [7, 7, 8, 8, 9])

    def test_placeholders(self) -> None:
        words = commandLine("'my bot' --to {host}:{port} -r {reservation} -s {seed}", "h", 5, "code", 3)
        self.assertEqual(words, ["my bot", "--to", "h:5", "-r", "code", "-s", "3"])

    def test_statsAndSummaryPerSide(self) -> None:
        results = [
            GameResult(0, teamOne=0, winner=0),
            GameResult(1, teamOne=1, winner=0, lossKind="time", reason="slow"),
            GameResult(2, teamOne=0),
            GameResult(3, teamOne=1, void=True, reason="no result"),
        ]
        self.assertEqual(statsOf(results), MatchStats(2, 0, 1))
        data = summary(results, ("a", "b"), 4, interrupted=False)
        first, second = data["players"]
        self.assertEqual((first["as_team_one"], first["as_team_two"]), ([1, 0, 1], [1, 0, 0]))
        self.assertEqual((second["irregular_losses"], second["loss_reasons"]), ({"time": 1}, ["slow"]))
        self.assertEqual(data["void_games"], [{"game": 3, "reason": "no result"}])


class PositionPairTests(SynchronousTestCase):
    """Each start position from both sides: games 2k and 2k+1 should share their position's fingerprint."""

    def results(self, *positions: str) -> list[GameResult]:
        return [GameResult(game, sides(game)[0], winner=0, position=p) for game, p in enumerate(positions)]

    def test_pairsCountedAndReported(self) -> None:
        kept = self.results("a", "a", "b", "b", "c")  # game 4's partner was never played
        self.assertEqual(pairedPositions(kept), (2, 0))
        lines = report(summary(kept, ("x", "y"), 5, False), kept)
        self.assertIn("start positions: each of 2 played from both sides", lines)

    def test_aServerIgnoringTheSeedIsSaid(self) -> None:
        ignored = self.results("a", "b", "c", "c")
        self.assertEqual(pairedPositions(ignored), (1, 1))
        data = summary(ignored, ("x", "y"), 4, False)
        self.assertEqual(data["position_pairs"], {"same": 1, "different": 1})
        self.assertTrue(any("1 of 2 pairs of games had different ones" in line for line in report(data, ignored)))

    def test_watcherFingerprintsTheFirstBoard(self) -> None:
        def memento(turn: int, fields: str) -> str:
            board = "<board><row>" + "".join(f"<field>{f}</field>" for f in fields.split()) + "</row></board>"
            return f'<room roomId="r"><data class="memento"><state turn="{turn}">{board}</state></data></room>'

        watchers = [ObservingAdmin("pw", ("p1", "p2"), True, Clock(), seed=3) for _ in range(3)]
        for watcher, first in zip(watchers, ("ONE_S EMPTY", "ONE_S EMPTY", "EMPTY ONE_S"), strict=True):
            for message in packets(memento(0, first) + memento(1, "EMPTY EMPTY")):
                watcher.handle(message)
        self.assertEqual(watchers[0].position, watchers[1].position)
        self.assertNotEqual(watchers[0].position, watchers[2].position)
        self.assertEqual(len(watchers[0].position), 12)


class WebOptionTests(SynchronousTestCase):
    def test_theStartedServerShowsTheMatch(self) -> None:
        argv = serverCommand(parseArguments(["a", "b", "--web", "8081"]), 5000, "pw")
        self.assertEqual(argv[argv.index("--web") :], ["--web", "8081", "--web-show-prepared"])
        self.assertNotIn("--web", serverCommand(parseArguments(["a", "b"]), 5000, "pw"))

    def test_notWithAServerOfOnesOwn(self) -> None:
        with self.assertRaises(SystemExit):
            parseArguments(["a", "b", "--server", "h:1", "--password", "p", "--web", "8081"])

    def test_aServerThatCannotStartSaysWhy(self) -> None:
        """The site's port is taken: the server's own one-line reason, not just its exit status."""
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            child = Child(self, python("-m", "velhanet.socha.match", "a", "b", "--web", str(port)))
            self.assertEqual(child.wait(60), 1)
        assert child.process.stdout is not None
        output = child.process.stdout.read()
        self.assertIn("socha-match: the server exited with status 1: twistd socha-server: not started: ", output)
        self.assertIn(f"cannot listen on tcp:{port}:interface=127.0.0.1", output)


def packets(xml: str) -> list[Element]:
    return XmlStreamReader().feed(f"<protocol>{xml}".encode())


class JudgeTests(SynchronousTestCase):
    """What a game was, from what its observer saw; game 1 has player 2 on team ONE."""

    def judge(
        self, xml: str, game: int = 1, programs: tuple[ProgramEnd, ProgramEnd] | None = None, **ending: Any
    ) -> GameResult:
        watcher = ObservingAdmin("pw", ("p2", "p1"), True, Clock())
        for message in packets(xml):
            watcher.handle(message)
        ends = programs or (ProgramEnd(0), ProgramEnd(0))
        return judge(game, watcher.observation(), ends, Ending(**ending), Deadlines(30.0, 900.0))

    def result(self, team: str | None, regular: bool, reason: str = "r") -> str:
        winner = f'team="{team}" ' if team else ""
        return (
            f'<room roomId="r"><data class="result"><winner {winner}regular="{str(regular).lower()}"'
            f' reason="{reason}"/></data></room>'
        )

    def test_aLimitBrokenLosesAndByBothIsVoid(self) -> None:
        memory = Verdict(status=None, limit="memory", cause="killed: memory limit 256 MiB exceeded")
        result = self.judge(self.memento(0), programs=(ProgramEnd(None, True, memory), ProgramEnd(0)), brokeAt={0: 7})
        self.assertEqual((result.winner, result.lossKind), (1, "limit"))
        self.assertEqual(result.reason, "p1 killed: memory limit 256 MiB exceeded (move 7)")
        both = (ProgramEnd(None, True, memory), ProgramEnd(None, True, memory))
        void = self.judge(self.memento(0) + self.result("ONE", True), programs=both)
        self.assertEqual((void.void, void.lossKind), (True, "void"))
        self.assertTrue(void.reason.startswith("both players broke a limit: p1 killed"))

    def test_aCrashLosesAndTwoAreVoid(self) -> None:
        programs = (ProgramEnd(0), ProgramEnd(139))
        result = self.judge(self.memento(0), programs=programs, crashed=(1,))
        self.assertEqual((result.winner, result.lossKind), (0, "crash"))
        self.assertEqual(result.reason, "p2 exited with status 139 before the game ended")
        both = self.judge(self.memento(0), programs=(ProgramEnd(1), ProgramEnd(2)), crashed=(0, 1))
        self.assertEqual((both.void, both.reason), (True, "both players exited before the game ended (status 1 and 2)"))

    def test_anInterruptedGameIsCancelled(self) -> None:
        result = self.judge(self.memento(0), interrupted=True)
        self.assertEqual((result.void, result.lossKind), (True, "cancelled"))

    def test_whoDidNotJoinLoses(self) -> None:
        joined = '<joinedGameRoom roomId="r" playerCount="1"/>'
        programs = (ProgramEnd(None, True), ProgramEnd(0))
        result = self.judge(joined, programs=programs)
        self.assertEqual((result.winner, result.lossKind, result.reason), (1, "no-join", "p1 did not join within 30 s"))
        nobody = self.judge("", programs=(ProgramEnd(None, True), ProgramEnd(None, True)))
        self.assertEqual((nobody.void, nobody.lossKind, nobody.reason), (True, "no-join", "no player joined in time"))

    def test_noResultIsVoid(self) -> None:
        result = self.judge(self.memento(0) + self.memento(1))
        self.assertEqual((result.void, result.lossKind, result.reason), (True, "void", "no result"))

    def test_leavingMidGameIsACrashAndOtherEndsAreIrregular(self) -> None:
        left = self.judge(self.memento(0) + self.result("ONE", False, "p1 hat das Spiel verlassen."))
        self.assertEqual((left.winner, left.lossKind), (1, "crash"))  # team ONE is player 2 in game 1
        self.assertEqual(left.reason, "p1 closed its connection before the game ended (p1 hat das Spiel verlassen.)")
        other = self.judge(self.memento(0) + self.result("TWO", False, "Schwarm zerfallen"))
        self.assertEqual((other.winner, other.lossKind), (0, "irregular"))

    def test_theGameDeadlineLosesThePlayerToMove(self) -> None:
        result = self.judge(self.memento(0) + self.memento(1) + '<room roomId="r"><left/></room>')
        self.assertEqual(result.lossKind, "void")  # no result at all: void (not the deadline)
        cancelled = self.judge(self.memento(0) + self.memento(1) + self.result(None, False, "abgebrochen"))
        # After two mementos team TWO (player 1 in game 1) is to move: it loses at the deadline.
        self.assertEqual((cancelled.winner, cancelled.lossKind), (1, "deadline"))
        self.assertEqual(cancelled.reason, "p1 did not move within the game deadline (900 s)")

    def memento(self, turn: int) -> str:
        return f'<room roomId="r"><data class="memento"><state startTeam="ONE" turn="{turn}"/></data></room>'

    def test_ruleViolationOfTeamOneIsPlayerTwosLoss(self) -> None:
        result = self.judge(
            self.memento(0)
            + self.memento(1)
            + '<room roomId="r"><data class="error" message="Ungueltiger Zug"/></room>'
            + '<room roomId="r"><data class="result"><winner team="ONE" regular="false" reason="x"/></data></room>'
        )
        self.assertEqual((result.winner, result.lossKind, result.reason), (1, "rule", "Ungueltiger Zug"))
        self.assertEqual(result.moves, 1)
        self.assertEqual(len(result.answerTimes[1]), 1)  # move 1 was team ONE's: player 2's

    def test_regularWinAndDraw(self) -> None:
        win = '<room roomId="r"><data class="result"><winner team="TWO" regular="true" reason="r"/></data></room>'
        self.assertEqual(
            (self.judge(self.memento(0) + win).winner, self.judge(self.memento(0) + win).lossKind), (0, "")
        )
        draw = '<room roomId="r"><data class="result"><winner regular="true" reason="d"/></data></room>'
        self.assertIsNone(self.judge(self.memento(0) + draw).winner)

    def test_hardTimeoutIsALossOnTime(self) -> None:
        """The server's reasons for both timeouts (velhanet/socha/room.py) say "Sekunden", not "Zeit"."""
        reason = "p2 hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet."
        winner = f'<winner team="TWO" regular="false" reason="{reason}"/>'
        over = f'<room roomId="r"><data class="result">{winner}</data></room>'
        result = self.judge(self.memento(0) + over)
        self.assertEqual((result.winner, result.lossKind, result.reason), (0, "time", reason))


def runMatch(testCase: SynchronousTestCase, *arguments: str, logs: Path | None = None) -> tuple[str, dict[str, Any]]:
    """``socha-match`` as a real process (it starts its own server); its output and summary.json."""
    logs = logs or Path(tempfile.mkdtemp())
    child = Child(testCase, python("-m", "velhanet.socha.match", *arguments, "--log-dir", str(logs)))
    try:
        status = child.wait(240)
    except subprocess.TimeoutExpired:
        testCase.fail("socha-match did not end within 240 s")
    assert child.process.stdout is not None
    output = child.process.stdout.read()
    testCase.assertEqual(status, 0, output)
    return output, json.loads((logs / "summary.json").read_text())


class EndToEndTests(SynchronousTestCase):
    def test_fourGamesBetweenExamplePlayers(self) -> None:
        command = EXAMPLE + " --seed {seed}"
        output, data = runMatch(self, command, command, "--games", "4", "--parallel", "2")
        self.assertIn("Score of p1 vs p2: ", output)
        self.assertEqual((data["games_played"], data["void_games"]), (4, []))
        self.assertEqual(data["stats_player1"]["games"], 4)
        self.assertEqual([game["teamOne"] for game in data["games"]], [0, 1, 0, 1])
        positions = [game["position"] for game in data["games"]]
        self.assertEqual((positions[0], positions[2]), (positions[1], positions[3]), "a pair shares its position")
        self.assertNotEqual(positions[0], positions[2])
        self.assertEqual(data["position_pairs"], {"same": 2, "different": 0})
        self.assertIn("start positions: each of 2 played from both sides", output)
        self.assertIn("; step through the games: twistd -n socha-replay --web 8080 ", output)
        for player in data["players"]:
            self.assertEqual(sum(player["as_team_one"]), 2)
            self.assertGreater(player["average_answer_s"], 0)

    def test_crashingPlayerLosesWithTheReason(self) -> None:
        crash = shlex.join(python("-c", "raise SystemExit(1)"))
        output, data = runMatch(self, EXAMPLE, crash, "--games", "2", "--grace", "1")
        self.assertEqual(data["stats_player1"]["wins"], 2, output)
        second = data["players"][1]
        self.assertEqual(second["irregular_losses"], {"crash": 2})
        self.assertEqual(second["loss_reasons"], ["p2 exited with status 1 before the game ended"])
        self.assertIn("p2 exited with status 1 before the game ended", output)

    def test_playerThatClosesItsConnectionInMidGameLosesByCrash(self) -> None:
        """What the ``socha`` library does when ``calculate_move`` raises: it leaves, then exits 0."""
        command = shlex.join(python("-c", LEAVER, "{port}", "{reservation}"))
        output, data = runMatch(self, EXAMPLE, command, "--games", "2", "--grace", "1")
        self.assertEqual(data["stats_player1"]["wins"], 2, output)
        second = data["players"][1]
        self.assertEqual(second["irregular_losses"], {"crash": 2}, output)
        self.assertEqual(len(second["loss_reasons"]), 1, output)
        closedEarly = "p2 closed its connection before the game ended ("
        self.assertTrue(second["loss_reasons"][0].startswith(closedEarly), output)
        self.assertIn("hat das Spiel verlassen.", second["loss_reasons"][0])

    def test_bothCrashingIsAVoidGameNotALoss(self) -> None:
        crash = shlex.join(python("-c", "raise SystemExit(1)"))
        output, data = runMatch(self, crash, crash, "--games", "2", "--grace", "1")
        self.assertEqual(data["stats_player1"]["games"], 0, output)
        reason = "both players exited before the game ended (status 1 and 1)"
        self.assertEqual(data["void_games"], [{"game": 0, "reason": reason}, {"game": 1, "reason": reason}])
        self.assertIn(f"game 1 void: {reason}", output)

    def test_playerThatNeverJoinsLosesWithTheReason(self) -> None:
        sleeper = shlex.join(python("-c", "import time; time.sleep(120)"))
        output, data = runMatch(self, sleeper, EXAMPLE, "--games", "1", "--join-timeout", "3", "--grace", "1")
        self.assertEqual(data["stats_player1"]["losses"], 1, output)
        self.assertEqual(data["players"][0]["loss_reasons"], ["p1 did not join within 3 s"])

    def test_greedySochaPlayerBeatsTheRandomOne(self) -> None:
        """6 games between two real ``socha`` players: the greedy one (player 1) is significantly ahead.

        Six are enough for the test of significance: with ``--seed 1`` (the positions and both players'
        random choices) the greedy one wins 5 of 6, the score's 95 % interval .54 … 1. Each real player costs
        1.6 s of CPU, so twenty games were a minute of the suite's cores, and ten half of one.
        """
        logs = Path(tempfile.mkdtemp())
        output, data = runMatch(
            self, SOCHA_PLAYER + " --greedy", SOCHA_PLAYER, "--games", "6", "--parallel", "2", "--seed", "1", logs=logs
        )
        stats = data["stats_player1"]
        self.assertEqual((data["games_played"], data["void_games"], stats["games"]), (6, [], 6), output)
        self.assertEqual(data["sandbox"], "bubblewrap sandbox")  # real socha players, each game in its sandbox
        self.assertEqual([p["irregular_losses"] for p in data["players"]], [{}, {}], output)  # nobody lost on time
        self.assertGreater(stats["score"], 0.5, output)
        self.assertTrue(stats["significant"], output)
        self.assertIn("p1 is significantly stronger", output)
        self.assertEqual(data["position_pairs"], {"same": 3, "different": 0}, "each position from both sides")
        for entry in data["games"]:  # every log replays: each of its moves and the result the match counted
            game = loadLog(logs / f"game-{entry['game']:04d}.xml")
            self.assertEqual((len(game.moves), len(game.positions)), (entry["moves"], entry["moves"] + 1))
            self.assertIn("wins" if entry["winner"] is not None else "draw", game.result)

    def test_playerThatHangsMidGameLosesOnTimeAndTheMatchGoesOn(self) -> None:
        """A real ``socha`` player that joins, then never answers a move request: the server's hard
        timeout (10 s) ends each game, that player loses on time with the reason, both games are played."""
        hanging = SOCHA_PLAYER + " --think 1000"
        output, data = runMatch(self, hanging, SOCHA_PLAYER, "--games", "2", "--grace", "1", "--game-timeout", "60")
        self.assertEqual((data["games_played"], data["void_games"]), (2, []), output)
        self.assertEqual(data["stats_player1"]["losses"], 2, output)
        first = data["players"][0]
        self.assertEqual(first["irregular_losses"], {"time": 2})
        self.assertEqual(
            first["loss_reasons"], ["p1 hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet."]
        )
        self.assertEqual(data["players"][1]["irregular_losses"], {})

    def test_interruptStopsWithThePartialResult(self) -> None:
        logs = Path(tempfile.mkdtemp())
        command = EXAMPLE + " --seed {seed}"
        child = Child(
            self,
            python("-m", "velhanet.socha.match", command, command, "--games", "50", "--log-dir", str(logs)),
            interruptible=True,
        )
        deadline = time.monotonic() + 60
        while not (logs / "game-0000.xml").exists():  # polling a file another process writes
            child.checkAlive()
            self.assertLess(time.monotonic(), deadline, "no game ended within 60 s")
            time.sleep(0.05)
        child.process.send_signal(signal.SIGINT)
        self.assertEqual(child.wait(60), 0)
        data = json.loads((logs / "summary.json").read_text())
        self.assertTrue(data["interrupted"])
        self.assertGreaterEqual(data["games_played"], 1)
        self.assertLess(data["games_played"], 50)
        self.assertEqual(data["void_games"], [])


class HelpTests(SynchronousTestCase):
    def test_everyOptionShowsItsDefault(self) -> None:
        """What tests/test_help.py checks of every console script, until pyproject names socha-match."""
        self.assertEqual(argparseProblems("socha-match", matchParser()), [])
