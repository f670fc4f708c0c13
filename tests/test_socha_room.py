"""The Software-Challenge room machine alone: recording fakes for its players, observers and game,
a Clock for its timers, and every state's way out driven through the machine's inputs."""

from __future__ import annotations

import random
from xml.etree.ElementTree import Element, fromstring

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.interfaces import IllegalMove
from velhanet.socha.games import GameEnd, PiranhasType, moveData, stateFromMemento
from velhanet.socha.room import HARD_TIMEOUT, PACKET_GAP, Room, RoomCore, Slot, openRoom
from velhanet.socha.wire import render, tag

MOVE = tag("data", {"class": "move"})
BAD_MOVE = tag("data", {"class": "move", "bad": "yes"})


class RecordingClient:
    """A player or observer that records what the room sends it, in one list shared by all."""

    def __init__(self, name: str, events: list[tuple[str, str]]) -> None:
        self.name, self.events = name, events

    def sendPacket(self, packet: Element) -> None:
        data = packet.find("data") if packet.tag == "room" else None
        if data is None:
            self.events.append((self.name, packet.tag))
        elif data.get("class") == "paused":
            self.events.append((self.name, f"paused={data.get('paused')}"))
        elif data.get("class") == "result":
            winner = data.find("winner")
            assert winner is not None
            self.events.append((self.name, f"result {winner.get('team')} {winner.get('reason')}"))
        else:
            self.events.append((self.name, data.get("class", "")))

    def leftRoom(self, roomId: str) -> None:
        self.events.append((self.name, "leftRoom"))


class FakeGame:
    """Any hosted game: ONE and TWO alternate, ``limit`` moves end it with ONE the winner."""

    def __init__(self, limit: int) -> None:
        self.turn, self.limit = 0, limit

    @property
    def toMove(self) -> int | None:
        return None if self.turn >= self.limit else self.turn % 2

    def stateElement(self) -> Element:
        return tag("state", {"turn": self.turn})

    def play(self, data: Element) -> None:
        if data.get("bad"):
            raise IllegalMove("not a move of this game")
        self.turn += 1

    def end(self) -> GameEnd | None:
        return GameEnd(0, "%s hat gewonnen", (5, 3)) if self.turn >= self.limit else None

    def parts(self) -> tuple[int, int]:
        return self.turn, 0


class FakeGameType:
    gameType = "fake"
    fragments = (("Siegpunkte", "SUM"), ("Züge", "SUM"))

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def newGame(self, rng: random.Random) -> FakeGame:
        return FakeGame(self.limit)


class RoomMachineTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.events: list[tuple[str, str]] = []
        self.removed: list[str] = []
        self.one = RecordingClient("one", self.events)
        self.two = RecordingClient("two", self.events)
        self.watcher = RecordingClient("watcher", self.events)

    def open(self, paused: bool = False, limit: int = 3, timeouts: bool = True) -> tuple[Room, RoomCore]:
        core = RoomCore("r", FakeGameType(limit), self.clock, self.removed.append, [self.watcher], timeouts=timeouts)
        return openRoom(core, paused), core

    def join(self, room: Room, core: RoomCore) -> None:
        for slot, client in zip(core.slots, (self.one, self.two), strict=True):
            slot.client = client
            room.playerJoined(slot)

    def taken(self) -> list[tuple[str, str]]:
        events, self.events[:] = list(self.events), []
        return events

    def started(self, **options: object) -> tuple[Room, RoomCore]:
        """Both players in, welcome, memento and ONE's moveRequest out."""
        room, core = self.open(**options)  # type: ignore[arg-type]
        self.join(room, core)
        for _ in range(3):
            self.clock.advance(PACKET_GAP)
        self.taken()
        return room, core

    def assertQuiet(self) -> None:
        """No timer is left behind."""
        self.assertEqual(self.clock.getDelayedCalls(), [])

    # -- waiting, waitingPaused ---------------------------------------------------------

    def test_waitingAnswersAndEmptiesAway(self) -> None:
        room, core = self.open()
        core.slots[0].client = self.one
        room.playerJoined(core.slots[0])
        room.move(self.one, MOVE)
        room.step()
        room.pause()
        room.resume()
        self.assertEqual(
            self.taken(), [("one", "errorpacket"), ("watcher", "paused=true"), ("watcher", "paused=false")]
        )
        room.playerLeft(self.one)
        self.assertEqual(self.removed, ["r"])  # nobody left and no reservation: the room goes
        self.assertQuiet()

    def test_reservedRoomStaysWhenItsPlayerLeaves(self) -> None:
        room, core = self.open()
        core.slots[1].reservation = "code"
        core.slots[0].client = self.one
        room.playerJoined(core.slots[0])
        room.playerLeft(self.one)
        self.assertEqual(self.removed, [])

    def test_cancelWhileWaiting(self) -> None:
        room, core = self.open(paused=True)
        core.slots[0].client = self.one
        room.playerJoined(core.slots[0])
        room.cancel("weg")
        self.assertEqual(self.taken(), [("one", "leftRoom"), ("watcher", "left")])
        self.assertEqual(self.removed, ["r"])
        room.move(self.one, MOVE)  # over: everything is ignored
        self.assertEqual(self.taken(), [])

    # -- greeting, starting, announcing: each packet in a read of its own ------------------

    def test_packetsAGapApartAndTheClockFromTheRequest(self) -> None:
        room, core = self.open()
        self.join(room, core)
        self.assertEqual(self.taken(), [])
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("one", "welcomeMessage"), ("two", "welcomeMessage")])
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("one", "memento"), ("two", "memento"), ("watcher", "memento")])
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("one", "moveRequest")])
        [hard] = self.clock.getDelayedCalls()
        self.assertAlmostEqual(hard.getTime(), 3 * PACKET_GAP + HARD_TIMEOUT)

    def test_leavingBeforeTheWelcomeReopens(self) -> None:
        for paused in (False, True):
            self.removed.clear()
            self.taken()
            room, core = self.open(paused=paused)
            self.join(room, core)
            room.playerLeft(self.two)
            self.assertQuiet()
            self.assertEqual(self.removed, [])
            core.slots[1].client = self.two
            room.playerJoined(core.slots[1])  # full again: the greeting starts over
            for _ in range(3):
                self.clock.advance(PACKET_GAP)
            expected = ["welcomeMessage", "welcomeMessage"] + ([] if paused else ["memento"] * 3 + ["moveRequest"])
            self.assertEqual([what for who, what in self.taken()], expected, paused)
            room.cancel("weg")

    def test_earlyMovesAndCancels(self) -> None:
        room, core = self.open()
        self.join(room, core)
        room.move(self.one, MOVE)  # greeting: not started yet
        self.assertEqual(self.taken(), [("one", "errorpacket")])
        room.cancel("weg")  # greeting: no game, no result
        self.assertEqual(self.taken(), [("one", "leftRoom"), ("two", "leftRoom"), ("watcher", "left")])
        self.assertQuiet()
        for gaps, out in ((1, "starting"), (2, "announcing")):
            room, core = self.open()
            self.join(room, core)
            self.clock.advance(PACKET_GAP)
            if gaps == 2:
                self.clock.advance(PACKET_GAP)
            self.taken()
            room.move(self.two, MOVE)  # unrequested: a violation of TWO
            self.assertIn(
                ("one", "result ONE TWO hat einen Zug gesendet, ohne dazu aufgefordert zu sein"), self.taken()
            )
            self.assertQuiet()
            room, core = self.open()
            self.join(room, core)
            for _ in range(gaps):
                self.clock.advance(PACKET_GAP)
            self.taken()
            room.playerLeft(self.one)
            self.assertEqual(self.taken()[0], ("two", "result TWO ONE hat das Spiel verlassen."), out)
            self.assertQuiet()

    # -- awaitingMove --------------------------------------------------------------------

    def test_inTimeThenSoftTimeout(self) -> None:
        room, core = self.started()
        self.clock.advance(2.0)
        room.move(self.one, MOVE)
        self.assertEqual(self.taken(), [("one", "memento"), ("two", "memento"), ("watcher", "memento")])
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("two", "moveRequest")])
        self.clock.advance(2.0015)
        room.move(self.two, MOVE)
        self.assertIn(
            ("one", "result ONE TWO hat fuer die Antwort auf die Zugaufforderung laenger als 2 Sekunden gebraucht."),
            self.taken(),
        )
        self.assertQuiet()

    def test_hardTimeout(self) -> None:
        room, core = self.started()
        self.clock.advance(HARD_TIMEOUT)
        self.assertEqual(
            self.taken()[0][1], "result TWO ONE hat innerhalb von 2 Sekunden nach Aufforderung keinen Zug gesendet."
        )
        self.assertQuiet()

    def test_noTimeouts(self) -> None:
        room, core = self.started(timeouts=False)
        self.assertQuiet()
        self.clock.advance(100)
        room.move(self.one, MOVE)
        self.assertEqual(self.taken()[0], ("one", "memento"))

    def test_illegalOutOfTurnAndLeaving(self) -> None:
        room, core = self.started()
        room.move(self.one, BAD_MOVE)
        self.assertEqual(
            [what.split()[0] for who, what in self.taken() if who == "two"], ["error", "result", "leftRoom"]
        )
        self.assertQuiet()
        room, core = self.started()
        room.move(self.two, MOVE)
        self.assertIn(("one", "result ONE TWO hat einen Zug gesendet, ohne dazu aufgefordert zu sein"), self.taken())
        room, core = self.started()
        room.playerLeft(self.two)
        self.assertEqual(
            self.taken(),
            [
                ("one", "result ONE TWO hat das Spiel verlassen."),
                ("watcher", "result ONE TWO hat das Spiel verlassen."),
                ("one", "leftRoom"),
                ("watcher", "left"),
            ],
        )
        self.assertQuiet()

    def test_gameEndsByItsRules(self) -> None:
        room, core = self.started(limit=1)
        room.move(self.one, MOVE)
        self.assertEqual(
            self.taken(),
            [
                ("one", "memento"),
                ("two", "memento"),
                ("watcher", "memento"),
                ("one", "result ONE ONE hat gewonnen"),
                ("two", "result ONE ONE hat gewonnen"),
                ("watcher", "result ONE ONE hat gewonnen"),
                ("one", "leftRoom"),
                ("two", "leftRoom"),
                ("watcher", "left"),
            ],
        )
        self.assertEqual(self.removed, ["r"])
        self.assertQuiet()

    # -- paused, pausedBeforeStart: the administrator -------------------------------------

    def test_pauseHoldsAfterTheMoveOnItsWay(self) -> None:
        room, core = self.started(limit=9)
        room.pause()
        room.step()  # a move is already requested: nothing more to allow
        room.move(self.one, MOVE)
        self.clock.advance(60)
        self.assertEqual([what for who, what in self.taken()], ["paused=true", "memento", "memento", "memento"])
        self.assertQuiet()  # paused: no request, no clock
        room.step()
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("two", "moveRequest")])
        room.move(self.two, MOVE)
        self.clock.advance(PACKET_GAP)
        self.assertEqual([what for who, what in self.taken()], ["memento"] * 3)  # paused again after one step
        room.resume()
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken(), [("watcher", "paused=false"), ("one", "moveRequest")])

    def test_resumeBeforeTheMoveCancelsTheHold(self) -> None:
        room, core = self.started(limit=9)
        room.pause()
        room.resume()
        room.move(self.one, MOVE)
        self.clock.advance(PACKET_GAP)
        self.assertEqual(self.taken()[-1], ("two", "moveRequest"))

    def test_pausedRoomWaitsBeforeTheFirstMove(self) -> None:
        room, core = self.open(paused=True)
        self.join(room, core)
        self.clock.advance(10 * PACKET_GAP)
        self.assertEqual([what for who, what in self.taken()], ["welcomeMessage"] * 2)
        self.assertQuiet()
        room.pause()
        room.step()
        self.clock.advance(PACKET_GAP)
        self.clock.advance(PACKET_GAP)
        self.assertEqual([what for who, what in self.taken()], ["paused=true"] + ["memento"] * 3 + ["moveRequest"])

    def test_everyPausedStateEnds(self) -> None:
        """Cancel, a player leaving, and a move nobody asked for, in ``pausedBeforeStart`` and ``paused``."""
        for limit in (0, 9):  # limit 0: paused before the start; 9: paused after ONE's first move
            for end, expected in (
                (lambda room: room.cancel("abgebrochen"), "result None abgebrochen"),
                (lambda room: room.playerLeft(self.one), "result TWO ONE hat das Spiel verlassen."),
                (
                    lambda room: room.move(self.two, MOVE),
                    "result ONE TWO hat einen Zug gesendet, ohne dazu aufgefordert zu sein",
                ),
            ):
                if limit == 0:
                    room, core = self.open(paused=True)
                    self.join(room, core)
                    self.clock.advance(PACKET_GAP)
                else:
                    room, core = self.started(limit=limit)
                    room.pause()
                    room.move(self.one, MOVE)
                self.taken()
                end(room)
                self.assertIn(("watcher", expected), self.taken())
                self.assertEqual(self.removed.pop(), "r")
                self.assertQuiet()

    def test_cancelWhileAMoveIsOnItsWay(self) -> None:
        for gaps in (1, 2, 3):  # starting, announcing, awaitingMove
            room, core = self.open()
            self.join(room, core)
            for _ in range(gaps):
                self.clock.advance(PACKET_GAP)
            self.taken()
            room.cancel("Der Server wird beendet.")
            self.assertEqual(self.taken()[0], ("one", "result None Der Server wird beendet."), gaps)
            self.assertQuiet()


class SlotTests(SynchronousTestCase):
    def test_nameFallsBackToTheTeam(self) -> None:
        self.assertEqual((Slot(0).name(), Slot(1, "bob").name()), ("ONE", "bob"))


class PiranhasXmlTests(SynchronousTestCase):
    """``socha/games.py`` writes and reads the Piranhas XML: each direction gives back what the other wrote."""

    def test_aWrittenStateReadsBackAsTheSamePosition(self) -> None:
        game = PiranhasType().newGame(random.Random(7))
        for _ in range(5):
            game.state = game.state.apply(random.Random(len(game.state.legalMoves())).choice(game.state.legalMoves()))
            written = render(tag("data", {"class": "memento"}, game.stateElement()), 0)
            read = stateFromMemento(fromstring(written))
            self.assertEqual((read.cells, read.turn), (game.state.cells, game.state.turn))

    def test_aWrittenMoveIsReadAsTheSameMove(self) -> None:
        game = PiranhasType().newGame(random.Random(3))
        for move in game.state.legalMoves()[:6]:
            replay = PiranhasType().newGame(random.Random(3))
            replay.play(fromstring(moveData(move)))
            self.assertEqual(replay.state.cells, game.state.apply(move).cells)
            self.assertEqual(replay.state.lastMove, move)
