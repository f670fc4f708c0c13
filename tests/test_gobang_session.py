"""The Gobang client's session machine alone: recording fakes and a Clock, no FIFO, no server."""

from __future__ import annotations

import random

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.gobang.session import Session, SessionCore, SessionMachine, renderBoard, runCommand
from velhanet.gobang.wire import ClientOp, ServerOp

BLACK, WHITE, KIBITZ = ClientOp.SIGNON_BLACK, ClientOp.SIGNON_WHITE, ClientOp.SIGNON_KIBITZ


class SessionMachineTests(SynchronousTestCase):
    """Every state reached through the inputs, every refusal, every way out, and no timer left behind."""

    def machine(self, role: int = BLACK, bot: random.Random | None = None) -> tuple[Session, SessionCore]:
        self.clock = Clock()
        self.sent: list[tuple[int, int, int]] = []
        self.said: list[str] = []
        self.finished: list[int] = []
        self.answers: list[None] = []
        core = SessionCore(
            role,
            lambda op, x, y: self.sent.append((op, x, y)),
            self.said.append,
            self.finished.append,
            self.clock,
            bot=bot,
            botDelay=0.1,
            onFirstAnswer=lambda: self.answers.append(None),
        )
        return SessionMachine(core), core

    def reach(self, state: str, role: int = BLACK, bot: random.Random | None = None) -> tuple[Session, SessionCore]:
        """A machine driven to ``state`` on a 9x9 board through its inputs; what it said is dropped."""
        machine, core = self.machine(role, bot)
        if state != "signingOn":
            machine.boardSize(9)
            machine.endOfRead()
        if state in ("asked", "resigned"):
            machine.yourMove()
        if state == "resigned":
            machine.resign()
        self.sent.clear()
        self.said.clear()
        return machine, core

    def assertOver(self, machine: Session, finished: list[int]) -> None:
        """Finished once with these codes, no timer left, and nothing after it is heard or said."""
        self.assertEqual(self.finished, finished)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        sent, said = len(self.sent), len(self.said)
        machine.boardSize(9)
        machine.stone(0, 1, 1)
        machine.removed(1, 1)
        machine.yourMove()
        machine.illegal(1, 1)
        machine.result(ServerOp.DRAW)
        machine.unknown("x")
        machine.endOfRead()
        machine.place(1, 1)
        machine.resign()
        machine.mistyped("x")
        machine.signoff()
        self.assertEqual((len(self.sent), len(self.said), self.finished), (sent, said, finished))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_firstAnswerLeavesSigningOn(self) -> None:
        machine, core = self.machine()
        machine.endOfRead()  # an empty read: still no answer
        self.assertEqual((self.answers, self.said), ([], []))
        machine.boardSize(5)
        self.assertEqual(len(self.answers), 1)
        self.assertEqual(
            self.said,
            ["Connection established, board size = 5.", renderBoard(5, {}), "Waiting for your partner to sign on ..."],
        )
        machine.boardSize(9)
        self.assertEqual(len(self.answers), 1)  # told once
        self.assertEqual(self.said[-1], "The server sent the board size again (9); ignored.")

    def test_everyFirstWordIsHandledAsInWaiting(self) -> None:
        for word in (
            lambda m: m.stone(1, 2, 2),
            lambda m: m.removed(2, 2),
            lambda m: m.illegal(2, 2),
            lambda m: m.unknown("opcode 12"),
            lambda m: m.yourMove(),
        ):
            machine, core = self.machine()
            word(machine)
            self.assertEqual(len(self.answers), 1)
            machine.place(3, 3)  # asked only after the request came first
        self.assertEqual(self.sent, [(ClientOp.MOVE, 3, 3)])
        self.assertEqual(self.said[0], "Your move (x y, pass, resign):")  # before the size: gobang's prompt

    def test_firstWordAResult(self) -> None:
        machine, core = self.machine()
        machine.result(ServerOp.ABORTED)
        self.assertEqual(len(self.answers), 1)
        self.assertEqual(
            self.said, ["The game ended unexpectedly (a player left or the server stopped).", "Game over!"]
        )
        self.assertOver(machine, [3])

    def test_notAskedRefusesMoves(self) -> None:
        for state, role, text in (
            ("signingOn", BLACK, "Wait until the server asks for your move."),
            ("waiting", WHITE, "Wait until the server asks for your move."),
            ("resigned", BLACK, "Wait until the server asks for your move."),
            ("waiting", KIBITZ, "You are watching; type 'quit' to leave."),
        ):
            machine, core = self.reach(state, role)
            machine.place(1, 1)
            machine.resign()
            machine.mistyped("Type two numbers")
            self.assertEqual((self.sent, self.said), ([], [text] * 3), state)

    def test_signoffFromEveryLiveState(self) -> None:
        for state in ("signingOn", "waiting", "asked", "resigned"):
            machine, core = self.reach(state, bot=random.Random(1))
            machine.signoff()
            self.assertEqual((self.sent, self.said), ([(ClientOp.SIGNOFF, 0, 0)], ["Signed off."]), state)
            self.assertOver(machine, [3])

    def test_askedAHumanPlays(self) -> None:
        machine, core = self.reach("waiting")
        machine.yourMove()
        self.assertEqual(self.said, ["Your move (x y, pass, resign):"])
        machine.mistyped("That point is taken.")
        self.assertEqual(self.said[-1], "That point is taken.")  # still asked
        machine.place(5, 5)
        self.assertEqual((self.sent, core.lastMove), ([(ClientOp.MOVE, 5, 5)], (5, 5)))
        machine.place(6, 6)
        self.assertEqual(self.said[-1], "Wait until the server asks for your move.")
        machine.stone(0, 5, 5)
        self.assertEqual((self.said[-1], core.lastMove, core.turn), ("Black plays 5 5.", None, 1))

    def test_askedABotPlaysAfterItsDelay(self) -> None:
        machine, core = self.reach("waiting", bot=random.Random(1))
        machine.yourMove()
        [timer] = self.clock.getDelayedCalls()
        self.assertEqual(timer.getTime(), 0.1)
        machine.yourMove()  # a repeated request replaces the pending move
        self.assertEqual(len(self.clock.getDelayedCalls()), 1)
        self.clock.advance(0.1)
        [(op, x, y)] = self.sent
        self.assertEqual(op, ClientOp.MOVE)
        self.assertEqual(core.lastMove, (x, y))
        self.assertEqual(self.clock.getDelayedCalls(), [])
        machine.place(1, 1)  # waiting again
        self.assertEqual(len(self.sent), 1)

    def test_askedAStoneForUsThatWeDidNotPlay(self) -> None:
        machine, core = self.reach("asked", bot=random.Random(1))
        machine.stone(0, 4, 4)
        self.assertEqual(
            self.said[0],
            "The server played 4 4 for us, before we moved: we wait for the next request "
            "(somebody writes words in our name).",
        )
        self.assertEqual(self.clock.getDelayedCalls(), [])  # the bot's move went with ``asked``
        machine.place(1, 1)
        self.assertEqual(self.sent, [])
        machine.stone(1, 5, 5)  # the opponent's stone: no request is answered by it
        self.assertEqual(self.said[-1], "White plays 5 5.")

    def test_waitingStonesForUsThatWeDidNotPlay(self) -> None:
        machine, core = self.reach("waiting")
        machine.stone(0, 4, 4)
        self.assertIn("The server played 4 4 for us, unasked", self.said[-2])
        machine.yourMove()
        machine.place(5, 5)
        machine.stone(0, 6, 6)
        self.assertIn("not our 5 5: our move will be refused as out of turn", self.said[-2])

    def test_illegalMoves(self) -> None:
        machine, core = self.reach("asked")
        machine.illegal(2, 2)
        self.assertIn("refused a move 2 2 that we did not send", self.said[-1])
        machine.place(12, 1)
        machine.illegal(12, 1)
        self.assertEqual(self.said[-1], "Illegal move 12 1: off the board (1 to 9).")
        self.assertIsNone(core.lastMove)
        machine.yourMove()
        machine.place(0, 0)
        machine.illegal(0, 0)
        self.assertEqual(self.said[-1], "Illegal move 0 0: the server refused the pass.")

    def test_kibitzerIsNeverAsked(self) -> None:
        machine, core = self.reach("waiting", KIBITZ)
        machine.yourMove()
        self.assertEqual(self.said, ["The server asks a kibitzer to move; ignored."])
        machine.place(1, 1)
        self.assertEqual((self.sent, self.said[-1]), ([], "You are watching; type 'quit' to leave."))

    def test_requestForTheOtherColourIsReported(self) -> None:
        machine, core = self.reach("waiting", WHITE)
        machine.yourMove()  # black is to move
        self.assertIn("The server asks us to move for black, not white", self.said[0])
        self.assertEqual(self.said[-1], "Your move (x y, pass, resign):")
        machine.yourMove()  # asked again: the same report, the same prompt
        self.assertEqual(len(self.said), 4)

    def test_resignedThenTheResult(self) -> None:
        machine, core = self.reach("asked")
        machine.resign()
        self.assertEqual((self.sent, self.said), ([(ClientOp.RESIGN, 0, 0)], []))
        machine.stone(1, 3, 3)
        machine.result(ServerOp.WHITE_WINS)
        self.assertEqual(self.said[-2:], ["You resigned. White wins.", "Game over!"])
        self.assertOver(machine, [0])

    def test_resignedAskedAgain(self) -> None:
        """The server asks after our resignation (it did not take it): we are asked again."""
        machine, core = self.reach("resigned")
        machine.yourMove()
        machine.place(3, 3)
        self.assertEqual(self.sent, [(ClientOp.MOVE, 3, 3)])

    def test_resultsFromEveryState(self) -> None:
        for state, opcode, code, text in (
            ("waiting", ServerOp.DRAW, 0, "The game is a draw."),
            ("waiting", ServerOp.BLACK_WINS, 0, "White resigned. Black wins."),  # no line on the board
            ("asked", ServerOp.ABORTED, 3, "The game ended unexpectedly (a player left or the server stopped)."),
        ):
            machine, core = self.reach(state, bot=random.Random(1))
            machine.result(opcode)
            self.assertEqual(self.said, [text, "Game over!"], state)
            self.assertOver(machine, [code])

    def test_endOfReadDrawsTheChangedBoardOnce(self) -> None:
        machine, core = self.reach("waiting", KIBITZ)
        machine.stone(0, 1, 1)
        machine.stone(1, 2, 2)
        machine.removed(1, 1)
        machine.endOfRead()
        machine.endOfRead()
        self.assertEqual(self.said, ["Black plays 1 1.", "White plays 2 2.", renderBoard(9, {(2, 2): 1})])

    def test_unknownWordsAreReported(self) -> None:
        machine, core = self.reach("asked")
        machine.unknown("opcode 12 x=0 y=0")
        self.assertEqual(self.said, ["Unknown answer from the server (opcode 12 x=0 y=0); ignored."])

    def test_runCommandChecksBeforeTheMachine(self) -> None:
        machine, core = self.reach("asked")
        for line, said in (
            ("", None),
            ("10 1", "x and y go from 1 to 9."),
            ("a b", "Type two numbers 'x y', or 'pass', or 'resign'."),
        ):
            runCommand(machine, core, line)
            if said is not None:
                self.assertEqual(self.said[-1], said)
        core.stones[(1, 1)] = 1
        runCommand(machine, core, "1 1")
        self.assertEqual(self.said[-1], "That point is taken.")
        runCommand(machine, core, "pass")
        self.assertEqual(self.sent, [(ClientOp.MOVE, 0, 0)])
        runCommand(machine, core, "quit")
        self.assertOver(machine, [3])

    def test_runCommandInTicTacToe(self) -> None:
        machine, core = self.machine()
        machine.boardSize(3)
        machine.yourMove()
        self.assertEqual(self.said[-1], "Your move (x y, resign):")
        runCommand(machine, core, "pass")
        self.assertEqual(self.said[-1], "Passing is not allowed in tic-tac-toe; type 'x y' or 'resign'.")
        runCommand(machine, core, "x")
        self.assertEqual(self.said[-1], "Type two numbers 'x y', or 'resign'.")
        self.assertEqual(self.sent, [])
