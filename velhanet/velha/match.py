"""A best-of-5 JogoVelha series over TCP (MSG07–MSG10), as one automat machine.

Rules (text, and ``docs/velha.md`` where the text is silent):

- the invitee sends MSG07 once the inviter is connected: 1 = invitee starts,
  2 = inviter starts; whoever starts a game plays X;
- the player who has the turn sends MSG08 with a position 1–9;
- after a game, the loser — after a draw, the player who did not start it —
  sends MSG09 and starts the next game with its first MSG08;
- the series ends at a third win or after the fifth game; velhanet then
  closes the connection itself;
- MSG10 means the sender gave up: the other side wins the series.

The reference program also sends MSG09 when it *won*, and after a draw its
starter moves again without MSG09. Where that still leaves one well-defined
game (we had not started the new game yet), velhanet lets the peer start
and logs the deviation; a move that cannot be reconciled (out of turn, on
an occupied cell, off the board) ends the match cleanly with the rule named.

After every move the machine passes through the transient state
``judging``, whose behaviour decides what comes next and feeds exactly one
private input (``_myTurn``, ``_theirTurn``, ``_iStartNext``,
``_theyStartNext`` or ``_seriesOver``): automat transitions have a fixed
target, so a decision becomes an input.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from automat import TypeMachine, TypeMachineBuilder
from twisted.logger import Logger

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import TICTACTOE, KInARowState, Place
from velhanet.velha.wire import GiveUp, MatchStart, Move, NewGame, StreamMessage

WINS_NEEDED = 3
MAX_GAMES = 5


def positionToPlace(position: int) -> Place:
    """JogoVelha numbers cells 1–9 row by row; the engine uses (x, y) from 0."""
    return Place((position - 1) % 3, (position - 1) // 3)


def placeToPosition(place: Place) -> int:
    return place.y * 3 + place.x + 1


class MatchObserver(Protocol):
    """What a front end (console, bot, test) hears about the match."""

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None: ...

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None: ...

    def yourTurn(self, board: KInARowState) -> None: ...

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        """``result`` is "won", "lost" or "draw", from our side."""

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        """The series ended normally: "won", "lost" or "draw"."""

    def matchEnded(self, reason: str) -> None:
        """The series ended early (gave up, connection lost, a rule broken)."""

    def notice(self, text: str) -> None:
        """Something the user should know that changes nothing (e.g. a tolerated deviation)."""


class Match(Protocol):
    def begin(self) -> None:
        "Invitee: the inviter is connected; send MSG07."

    def startReceived(self, who: int) -> None:
        "Inviter: MSG07 arrived."

    def localMove(self, position: int) -> None:
        "Our user (or bot) plays a position 1–9."

    def remoteMove(self, position: int) -> None:
        "MSG08 arrived."

    def remoteNewGame(self) -> None:
        "MSG09 arrived."

    def remoteGiveUp(self) -> None:
        "MSG10 arrived."

    def localQuit(self) -> None:
        "Our user quits, or the service stops: send MSG10 and close."

    def connectionLost(self, reason: str) -> None:
        "The TCP connection is gone."

    def _myTurn(self) -> None:
        "private: judged: our move."

    def _theirTurn(self) -> None:
        "private: judged: their move."

    def _iStartNext(self) -> None:
        "private: judged: we start the next game (and send MSG09)."

    def _theyStartNext(self) -> None:
        "private: judged: they start the next game (we wait for MSG09)."

    def _seriesOver(self) -> None:
        "private: judged: the series is decided."

    def _broken(self, rule: str) -> None:
        "private: a rule was broken beyond repair: end the match."


@dataclass
class MatchCore:
    """The series bookkeeping and the collaborators of one match."""

    isInvitee: bool
    send: Callable[[StreamMessage], None]
    close: Callable[[], None]
    observer: MatchObserver
    peerNick: str
    random: random.Random = field(default_factory=random.Random)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.velha.match"))
    board: KInARowState = field(default_factory=TICTACTOE.initial)
    score: list[int] = field(default_factory=lambda: [0, 0])
    """Games won: [ours, theirs]."""
    gameNumber: int = 0
    iStarted: bool = False

    def newGame(self, iStart: bool) -> None:
        self.gameNumber += 1
        self.iStarted = iStart
        self.board = TICTACTOE.initial()
        self.observer.gameStarted(self.gameNumber, iStart, self.board)

    def mySide(self) -> int:
        """Engine player index of our stones: the starter is player 0 (X)."""
        return 0 if self.iStarted else 1

    def seriesDecided(self) -> bool:
        return max(self.score) >= WINS_NEEDED or self.gameNumber >= MAX_GAMES

    def seriesResult(self) -> str:
        ours, theirs = self.score
        return "won" if ours > theirs else "lost" if theirs > ours else "draw"

    def apply(self, position: int, byMe: bool) -> str | None:
        """Play ``position`` for us or the peer; the rule it breaks, or None."""
        if not 1 <= position <= 9:
            return f"position {position} is not on the board (text MSG08: positions 1 to 9)"
        place = positionToPlace(position)
        if self.board.stoneAt(place.x, place.y) is not None:
            return f"position {position} is already taken (text MSG08: a free position)"
        side = self.mySide() if byMe else 1 - self.mySide()
        try:
            self.board = self.board.apply(place, player=side)
        except IllegalMove as error:
            return f"position {position}: {error}"
        self.observer.moved(self.board, position, byMe)
        return None

    def decideAfterMove(self, inputs: Match) -> None:
        """Feed the one private input that says what follows the last move."""
        outcome = self.board.outcome
        if outcome is None:
            if self.board.toMove == self.mySide():
                inputs._myTurn()
            else:
                inputs._theirTurn()
            return
        if outcome.winner is None:
            result = "draw"
            iStartNext = not self.iStarted
        elif outcome.winner == self.mySide():
            result = "won"
            self.score[0] += 1
            iStartNext = False
        else:
            result = "lost"
            self.score[1] += 1
            iStartNext = True
        self.observer.gameOver(result, self.board, (self.score[0], self.score[1]))
        if self.seriesDecided():
            inputs._seriesOver()
        elif iStartNext:
            inputs._iStartNext()
        else:
            inputs._theyStartNext()


def peerGaveUp(inputs: Match, core: MatchCore) -> None:
    core.observer.matchEnded(f"{core.peerNick} gave up (MSG10): you win the series")
    core.close()


def giveUp(inputs: Match, core: MatchCore) -> None:
    core.send(GiveUp())
    core.observer.matchEnded("you gave up the series (MSG10 sent)")
    core.close()


def lost(inputs: Match, core: MatchCore, reason: str) -> None:
    core.observer.matchEnded(f"the connection to {core.peerNick} was lost: {reason}")


def secondStart(inputs: Match, core: MatchCore, who: int) -> None:
    inputs._broken("a second MSG07 arrived (text MSG07: it is sent once, at the start)")


def _buildMatch() -> TypeMachine[Match, MatchCore]:
    builder = TypeMachineBuilder(Match, MatchCore)
    waiting = builder.state("waitingForStart")
    judging = builder.state("judging")
    myTurn = builder.state("myTurn")
    theirTurn = builder.state("theirTurn")
    myNewGame = builder.state("myNewGame")
    theirNewGame = builder.state("theirNewGame")
    finished = builder.state("finished")

    for ignored in (
        Match.localMove,
        Match.remoteMove,
        Match.remoteNewGame,
        Match.remoteGiveUp,
        Match.localQuit,
        Match.connectionLost,
        Match.startReceived,
        Match.begin,
    ):
        finished.upon(ignored).loop().returns(None)

    # -- the start: MSG07 ------------------------------------------------

    @waiting.upon(Match.begin).to(judging)
    def sendStart(inputs: Match, core: MatchCore) -> None:
        who = core.random.choice((MatchStart.INVITEE_STARTS, MatchStart.INVITER_STARTS))
        core.send(MatchStart(who))
        core.newGame(iStart=(who == MatchStart.INVITEE_STARTS) == core.isInvitee)
        core.decideAfterMove(inputs)

    @waiting.upon(Match.startReceived).to(judging)
    def startReceived(inputs: Match, core: MatchCore, who: int) -> None:
        if core.isInvitee:
            inputs._broken("MSG07 came from the inviter (text MSG07: it is sent by the invitee)")
            return
        core.newGame(iStart=who == MatchStart.INVITER_STARTS)
        core.decideAfterMove(inputs)

    @waiting.upon(Match.remoteMove).to(judging)
    def moveBeforeStart(inputs: Match, core: MatchCore, position: int) -> None:
        inputs._broken("MSG08 arrived before MSG07 (text MSG07: the game starts with it)")

    @waiting.upon(Match.remoteNewGame).to(judging)
    def newGameBeforeStart(inputs: Match, core: MatchCore) -> None:
        inputs._broken("MSG09 arrived before MSG07 (text MSG07: the game starts with it)")

    waiting.upon(Match.localMove).loop().returns(None)

    # -- decisions ---------------------------------------------------------

    @judging.upon(Match._myTurn).to(myTurn)
    def promptMe(inputs: Match, core: MatchCore) -> None:
        core.observer.yourTurn(core.board)

    judging.upon(Match._theirTurn).to(theirTurn).returns(None)

    @judging.upon(Match._iStartNext).to(myNewGame)
    def promptNewGame(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(f"you start game {core.gameNumber + 1}")
        core.observer.yourTurn(TICTACTOE.initial())

    @judging.upon(Match._theyStartNext).to(theirNewGame)
    def awaitNewGame(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(f"{core.peerNick} starts game {core.gameNumber + 1}")

    @judging.upon(Match._seriesOver).to(finished)
    def seriesOver(inputs: Match, core: MatchCore) -> None:
        core.observer.seriesOver(core.seriesResult(), (core.score[0], core.score[1]))
        core.close()

    @judging.upon(Match._broken).to(finished)
    def broken(inputs: Match, core: MatchCore, rule: str) -> None:
        core.log.warn("match with {peer} ended: {rule}", peer=core.peerNick, rule=rule)
        core.observer.matchEnded(f"{core.peerNick} broke a rule: {rule}")
        core.close()

    # -- playing -------------------------------------------------------------

    @myTurn.upon(Match.localMove).to(judging)
    def playMine(inputs: Match, core: MatchCore, position: int) -> None:
        problem = core.apply(position, byMe=True)
        if problem is not None:
            core.observer.notice(f"not played: {problem}")
            inputs._myTurn()
            return
        core.send(Move(position))
        core.decideAfterMove(inputs)

    @theirTurn.upon(Match.remoteMove).to(judging)
    def playTheirs(inputs: Match, core: MatchCore, position: int) -> None:
        problem = core.apply(position, byMe=False)
        if problem is not None:
            inputs._broken(problem)
            return
        core.decideAfterMove(inputs)

    @myTurn.upon(Match.remoteMove).to(judging)
    def outOfTurn(inputs: Match, core: MatchCore, position: int) -> None:
        if core.board.moveCount == 0 and core.gameNumber == 1:
            # MSG07 gave us the first move, but the peer moved at once (the
            # reference inviter ignores MSG07 1): nothing is on the board yet,
            # so following it keeps one well-defined game.
            core.observer.notice(
                f"{core.peerNick} made the first move although MSG07 gave it to us (text MSG07); following it"
            )
            core.iStarted = False
            playTheirs(inputs, core, position)
            return
        inputs._broken(f"MSG08 {position} arrived out of turn (text MSG08: only the player who has the turn moves)")

    @myNewGame.upon(Match.remoteMove).to(judging)
    def theyStartedAnyway(inputs: Match, core: MatchCore, position: int) -> None:
        core.observer.notice(
            f"{core.peerNick} started game {core.gameNumber + 1} without MSG09 although it was ours to start"
            " (text MSG09: the loser, or after a draw the non-starter, starts); following it"
        )
        core.newGame(iStart=False)
        playTheirs(inputs, core, position)

    @theirTurn.upon(Match.localMove).loop()
    @theirNewGame.upon(Match.localMove).loop()
    def notMyTurn(inputs: Match, core: MatchCore, position: int) -> None:
        core.observer.notice(f"not your turn: waiting for {core.peerNick}")

    @myTurn.upon(Match.remoteNewGame).loop()
    @theirTurn.upon(Match.remoteNewGame).loop()
    def strayNewGame(inputs: Match, core: MatchCore) -> None:
        core.log.info("{peer} sent MSG09 in the middle of game {n}; ignored", peer=core.peerNick, n=core.gameNumber)
        core.observer.notice(
            f"{core.peerNick} sent MSG09 although game {core.gameNumber} had already begun"
            " (text MSG09: only the loser of the last game sends it); ignored"
        )

    # -- between games -------------------------------------------------------

    @myNewGame.upon(Match.localMove).to(judging)
    def startMine(inputs: Match, core: MatchCore, position: int) -> None:
        if not 1 <= position <= 9:
            core.observer.notice(f"not played: position {position} is not on the board (1 to 9)")
            inputs._iStartNext()
            return
        core.send(NewGame())
        core.newGame(iStart=True)
        playMine(inputs, core, position)

    judging.upon(Match.localMove).loop().returns(None)

    @myNewGame.upon(Match.remoteNewGame).to(theirTurn)
    def yieldStart(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(
            f"{core.peerNick} sent MSG09 although it is our turn to start"
            " (text MSG09: the loser, or after a draw the non-starter, sends it); following it"
        )
        core.newGame(iStart=False)

    @theirNewGame.upon(Match.remoteNewGame).to(theirTurn)
    def theyStart(inputs: Match, core: MatchCore) -> None:
        core.newGame(iStart=False)

    @theirNewGame.upon(Match.remoteMove).to(judging)
    def implicitNewGame(inputs: Match, core: MatchCore, position: int) -> None:
        core.observer.notice(f"{core.peerNick} moved without sending MSG09 first (text MSG09); accepted")
        core.newGame(iStart=False)
        playTheirs(inputs, core, position)

    # -- endings -------------------------------------------------------------

    active = (waiting, myTurn, theirTurn, myNewGame, theirNewGame)
    for state in active:
        state.upon(Match.remoteGiveUp).to(finished)(peerGaveUp)
        state.upon(Match.localQuit).to(finished)(giveUp)
        state.upon(Match.connectionLost).to(finished)(lost)
    for state in (myTurn, theirTurn, myNewGame, theirNewGame):
        state.upon(Match.startReceived).to(judging)(secondStart)

    finished.upon(Match._broken).loop().returns(None)
    return builder.build()


MatchMachine = _buildMatch()
