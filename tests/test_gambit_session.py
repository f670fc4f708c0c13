"""The Gambit client's session machine alone: recording fakes and a Clock, no connection, no server."""

from __future__ import annotations

import random

import chess
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet.gambit.engine import EngineFailure
from velhanet.gambit.movesource import Bot
from velhanet.gambit.screen import runCommand
from velhanet.gambit.session import (
    DRAW_ACK,
    END_GRACE,
    ERROR_GRACE,
    JOIN_TIMEOUT,
    RESIGN_GRACE,
    Session,
    SessionCore,
    SessionMachine,
)
from velhanet.gambit.wire import Cmd, Message


class Screen:
    """What the machine sent, said and finished with, taken in turns."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.said: list[str] = []
        self.finished: list[int] = []

    def taken(self) -> tuple[list[Message], list[str], list[int]]:
        taken = (self.sent, self.said, self.finished)
        self.sent, self.said, self.finished = [], [], []
        return taken

    def saidText(self) -> str:
        return "\n".join(self.said)


class Thinker:
    """A move source that answers when the test says (an engine's answer, or its failure)."""

    def __init__(self) -> None:
        self.asked: list[tuple[chess.Board, Deferred[chess.Move]]] = []
        self.cancelled = 0

    def choose(self, board: chess.Board) -> Deferred[chess.Move]:
        def cancel(_: Deferred[chess.Move]) -> None:
            self.cancelled += 1

        answer: Deferred[chess.Move] = Deferred(cancel)
        self.asked.append((board, answer))
        return answer


class SessionMachineTests(SynchronousTestCase):
    """Every state reached through the inputs, every refusal, every way out, and no timer left behind."""

    def machine(self, gameId: str | None = None, bot: Bot | None = None) -> tuple[Session, SessionCore]:
        self.clock, self.screen = Clock(), Screen()
        screen = self.screen
        core = SessionCore(
            "alice" if gameId is None else "bob",
            gameId,
            send=lambda message: screen.sent.append(message),
            say=lambda text: screen.said.append(text),
            finish=lambda code: screen.finished.append(code),
            clock=self.clock,
            bot=bot,
            botDelay=0.1,
        )
        return SessionMachine(core), core

    def reach(self, state: str, bot: Bot | None = None) -> tuple[Session, SessionCore]:
        """A machine driven to ``state`` through its inputs; what it said on the way is dropped."""
        joins = state in ("joining", "refused", "black", "ending", "resigned")
        machine, core = self.machine("e215" if joins else None, bot)
        if state != "connecting":
            machine.join() if joins else machine.create()
        if state in ("waiting", "playing"):
            machine.ok("e215")
        if state == "playing":
            machine.ok("bob")
        if state == "refused":
            machine.error("same name")
        if state in ("black", "ending", "resigned"):
            machine.ok("alice")
        if state == "ending":  # fool's mate, delivered by us as Black
            for theirs, ours in (("f2f3", "e5"), ("g2g4", "Qh4")):
                machine.opponentMoved(theirs)
                machine.play(ours)
        if state == "resigned":
            machine.resign()
        self.screen.taken()
        return machine, core

    def assertOver(self, machine: Session, finished: list[int]) -> None:
        """Finished once with these codes, no timer left, and nothing after it changes anything."""
        self.assertEqual(self.screen.finished, finished)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        self.assertEqual(machine.phase(), "over")
        self.screen.taken()
        for late in (
            lambda: machine.ok("x"),
            lambda: machine.error("x"),
            lambda: machine.opponentMoved("e7e5"),
            machine.drawOffered,
            lambda: machine.ended("x"),
            machine.resign,
            machine.quit,
            machine.scripted,
            lambda: machine.connectionLost("gone"),
        ):
            late()
        self.assertEqual(self.screen.taken(), ([], [], []))
        machine.play("e4")
        machine.offerDraw()
        self.assertEqual(self.screen.taken(), ([], ["The game is over.", "No game is running."], []))

    def test_everyStateAnswersItsPhase(self) -> None:
        phases = {
            "connecting": "connecting",
            "creating": "creating",
            "waiting": "waiting",
            "joining": "joining",
            "refused": "joining",
            "playing": "playing",
            "black": "playing",
            "ending": "over",
            "resigned": "over",
        }
        for state, phase in phases.items():
            machine, core = self.reach(state)
            self.assertEqual(machine.phase(), phase, state)

    def test_connectingCreates(self) -> None:
        machine, core = self.machine()
        machine.create()
        self.assertEqual(self.screen.taken(), ([Message(Cmd.CREATE, "alice", "")], [], []))
        self.assertEqual((machine.phase(), core.colour), ("creating", chess.WHITE))
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_connectingJoinsAndArmsTheJoinTimeout(self) -> None:
        machine, core = self.machine("e215")
        machine.join()
        self.assertEqual(
            self.screen.taken(), ([Message(Cmd.JOIN, "bob", "e215")], ["Joining game e215 as bob ..."], [])
        )
        self.assertEqual(core.colour, chess.BLACK)
        [timer] = self.clock.getDelayedCalls()
        self.assertEqual(timer.getTime(), JOIN_TIMEOUT)

    def test_beforeTheGameRefusals(self) -> None:
        for state in ("connecting", "creating", "waiting", "joining", "refused"):
            machine, core = self.reach(state)
            machine.play("e4")
            machine.offerDraw()
            machine.opponentMoved("e2e4")
            machine.drawOffered()
            machine.resign()
            machine.scripted()
            self.assertEqual(
                self.screen.taken(),
                (
                    [],
                    [
                        "The game has not started.",
                        "No game is running.",
                        "Ignored a move from the server out of turn: 'e2e4'",
                    ],
                    [],
                ),
                state,
            )
            self.assertEqual(core.board.move_stack, [], state)

    def test_beforeTheGameServerErrorsAreShown(self) -> None:
        for state in ("connecting", "waiting", "refused"):
            machine, core = self.reach(state)
            machine.error("what?")
            self.assertEqual(self.screen.taken(), ([], ["Server: what?"], []), state)

    def test_creatingOkWaitsWithAHint(self) -> None:
        machine, core = self.reach("creating")
        core.serverOptions = " --port 4000"
        machine.ok("e215")
        self.assertEqual(machine.phase(), "waiting")
        self.assertEqual(core.gameId, "e215")
        self.assertIn("gambit-client --user NAME --game e215 --port 4000", self.screen.saidText())

    def test_creatingRefused(self) -> None:
        machine, core = self.reach("creating")
        machine.error("name is required")
        self.assertEqual(self.screen.said, ["The server refused: name is required"])
        self.assertOver(machine, [1])

    def test_waitingOkStartsTheGameAsWhite(self) -> None:
        machine, core = self.reach("waiting")
        machine.ok("bob")
        sent, said, finished = self.screen.taken()
        self.assertEqual(machine.phase(), "playing")
        self.assertEqual((core.colour, core.opponent), (chess.WHITE, "bob"))
        self.assertEqual(said[0], "bob joined your game e215. You play White. Type 'help' for commands.")
        self.assertEqual(said[-1], "Your move:")  # the queued prompt, run in ``playing``
        self.assertEqual((sent, finished), ([], []))

    def test_joiningOkStartsTheGameAsBlack(self) -> None:
        machine, core = self.reach("joining")
        machine.ok("alice")
        self.assertEqual(self.screen.said[0], "You joined alice's game e215. You play Black. Type 'help' for commands.")
        self.assertNotIn("Your move:", self.screen.said)  # White moves first
        self.assertEqual(self.clock.getDelayedCalls(), [])  # the JOIN timeout went with ``joining``

    def test_joiningTimesOut(self) -> None:
        machine, core = self.reach("joining")
        self.clock.advance(JOIN_TIMEOUT)
        self.assertEqual(self.screen.said, ["No answer to JOIN e215 within 10 s: is the id right?"])
        self.assertOver(machine, [1])

    def test_joiningErrorWaitsForAnOk(self) -> None:
        machine, core = self.reach("joining")
        machine.error("same name")
        self.assertEqual((machine.phase(), self.screen.taken()), ("joining", ([], [], [])))
        [grace] = self.clock.getDelayedCalls()  # the JOIN timeout is replaced by the grace
        self.assertEqual(grace.getTime(), ERROR_GRACE)
        machine.ok("bob")
        self.assertEqual(
            self.screen.said[0], "Server: same name (and it joined us anyway, as the original Gambit server does)"
        )
        self.assertEqual(machine.phase(), "playing")
        self.assertEqual(self.clock.getDelayedCalls(), [])

    def test_refusalBecomesFinal(self) -> None:
        machine, core = self.reach("refused")
        self.clock.advance(ERROR_GRACE)
        self.assertEqual(self.screen.said, ["The server refused: same name"])
        self.assertOver(machine, [1])

    def test_endsBeforeTheGame(self) -> None:
        """END, quit and a closed connection end every state before the game, cancelling its timer."""
        for state in ("connecting", "creating", "waiting", "joining", "refused"):
            machine, core = self.reach(state)
            machine.ended("")
            self.assertEqual(self.screen.said, ["GAME OVER: the game has ended"], state)
            self.assertOver(machine, [0])
            machine, core = self.reach(state)
            machine.quit()
            self.assertEqual(self.screen.said, ["Leaving the game."], state)
            self.assertOver(machine, [0])
            machine, core = self.reach(state)
            machine.connectionLost("refused")
            self.assertEqual(self.screen.said, ["Connection to the server closed: refused"], state)
            self.assertOver(machine, [1])

    def test_playingMovesBothWays(self) -> None:
        machine, core = self.reach("playing")
        machine.opponentMoved("e7e5")
        self.assertEqual(self.screen.taken(), ([], ["Ignored a move from the server out of turn: 'e7e5'"], []))
        machine.play("e5")
        self.assertEqual(self.screen.said[0], "Illegal: e5 is not legal in this position")
        self.assertEqual(self.screen.said[-1], "Your move:")
        self.screen.taken()
        machine.play("Nf3")
        sent, said, _ = self.screen.taken()
        self.assertEqual(sent, [Message(Cmd.MOVE, "alice", "e215:g1f3")])
        self.assertEqual(said[0], "You played 1. Nf3")
        machine.play("e4")
        self.assertEqual(self.screen.taken(), ([], ["Not your turn."], []))
        machine.opponentMoved("garbage")
        self.assertIn("Ignored an unreadable move from bob", self.screen.taken()[1][0])
        machine.opponentMoved("e215:e7e5")
        said = self.screen.taken()[1]
        self.assertEqual((said[0], said[-1]), ("bob played 1... e5", "Your move:"))
        self.assertEqual(core.board.peek(), chess.Move.from_uci("e7e5"))

    def test_playingRefusedMoveIsTakenBack(self) -> None:
        machine, core = self.reach("playing")
        machine.play("e4")
        self.screen.taken()
        machine.error("not your turn")
        self.assertEqual(self.screen.said[:2], ["Server: not your turn", "Your move was not played."])
        self.assertEqual((self.screen.said[-1], core.board.move_stack), ("Your move:", []))
        self.screen.taken()
        machine.error("something else")  # nothing of ours to take back
        self.assertEqual(self.screen.taken(), ([], ["Server: something else"], []))

    def test_playingOurDrawOfferConfirmedOrNot(self) -> None:
        machine, core = self.reach("playing")
        machine.offerDraw()
        self.assertEqual(self.screen.sent, [Message(Cmd.DRAW, "alice", "")])
        self.assertEqual(self.screen.said, ["Draw offered to bob; it stands until bob moves."])
        [ack] = self.clock.getDelayedCalls()
        self.assertEqual(ack.getTime(), DRAW_ACK)
        self.screen.taken()
        machine.ok("draw offered to bob")
        self.assertEqual(self.screen.said[0], "Server: draw offered to bob.")
        self.assertIn("original Gambit client", self.screen.said[1])
        self.assertEqual(self.clock.getDelayedCalls(), [])
        machine.ok("again")  # no offer waits for a confirmation: nothing to say
        machine.play("e4")
        self.screen.taken()
        machine.opponentMoved("e5")
        self.assertIn("bob played on: your draw offer is declined.", self.screen.taken()[1])
        machine.offerDraw()
        self.screen.taken()
        self.clock.advance(DRAW_ACK)
        self.assertEqual(self.screen.said, [self.screen.said[0]])
        self.assertIn("did not confirm the draw offer", self.screen.said[0])

    def test_playingTheirDrawOffer(self) -> None:
        machine, core = self.reach("playing")
        machine.drawOffered()
        self.assertEqual(self.screen.taken()[1], ["bob offers a draw: type 'draw' to accept, or move to decline."])
        machine.play("e4")
        self.assertIn("You played on: bob's draw offer is declined.", self.screen.taken()[1])
        machine.drawOffered()
        machine.offerDraw()
        sent, said, _ = self.screen.taken()
        self.assertEqual((sent, said[-1]), ([Message(Cmd.DRAW, "alice", "")], "Draw accepted."))
        self.assertEqual(self.clock.getDelayedCalls(), [])  # the server's END ends it

    def test_playingBotMovesAfterItsDelay(self) -> None:
        machine, core = self.reach("playing", bot=random.Random(0))
        [timer] = self.clock.getDelayedCalls()
        self.assertEqual(timer.getTime(), 0.1)
        self.clock.advance(0.1)
        [move] = self.screen.sent
        self.assertEqual(move.cmd, Cmd.MOVE)
        self.assertEqual(self.clock.getDelayedCalls(), [])
        machine.opponentMoved("e7e5")
        machine.quit()  # leaving cancels the bot's pending move
        self.assertOver(machine, [0])

    def test_playingEngineMovesWhenItAnswers(self) -> None:
        thinker = Thinker()
        machine, core = self.reach("playing", bot=thinker)
        self.clock.advance(0.1)
        [(board, answer)] = thinker.asked
        self.assertIsNot(board, core.board)  # the source has a copy of its own
        self.assertEqual(self.screen.sent, [])
        machine._prompt()  # a repeated prompt while it thinks asks nothing more
        self.clock.advance(0.1)
        self.assertEqual(len(thinker.asked), 1)
        answer.callback(chess.Move.from_uci("g1f3"))
        self.assertEqual(self.screen.sent, [Message(Cmd.MOVE, "alice", "e215:g1f3")])
        machine.opponentMoved("d7d5")
        self.clock.advance(0.1)
        self.assertEqual(len(thinker.asked), 2)
        machine.quit()  # leaving cancels the question: its late answer changes nothing
        self.assertEqual(thinker.cancelled, 1)
        self.assertOver(machine, [0])

    def test_playingEngineFailureResignsSayingWhy(self) -> None:
        thinker = Thinker()
        machine, core = self.reach("playing", bot=thinker)
        self.clock.advance(0.1)
        thinker.asked[0][1].errback(EngineFailure("the engine stockfish crashed (exit 1)"))
        sent, said, _ = self.screen.taken()
        self.assertEqual(sent, [Message(Cmd.END, "alice", "alice resigns: bob wins")])
        self.assertEqual(said, ["the engine stockfish crashed (exit 1): resigning", "You resigned."])
        self.assertEqual(machine.phase(), "over")
        self.clock.advance(RESIGN_GRACE)
        self.assertOver(machine, [0])

    def test_playingEngineCancelledByTheEndSaysNothing(self) -> None:
        thinker = Thinker()
        machine, core = self.reach("playing", bot=thinker)
        self.clock.advance(0.1)
        machine.ended("bob resigns: alice wins")
        self.assertEqual(thinker.cancelled, 1)
        answer = thinker.asked[0][1]
        self.assertTrue(answer.called)
        self.assertEqual(self.screen.said, ["GAME OVER: bob resigns: alice wins"])
        self.assertOver(machine, [0])

    def test_playingScriptedLinesWaitForOurTurn(self) -> None:
        machine, core = self.reach("waiting")
        core.script = ["help", "e4"]
        machine.scripted()  # not in a game yet: kept
        machine.ok("bob")
        self.assertIn("moves: SAN", self.screen.saidText())  # 'help' is no move: the script waits
        self.assertEqual(self.screen.sent, [])
        machine.scripted()
        self.assertEqual(self.screen.sent, [Message(Cmd.MOVE, "alice", "e215:e2e4")])
        core.scriptEnded = True
        machine.opponentMoved("e5")
        self.assertIn("Standard input has ended and it is your move: leaving the game.", self.screen.said)
        self.assertEqual(self.screen.said[-1], "Leaving the game.")
        self.assertOver(machine, [0])

    def test_playingCommandsThroughRunCommand(self) -> None:
        machine, core = self.reach("playing")
        runCommand(machine, core, "  ")
        runCommand(machine, core, "board")
        [board] = self.screen.taken()[1]
        self.assertTrue(board.endswith("a b c d e f g h"), board)
        runCommand(machine, core, "draw")
        self.assertEqual(self.screen.taken()[0], [Message(Cmd.DRAW, "alice", "")])
        runCommand(machine, core, "exit")
        self.assertOver(machine, [0])

    def test_playingEndFromTheServer(self) -> None:
        machine, core = self.reach("playing")
        machine.offerDraw()
        machine.ended("draw by agreement (1/2-1/2)")
        self.assertEqual(self.screen.said[-1], "GAME OVER: draw by agreement (1/2-1/2)")
        self.assertOver(machine, [0])

    def test_playingConnectionLostIsANormalEnd(self) -> None:
        machine, core = self.reach("playing", bot=random.Random(0))
        machine.connectionLost("closed")
        self.assertEqual(self.screen.said, ["Connection to the server closed: closed"])
        self.assertOver(machine, [0])

    def test_decidedBoardWaitsForTheServersEnd(self) -> None:
        machine, core = self.reach("ending")
        self.assertTrue(core.board.is_checkmate())
        [grace] = self.clock.getDelayedCalls()
        self.assertEqual(grace.getTime(), END_GRACE)
        machine.play("e4")
        machine.opponentMoved("e2e4")
        machine.error("late")
        machine.quit()  # the game has ended already (standard input closing after it)
        machine.connectionLost("closed")
        self.assertEqual(
            self.screen.taken(),
            ([], ["The game is over.", "Ignored a move from the server out of turn: 'e2e4'", "Server: late"], []),
        )
        machine.ended("alice ha abandonado la partida")
        self.assertEqual(
            self.screen.said,
            [
                "The game: 1. f3 e5 2. g4 Qh4# 0-1",
                "GAME OVER: Black wins by checkmate (the server says: alice ha abandonado la partida)",
            ],
        )
        self.assertOver(machine, [0])

    def test_decidedBoardEndsWithoutTheServer(self) -> None:
        machine, core = self.reach("ending")
        self.clock.advance(END_GRACE)
        self.assertEqual(
            self.screen.said,
            [
                "The game: 1. f3 e5 2. g4 Qh4# 0-1",
                "GAME OVER: Black wins by checkmate (the server sent no END; the original Gambit server does not)",
            ],
        )
        self.assertOver(machine, [0])

    def test_matedSideTellsTheServer(self) -> None:
        """The original server does not see mate: the mated client sends END, as the original client does."""
        machine, core = self.reach("playing")
        for ours, theirs in (("f3", "e7e5"), ("g4", "d8h4")):
            machine.play(ours)
            machine.opponentMoved(theirs)
        self.assertEqual(self.screen.sent[-1], Message(Cmd.END, "alice", ""))
        self.assertIn("Checkmate: you lost.", self.screen.said)
        self.assertEqual(machine.phase(), "over")
        self.clock.advance(END_GRACE)
        self.assertIn("GAME OVER: checkmate, you lost (the server sent no END", self.screen.said[-1])
        self.assertOver(machine, [0])

    def test_resignedLeavesAfterItsGrace(self) -> None:
        machine, core = self.reach("black")
        machine.resign()
        self.assertEqual(self.screen.sent, [Message(Cmd.END, "bob", "bob resigns: alice wins")])
        self.assertEqual(self.screen.said, ["You resigned."])
        self.assertEqual(self.screen.finished, [])
        self.clock.advance(RESIGN_GRACE)
        self.assertOver(machine, [0])

    def test_resignedEndFromTheServer(self) -> None:
        machine, core = self.reach("resigned")
        machine.play("e4")
        machine.error("late")
        self.assertEqual(self.screen.taken()[1], ["The game is over.", "Server: late"])
        machine.ended("alice wins")
        self.assertEqual(self.screen.said, ["GAME OVER: alice wins"])
        self.assertOver(machine, [0])

    def test_sameNameAsWhiteMovesWithoutAName(self) -> None:
        machine, core = self.reach("waiting")
        machine.ok("alice")
        self.assertIn("Your opponent is also called alice", self.screen.said[0])
        machine.play("e4")
        self.assertEqual(self.screen.sent, [Message(Cmd.MOVE, "", "e215:e2e4")])
