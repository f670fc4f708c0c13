"""``socha-admin`` and the example player: the admin protocol on a StringTransport, against the
real lobby in memory (iosim), and end to end against ``twistd -n socha-server`` with real players."""

from __future__ import annotations

import io
import queue
import re
import threading
import time
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from xml.etree.ElementTree import Element

from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.test import iosim
from twisted.trial.unittest import SynchronousTestCase

from velhanet.socha.admin import parseArguments
from velhanet.socha.adminprotocol import AdminError, AdminProtocol, Command, RoomReport
from velhanet.socha.games import PiranhasGame
from velhanet.socha.player import BotPlayer
from velhanet.socha.protocol import SochaFactory
from velhanet.socha.wire import XmlStreamReader

from .processes import ROOT, Child, freePort, python, twistd

MOVE = re.compile(r"^move (\d+) by (.+): (\(\d, \d\) [A-Z_]+)$")


def parse(xml: str) -> list[Element]:
    return XmlStreamReader().feed(f"<protocol>{xml}".encode())


class Admin:
    """An L{AdminProtocol} on a StringTransport and a Clock; what it printed, and how it ended."""

    def __init__(self, command: Command, password: str = "pw") -> None:
        self.clock = Clock()
        self.lines: list[str] = []
        self.protocol = AdminProtocol(password, command, self.clock, self.lines.append, timeout=30)
        self.transport = StringTransport()
        self.protocol.makeConnection(self.transport)
        self.outcome: list[object] = []
        self.protocol.done.addBoth(self.outcome.append)

    def written(self) -> list[Element]:
        return XmlStreamReader().feed(self.transport.value())

    def receive(self, xml: str, first: bool = False) -> None:
        self.protocol.dataReceived((("<protocol>" if first else "") + xml).encode())

    def closed(self) -> object:
        """The server sees the close: what ``done`` fired with (None, or a Failure)."""
        self.assertClosing()
        self.protocol.connectionLost(Failure(ConnectionError("closed")))
        [outcome] = self.outcome
        return outcome

    def assertClosing(self) -> None:
        assert self.transport.disconnecting, "the admin did not close the connection"
        assert self.transport.value().endswith(b"<close/>\n")


class AdminProtocolTests(SynchronousTestCase):
    """What the admin writes, and what it makes of each answer, one connection on a StringTransport."""

    def test_prepareWritesPasswordAndSlotsAndPrintsCodes(self) -> None:
        admin = Admin(Command("prepare", names=("alice", "bob"), paused=True, timeouts=False))
        self.assertTrue(admin.transport.value().startswith(b"<protocol>"))
        authenticate, prepare = admin.written()
        self.assertEqual((authenticate.tag, authenticate.attrib), ("authenticate", {"password": "pw"}))
        self.assertEqual(prepare.attrib, {"gameType": "swc_2026_piranhas", "pause": "true"})
        self.assertEqual(
            [slot.attrib for slot in prepare.findall("slot")],
            [{"displayName": name, "canTimeout": "false", "reserved": "true"} for name in ("alice", "bob")],
        )
        admin.receive(
            '<prepared roomId="R1"><reservation>CA</reservation><reservation>CB</reservation></prepared>', True
        )
        self.assertEqual(admin.lines, ["room R1", "reservation for alice (ONE): CA", "reservation for bob (TWO): CB"])
        self.assertIsNone(admin.closed())
        self.assertEqual(admin.clock.getDelayedCalls(), [])

    def test_prepareWithSeed(self) -> None:
        """``prepare --seed 7`` sends velhanet's ``seed`` attribute; without it none is sent (above)."""
        admin = Admin(Command("prepare", names=("alice", "bob"), seed=7))
        _, prepare = admin.written()
        self.assertEqual(prepare.get("seed"), "7")

    def test_wrongPassword(self) -> None:
        admin = Admin(Command("observe", roomId="R1"), password="nope")
        admin.receive(
            '<errorpacket message="wrong password">'
            '<originalRequest class="authenticate" password="nope"/></errorpacket>'
            '<errorpacket message="needs authenticate"><originalRequest class="observe" roomId="R1"/></errorpacket>',
            True,
        )
        outcome = admin.closed()
        assert isinstance(outcome, Failure)
        self.assertEqual(outcome.getErrorMessage(), "authentication failed: wrong password")
        self.assertEqual(admin.lines, [])

    def test_unknownRoomIsTheCommandsError(self) -> None:
        """pause, step and cancel go behind an <observe>: its refusal is reported as theirs."""
        admin = Admin(Command("cancel", roomId="nowhere"))
        self.assertEqual([m.tag for m in admin.written()], ["authenticate", "observe", "cancel"])
        admin.receive(
            '<errorpacket message="no room \'nowhere\'"><originalRequest class="observe"/></errorpacket>', True
        )
        outcome = admin.closed()
        assert isinstance(outcome, Failure)
        outcome.trap(AdminError)
        self.assertEqual(outcome.getErrorMessage(), "cancel refused: no room 'nowhere'")

    def test_noAnswerTimesOut(self) -> None:
        admin = Admin(Command("step", roomId="R1"))
        admin.receive('<observed roomId="R1"/>', True)
        admin.clock.advance(29.9)
        self.assertEqual(admin.outcome, [])
        admin.clock.advance(0.1)
        outcome = admin.closed()
        assert isinstance(outcome, Failure)
        self.assertIn("no move within 30 s", outcome.getErrorMessage())
        self.assertEqual(admin.clock.getDelayedCalls(), [])

    def test_serverClosesFirst(self) -> None:
        admin = Admin(Command("prepare", names=("a", "b")))
        admin.protocol.connectionLost(Failure(ConnectionError("reset")))
        [outcome] = admin.outcome
        assert isinstance(outcome, Failure)
        self.assertEqual(outcome.getErrorMessage(), "the server closed the connection")
        self.assertEqual(admin.clock.getDelayedCalls(), [])

    def test_stepPrintsTheOneMove(self) -> None:
        admin = Admin(Command("step", roomId="R1"))
        admin.receive('<observed roomId="R1"/>', True)
        admin.receive('<room roomId="R1"><data class="memento"><state startTeam="ONE" turn="0"/></data></room>')
        admin.receive('<room roomId="OTHER"><data class="memento"><state turn="5"/></data></room>')
        self.assertEqual(admin.lines, [])
        self.assertFalse(admin.transport.disconnecting)
        admin.receive(
            '<room roomId="R1"><data class="memento"><state startTeam="ONE" turn="1">'
            '<lastMove><from x="0" y="3"/><direction>DOWN_RIGHT</direction></lastMove></state></data></room>'
        )
        self.assertEqual(admin.lines, ["move 1 by ONE: (0, 3) DOWN_RIGHT"])
        self.assertIsNone(admin.closed())

    def test_pauseConfirmed(self) -> None:
        admin = Admin(Command("resume", roomId="R1"))
        [_, _, pause] = admin.written()
        self.assertEqual(pause.attrib, {"roomId": "R1", "pause": "false"})
        admin.receive('<observed roomId="R1"/><room roomId="R1"><data class="paused" paused="false"/></room>', True)
        self.assertEqual(admin.lines, ["room R1 resumed"])
        self.assertIsNone(admin.closed())

    def test_helpShowsEveryDefault(self) -> None:
        for argv in (["--help"], ["prepare", "--help"]):
            out = io.StringIO()
            with redirect_stdout(out), self.assertRaises(SystemExit):
                parseArguments(argv)
            self.assertIn("default", out.getvalue())
        out = io.StringIO()
        with redirect_stdout(out), self.assertRaises(SystemExit):
            parseArguments(["--help"])
        for text in ("default: 127.0.0.1", "default: 13050", "default: 30", "SOCHA_ADMIN_PASSWORD"):
            self.assertIn(text, " ".join(out.getvalue().split()))


class RoomReportTests(SynchronousTestCase):
    def memento(self, xml: str) -> str | None:
        [room] = parse(xml)
        data = room.find("data")
        assert data is not None
        return RoomReport({"ONE": "alice"}).memento(data)

    def test_moves(self) -> None:
        self.assertEqual(self.memento('<room><data class="memento"><state turn="0"/></data></room>'), "the game starts")
        self.assertEqual(
            self.memento(
                '<room><data class="memento"><state startTeam="ONE" turn="4"><lastMove><from x="9" y="1"/>'
                "<direction>UP</direction></lastMove></state></data></room>"
            ),
            "move 4 by TWO: (9, 1) UP",
        )
        self.assertEqual(
            self.memento(
                '<room><data class="memento"><state startTeam="ONE" turn="3"><lastMove><place x="7" y="2"/>'
                "</lastMove></state></data></room>"
            ),
            "move 3 by alice (ONE): place (7, 2)",
        )
        self.assertEqual(
            self.memento('<room><data class="memento"><state startTeam="ONE" turn="2"/></data></room>'),
            "move 2 by TWO: pass",
        )

    def test_results(self) -> None:
        definition = (
            '<definition><fragment name="Siegpunkte"/><fragment name="Schwarmgröße"/></definition><scores>'
            '<entry><player name="alice" team="ONE"/><score><part>{0}</part><part>6</part></score></entry>'
            '<entry><player name="bob" team="TWO"/><score><part>{1}</part><part>4</part></score></entry></scores>'
        )
        cases = [
            (
                ("2", "0"),
                '<winner team="ONE" regular="true" reason="ONE hat den größeren Schwarm"/>',
                "result: alice (ONE) wins: ONE hat den größeren Schwarm",
            ),
            (("1", "1"), '<winner regular="true" reason="Unentschieden"/>', "result: draw: Unentschieden"),
            (("0", "0"), '<winner regular="false" reason="abgebrochen"/>', "result: no winner: abgebrochen"),
            (
                ("0", "2"),
                '<winner team="TWO" regular="false" reason="alice hat\nverloren"/>',
                "result: bob (TWO) wins (irregular end): alice hat verloren",
            ),
        ]
        for points, winner, line in cases:
            [room] = parse(f'<room><data class="result">{definition.format(*points)}{winner}</data></room>')
            data = room.find("data")
            assert data is not None
            self.assertEqual(
                RoomReport().result(data),
                [
                    line,
                    f"  alice (ONE): Siegpunkte {points[0]}, Schwarmgröße 6",
                    f"  bob (TWO): Siegpunkte {points[1]}, Schwarmgröße 4",
                ],
            )


class InMemoryServerTests(SynchronousTestCase):
    """Admins and two velhanet players against the real lobby (a SochaFactory on a Clock), via iosim."""

    def setUp(self) -> None:
        self.clock = Clock()
        self.factory = SochaFactory(self.clock, password="pw")
        self.pumps: list[iosim.IOPump] = []

    def connect(self, client: AdminProtocol | BotPlayer) -> None:
        server = self.factory.buildProtocol(None)
        self.pumps.append(
            iosim.connect(server, iosim.makeFakeServer(server), client, iosim.makeFakeClient(client), clock=self.clock)
        )

    def admin(self, command: Command) -> tuple[AdminProtocol, list[str], list[object]]:
        lines: list[str] = []
        protocol = AdminProtocol("pw", command, self.clock, lines.append)
        outcome: list[object] = []
        protocol.done.addBoth(outcome.append)
        self.connect(protocol)
        return protocol, lines, outcome

    def advance(self, until: Callable[[], object], seconds: float = 60) -> None:
        """Time passes in 10 ms steps, every connection pumped, until ``until()`` is true."""
        for _ in range(round(seconds / 0.01)):
            for pump in self.pumps:
                pump.pump()
            if until():
                return
            self.clock.advance(0.01)
        self.fail("nothing happened")

    def settle(self, outcome: list[object]) -> None:
        """Advance until a ``done`` has fired (``outcome`` holds what it fired with)."""
        self.advance(lambda: outcome)

    def prepare(self, *options: bool) -> tuple[str, list[BotPlayer], list[str], list[object]]:
        paused, observe = options
        _, lines, outcome = self.admin(Command("prepare", names=("alice", "bob"), paused=paused, observe=observe))
        self.advance(lambda: len(lines) >= 3)
        roomId = lines[0].removeprefix("room ")
        players = [BotPlayer(seed, line.rsplit(" ", 1)[1]) for seed, line in enumerate(lines[1:3])]
        for player in players:
            self.connect(player)
        return roomId, players, lines, outcome

    def checkClean(self) -> None:
        for pump in self.pumps:
            pump.pump()
        self.assertEqual(self.factory.lobby.rooms, {})
        self.assertEqual(self.factory.connections, set())
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_observedGame(self) -> None:
        roomId, players, lines, outcome = self.prepare(False, True)
        core = self.factory.lobby.rooms[roomId].core
        self.advance(lambda: core.game is not None)
        game = core.game  # the server's own game, which outlives the room: what the moves really were
        assert isinstance(game, PiranhasGame)
        self.settle(outcome)
        self.assertEqual(outcome, [None])
        self.assertEqual(
            lines[3:7],
            [f"observing room {roomId}", "a player joined (1 of 2)", "a player joined (2 of 2)", "the game starts"],
        )
        state = game.state
        assert players[0].result is not None
        moves = [MOVE.match(line) for line in lines[7 : 7 + state.turn]]
        self.assertEqual([int(m[1]) for m in moves if m], list(range(1, state.turn + 1)))
        self.assertEqual([m[2] for m in moves if m][:2], ["alice (ONE)", "bob (TWO)"])
        self.assertEqual(
            lines[6 + state.turn],
            f"move {state.turn} by {('alice (ONE)', 'bob (TWO)')[1 - state.turn % 2]}: {state.lastMove}",
        )
        winner = players[0].result.find("winner")
        assert winner is not None
        expected = {"ONE": "alice (ONE) wins", "TWO": "bob (TWO) wins", None: "draw"}[winner.get("team")]
        self.assertEqual(lines[7 + state.turn], f"result: {expected}: {winner.get('reason')}")
        self.assertEqual(lines[-1], f"room {roomId} is over")
        self.assertEqual(len(lines), 7 + state.turn + 4)
        self.checkClean()

    def test_stepPauseResumeCancel(self) -> None:
        roomId, players, lines, outcome = self.prepare(True, False)
        self.settle(outcome)
        self.advance(lambda: all(player.team for player in players))  # both welcomed: the room holds
        for turn in (1, 2):
            _, stepped, done = self.admin(Command("step", roomId=roomId))
            self.settle(done)
            self.assertEqual(done, [None])
            game = self.factory.lobby.rooms[roomId].core.game
            assert isinstance(game, PiranhasGame)
            state = game.state
            self.assertEqual(state.turn, turn)
            self.assertEqual(stepped, [f"move {turn} by {('ONE', 'TWO')[turn - 1]}: {state.lastMove}"])
        for command, said in (("pause", "paused"), ("resume", "resumed"), ("pause", "paused")):
            _, confirmed, done = self.admin(Command(command, roomId=roomId))
            self.settle(done)
            self.assertEqual((done, confirmed), ([None], [f"room {roomId} {said}"]))
        _, cancelled, done = self.admin(Command("cancel", roomId=roomId))
        self.settle(done)
        self.assertEqual(done, [None])
        self.assertEqual(cancelled[0], "result: no winner: Das Spiel wurde vom Administrator abgebrochen.")
        self.assertEqual(cancelled[-1], f"room {roomId} cancelled")
        self.assertTrue(all(player.left for player in players))
        _, _, done = self.admin(Command("step", roomId=roomId))
        self.settle(done)
        [failure] = done
        assert isinstance(failure, Failure)
        self.assertEqual(failure.getErrorMessage(), f"step refused: no room '{roomId}'")
        self.checkClean()


# -- real processes ----------------------------------------------------------------------


class Lines:
    """A child's output, line by line, read by a thread so that a test can wait for a line with a deadline."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.queue: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while line := self.child.readLine():
                self.queue.put(line.rstrip("\n"))
        except (ValueError, OSError):  # the test's cleanup closed the pipe
            pass
        self.queue.put("\0")

    def next(self, seconds: float = 30) -> str:
        """The next line; fails at the end of the output or after ``seconds``."""
        try:
            line = self.queue.get(timeout=seconds)
        except queue.Empty:
            raise AssertionError(f"no line within {seconds} s after {self.seen}") from None
        if line == "\0":
            self.queue.put(line)
            raise AssertionError(f"the output ended after {self.seen}")
        self.seen.append(line)
        return line

    def rest(self, seconds: float = 90) -> list[str]:
        """Every line until the output ends."""
        deadline, lines = time.monotonic() + seconds, list[str]()
        while True:
            try:
                line = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the output did not end within {seconds} s: {self.seen + lines}") from None
            if line == "\0":
                self.queue.put(line)
                self.seen += lines
                return lines
            lines.append(line)


class EndToEndTests(SynchronousTestCase):
    """``socha-admin`` against ``twistd -n socha-server``, with real players joining with its codes."""

    def setUp(self) -> None:
        self.port = freePort()
        self.directory = Path(self.mktemp()).resolve()  # children run in the repository, not in _trial_temp
        self.directory.mkdir()
        log = (self.directory / "server.out").open("w")
        self.addCleanup(log.close)
        address = f"tcp:{self.port}:interface=127.0.0.1"
        command = twistd("socha-server", "--listen", address, "--password", "pw", log=self.directory / "server.log")
        self.server = Child(self, command, output=log)
        self.server.waitForPort(self.port)

    def admin(self, *arguments: str, password: str = "pw") -> tuple[Child, Lines]:
        child = Child(
            self, python("-m", "velhanet.socha.admin", "--port", str(self.port), "--password", password, *arguments)
        )
        return child, Lines(child)

    def finished(self, child: Child, lines: Lines, status: int = 0) -> list[str]:
        """The rest of what an admin printed, once it exited with ``status``."""
        rest = lines.rest()
        self.assertEqual(child.wait(10), status, lines.seen)
        return rest

    def examplePlayer(self, code: str, seed: int) -> Child:
        return Child(
            self,
            python(
                "-m", "velhanet.socha.example", "--port", str(self.port), "--reservation", code, "--seed", str(seed)
            ),
        )

    def output(self, player: Child) -> str:
        self.assertEqual(player.wait(60), 0)
        assert player.process.stdout is not None
        return player.process.stdout.read()

    def prepared(self, lines: Lines, names: tuple[str, str] = ("alice", "bob")) -> tuple[str, str, str]:
        """The room id and the two reservation codes ``prepare`` printed, each on its labelled line."""
        room = lines.next()
        self.assertRegex(room, r"^room [0-9a-f-]{36}$")
        one, two = lines.next(), lines.next()
        self.assertRegex(one, rf"^reservation for {names[0]} \(ONE\): [0-9a-f-]{{36}}$")
        self.assertRegex(two, rf"^reservation for {names[1]} \(TWO\): [0-9a-f-]{{36}}$")
        return room.removeprefix("room "), one.rsplit(" ", 1)[1], two.rsplit(" ", 1)[1]

    def test_preparedGameObservedToTheEnd(self) -> None:
        """prepare --observe; velhanet's example player and a real ``socha`` player join with the codes."""
        admin, lines = self.admin("prepare", "--name", "alice", "--name", "bob", "--observe")
        room, codeAlice, codeBob = self.prepared(lines)
        self.assertEqual(lines.next(), f"observing room {room}")
        alice = self.examplePlayer(codeAlice, 3)
        bob = Child(
            self, python(str(ROOT / "tests" / "socha_player.py"), str(self.port), "5", "--reservation", codeBob)
        )
        rest = self.finished(admin, lines)
        self.assertEqual(rest[:3], ["a player joined (1 of 2)", "a player joined (2 of 2)", "the game starts"])
        moves = [MOVE.match(line) for line in rest[3:-4]]
        self.assertTrue(all(moves), rest)
        self.assertEqual([int(m[1]) for m in moves if m], list(range(1, len(moves) + 1)))
        movers = [m[2] for m in moves if m]
        self.assertEqual(movers, (["alice (ONE)", "bob (TWO)"] * len(movers))[: len(movers)])
        self.assertEqual(rest[-1], f"room {room} is over")
        self.assertRegex(rest[-3], r"^  alice \(ONE\): Siegpunkte [012], Schwarmgröße \d+$")
        self.assertRegex(rest[-2], r"^  bob \(TWO\): Siegpunkte [012], Schwarmgröße \d+$")
        verdict = re.match(r"^result: (?:(alice \(ONE\)|bob \(TWO\)) wins|draw): (.+)$", rest[-4])
        assert verdict is not None, rest[-4]
        winner = {"alice (ONE)": "ONE", "bob (TWO)": "TWO", None: "None"}[verdict[1]]
        aliceSaid, bobSaid = self.output(alice), self.output(bob)
        self.assertIn(f"RESULT {winner} True {verdict[2]}", bobSaid)
        expected = {"ONE": "won", "TWO": "lost", "None": "a draw"}[winner]
        self.assertIn(f"game over: {expected} ({verdict[2]})", aliceSaid)

    def test_stepPauseCancelAndErrors(self) -> None:
        admin, lines = self.admin("prepare", "--paused", "--name", "alice", "--name", "bob")
        room, codeAlice, codeBob = self.prepared(lines)
        self.assertEqual(self.finished(admin, lines), [])
        observer, watched = self.admin("observe", room)
        self.assertEqual(watched.next(), f"observing room {room}")
        players = [self.examplePlayer(code, seed) for seed, code in enumerate((codeAlice, codeBob))]
        self.assertEqual([watched.next(), watched.next()], ["a player joined (1 of 2)", "a player joined (2 of 2)"])

        for turn, team in ((1, "ONE"), (2, "TWO")):
            step, stepped = self.admin("step", room)
            [line] = self.finished(step, stepped)
            self.assertRegex(line, rf"^move {turn} by {team}: \(\d, \d\) [A-Z_]+$")
            if turn == 1:
                self.assertEqual(watched.next(), "the game starts")
            self.assertEqual(watched.next(), line)

        pause, paused = self.admin("pause", room)
        self.assertEqual(self.finished(pause, paused), [f"room {room} paused"])
        self.assertEqual(watched.next(), "paused")  # not "move 3": the room held after the step

        cancel, cancelled = self.admin("cancel", room)
        result = "result: no winner: Das Spiel wurde vom Administrator abgebrochen."
        said = self.finished(cancel, cancelled)
        self.assertEqual([said[0], said[-1], len(said)], [result, f"room {room} cancelled", 4])
        self.assertEqual(self.finished(observer, watched), [*said[:3], f"room {room} is over"])
        for player in players:
            self.assertIn("game over: no winner (Das Spiel wurde vom Administrator abgebrochen.)", self.output(player))

        wrong, refused = self.admin("observe", room, password="wrong")
        self.assertEqual(self.finished(wrong, refused, 1), ["socha-admin: authentication failed: wrong password"])
        gone, refused = self.admin("cancel", room)
        self.assertEqual(self.finished(gone, refused, 1), [f"socha-admin: cancel refused: no room '{room}'"])
        nobody = freePort()
        unreachable = Child(
            self, python("-m", "velhanet.socha.admin", "--port", str(nobody), "--password", "pw", "observe", room)
        )
        [line] = self.finished(unreachable, Lines(unreachable), 1)
        self.assertTrue(line.startswith(f"socha-admin: cannot reach the server at 127.0.0.1:{nobody}: "), line)
        self.server.checkAlive()

    def test_headlessPlayerNeverMoves(self) -> None:
        """docs/socha.md's warning: a ``socha`` player with ``headless=True`` (``--headless``) hands every
        room message to ``on_room_message`` and never calls ``calculate_move``; it loses on the hard timeout."""
        admin, lines = self.admin("prepare", "--name", "headless", "--name", "example")
        _, codeOne, codeTwo = self.prepared(lines, ("headless", "example"))
        self.finished(admin, lines)
        script = (
            "import sys\n"
            "from socha.api.networking.game_client import GameClient, IClientHandler\n"
            "class Logic(IClientHandler):\n"
            "    def calculate_move(self): print('CALCULATE_MOVE', flush=True)\n"
            "    def on_update(self, state): print('ON_UPDATE', flush=True)\n"
            "    def on_game_over(self, result): print('ON_GAME_OVER', flush=True)\n"
            "    def on_room_message(self, message):\n"
            "        print('ON_ROOM_MESSAGE', type(message.data.class_binding).__name__, flush=True)\n"
            "client = GameClient('127.0.0.1', int(sys.argv[1]), Logic(), sys.argv[2], None, None, False, False, True)\n"
            "client.join()\n"
            "client.start()\n"
        )
        headless = Child(self, python("-c", script, str(self.port), codeOne))
        example = self.examplePlayer(codeTwo, 1)
        said = self.output(headless)
        self.assertEqual(
            [line for line in said.splitlines() if line.startswith(("ON_", "CALCULATE"))],
            [f"ON_ROOM_MESSAGE {kind}" for kind in ("WelcomeMessage", "State", "MoveRequest", "Result")],
        )
        self.assertIn(
            "game over: won (headless hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet.)",
            self.output(example),
        )
