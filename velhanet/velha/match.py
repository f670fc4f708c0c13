"""A best-of-5 JogoVelha series over TCP (MSG07–MSG10), as one automat machine.

Rules (text, and ``docs/velha.md`` where the text is silent):

- the invitee sends MSG07 once the inviter is connected: 1 = invitee starts,
  2 = inviter starts; whoever starts a game plays X;
- the player who has the turn sends MSG08 with a position 1–9;
- after a game, the loser — after a draw, the player who did not start it —
  sends MSG09 and starts the next game; velhanet sends MSG09 as soon as the
  game is over and its first MSG08 when its user has chosen;
- the series ends at a third win or after the fifth game; velhanet then
  closes the connection itself;
- MSG10 means the sender gave up: the other side wins the series.

The original Java program (tiowillians/JogoVelhaSocket) departs from the
text in ways a strict peer would hang on, so velhanet is tolerant wherever
one well-defined game remains:

- it also sends MSG09 when it *won*, and moves first: if we have not moved
  in the new game yet, we follow it;
- after a draw its starter moves again without MSG09, and its non-starter
  never sends MSG09 (a flag of its that is never reset): if the peer does
  not start the new game within ``startGrace`` seconds, we start it;
- a move that reaches it while the result dialog of a game *it* ended is
  open is lost (applied to the old board, which is then cleared), and it
  then starts the next game itself. Every game we start follows a game the
  peer ended, so velhanet sends MSG09 at once but holds its first move
  ``startGrace`` seconds (or, once the peer has shown it starts games that
  are not its own, until it moves): a peer that moves or sends MSG09 in
  that time starts the game; a MSG09 right after our first move means the
  move was lost, and the game restarts with the peer;
- as inviter it ignores MSG07 ``1`` and moves first; as inviter after
  having once been invitee it sends a MSG07 of its own: the first is
  followed while the board is empty, the second ignored;
- when it answered our MSG04 twice it re-sends MSG07 on the newest
  connection, resetting its series: followed while game 1 is untouched.

A move that cannot be reconciled (out of turn, on an occupied cell, off the
board) ends the match cleanly with the rule named.

Every state that waits for the peer holds its timers as state data, armed
on entry and cancelled on every way out: no MSG07 within ``startTimeout`` of
our connection, or silence for ``peerTimeout`` while a move or MSG09 is due,
is reported to the user and ends the match with MSG10 (never stuck). Half way
through ``peerTimeout`` the user is told what velhanet is waiting for.

After every move the machine passes through the transient state
``judging``, whose behaviour decides what comes next and feeds exactly one
private input: automat transitions have a fixed target, so a decision
becomes an input.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import TICTACTOE, KInARowState, Place
from velhanet.velha.wire import GiveUp, MatchStart, Move, NewGame, StreamMessage

WINS_NEEDED = 3
MAX_GAMES = 5

START_TIMEOUT = 30.0
"""Seconds the inviter waits for MSG07 after connecting (the original invitee gives up after 30 s)."""

PEER_TIMEOUT = 120.0
"""Seconds of silence while the peer owes a move or MSG09 before velhanet gives up with MSG10 (0: wait forever)."""

START_GRACE = 8.0
"""Seconds the peer has to start a game that could be its own before velhanet starts it:
after a draw we started (the original never sends MSG09 then), and before our first move
of a game after one the peer ended (the original loses a move that arrives too early)."""


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
        """The series ended early (gave up, connection lost, a rule broken, a silent peer)."""

    def notice(self, text: str) -> None:
        """Something the user should know that changes nothing (e.g. a tolerated deviation)."""


class Match(Protocol):
    def begin(self) -> None:
        "Invitee: the inviter is connected; send MSG07."

    def awaitStart(self) -> None:
        "Inviter: our connection is up; wait for MSG07."

    def startReceived(self, who: int) -> None:
        "MSG07 arrived."

    def localMove(self, position: int) -> None:
        "Our user (or bot) plays a position 1–9."

    def remoteMove(self, position: int) -> None:
        "MSG08 arrived."

    def remoteNewGame(self) -> None:
        "MSG09 arrived."

    def remoteGiveUp(self) -> None:
        "MSG10 arrived."

    def peerLeft(self) -> None:
        "The peer said goodbye (MSG03) in the middle of the match."

    def localQuit(self) -> None:
        "Our user quits, or the service stops: send MSG10 and close."

    def connectionLost(self, reason: str) -> None:
        "The TCP connection is gone."

    def supersede(self) -> bool:
        """The peer opened a newer port for this match: may it take over?

        True (and this machine is finished, silently) only while we still
        wait for MSG07: nothing has been played on this connection.
        """

    def _myTurn(self) -> None:
        "private: judged: our move."

    def _theirTurn(self) -> None:
        "private: judged: their move."

    def _iStartNext(self) -> None:
        "private: judged: we start the next game (MSG09 goes out now)."

    def _theyStartNext(self) -> None:
        "private: judged: they lost; we wait for their MSG09."

    def _theyStartAfterDraw(self) -> None:
        "private: judged: a draw we started; they should start, we wait a grace period."

    def _resume(self) -> None:
        "private: judged: nothing changed; back to waiting for the peer."

    def _seriesOver(self) -> None:
        "private: judged: the series is decided."

    def _broken(self, rule: str) -> None:
        "private: a rule was broken beyond repair: end the match."

    def _stillWaiting(self) -> None:
        "private: half of the peer timeout has passed."

    def _silent(self) -> None:
        "private: the peer has been silent too long."

    def _graceOver(self) -> None:
        "private: after a draw the peer did not start the next game."


@dataclass
class MatchSettings:
    """How long the match waits for the peer (see the module docstring), and our MSG07."""

    start: float = START_TIMEOUT
    peer: float = PEER_TIMEOUT
    startGrace: float = START_GRACE
    first: str = "inviter"
    """Who starts game 1 when we are the invitee: "inviter" (MSG07 2), "invitee" (1) or "random".

    The text leaves the choice to the invitee. The default lets the inviter
    start because the original inviter moves first whatever MSG07 says: with
    ``1`` both sides would play the first move at once.
    """

    def chooseStart(self, rng: random.Random) -> int:
        if self.first == "random":
            return rng.choice((MatchStart.INVITEE_STARTS, MatchStart.INVITER_STARTS))
        return MatchStart.INVITEE_STARTS if self.first == "invitee" else MatchStart.INVITER_STARTS


@dataclass
class MatchCore:
    """The series bookkeeping and the collaborators of one match."""

    isInvitee: bool
    send: Callable[[StreamMessage], None]
    close: Callable[[], None]
    observer: MatchObserver
    peerNick: str
    clock: IReactorTime
    settings: MatchSettings = field(default_factory=MatchSettings)
    random: random.Random = field(default_factory=random.Random)
    peerStartsAnyway: bool = False
    """Learned: the peer has started a game that was ours (the original program does)."""
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.velha.match"))
    board: KInARowState = field(default_factory=TICTACTOE.initial)
    score: list[int] = field(default_factory=lambda: [0, 0])
    """Games won: [ours, theirs]."""
    gameNumber: int = 0
    iStarted: bool = False
    moves: list[tuple[int, bool]] = field(default_factory=list)
    """The current game's moves: (position, by us)."""
    peerEndedLastGame: bool = False
    """The peer's move ended the last game: the original then shows its result dialog on its UI thread
    and goes on reading, so a move of ours that arrives before its user closes the dialog is lost.
    (When our move ended it, the dialog blocks its reader: what we send meanwhile is only delayed.)"""

    def newGame(self, iStart: bool) -> None:
        self.gameNumber += 1
        self.restartGame(iStart)

    def restartGame(self, iStart: bool) -> None:
        """Begin the current game afresh (a peer that re-sent MSG07 before any move)."""
        self.iStarted = iStart
        self.board = TICTACTOE.initial()
        self.moves = []
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
        self.moves.append((position, byMe))
        self.observer.moved(self.board, position, byMe)
        return None

    def firstMoveLost(self, position: int) -> bool:
        """Does the peer's move on ``position`` show that our first move of this game never reached it?

        Only in a game we started after one the peer ended (our first move may
        have arrived under its result dialog), and only when the peer now
        plays on the very cell of that first move, which it would never do if
        it had seen it.
        """
        return (
            self.gameNumber > 1
            and self.iStarted
            and self.peerEndedLastGame
            and bool(self.moves)
            and self.moves[0] == (position, True)
        )

    def replayWithoutOurFirstMove(self) -> None:
        """Rebuild the game as the peer sees it: it started it, and our lost first move is not on the board."""
        kept = self.moves[1:]
        self.restartGame(iStart=False)
        for position, byMe in kept:
            problem = self.apply(position, byMe)
            assert problem is None, problem  # the same stones, one fewer: nothing can collide

    def untouched(self) -> bool:
        """Nothing is on the board of the current game yet."""
        return self.board.moveCount == 0

    def decideAfterMove(self, inputs: Match) -> None:
        """Feed the one private input that says what follows the last move."""
        outcome = self.board.outcome
        if outcome is not None:
            self.peerEndedLastGame = not self.moves[-1][1]
        if outcome is None:
            if self.board.toMove == self.mySide():
                inputs._myTurn()
            else:
                inputs._theirTurn()
            return
        if outcome.winner is None:
            result = "draw"
        elif outcome.winner == self.mySide():
            result = "won"
            self.score[0] += 1
        else:
            result = "lost"
            self.score[1] += 1
        self.observer.gameOver(result, self.board, (self.score[0], self.score[1]))
        if self.seriesDecided():
            inputs._seriesOver()
        elif result == "lost" or (result == "draw" and not self.iStarted):
            inputs._iStartNext()
        elif result == "won":
            inputs._theyStartNext()
        else:
            inputs._theyStartAfterDraw()

    def giveUp(self, why: str) -> None:
        """Send MSG10, tell the user why, and close."""
        self.send(GiveUp())
        self.observer.matchEnded(why)
        self.close()


# -- what a waiting state holds -------------------------------------------------


@dataclass
class _Timers:
    """The delayed calls of one waiting state; every way out cancels them."""

    calls: list[IDelayedCall]

    def cancel(self) -> None:
        for call in self.calls:
            if call.active():
                call.cancel()
        self.calls.clear()


def _awaitPeer(inputs: Match, core: MatchCore) -> _Timers:
    """A move or MSG09 is due from the peer: warn half way, give up at ``settings.peer``."""
    limit = core.settings.peer
    if limit <= 0:
        return _Timers([])
    return _Timers([core.clock.callLater(limit / 2, inputs._stillWaiting), core.clock.callLater(limit, inputs._silent)])


def _awaitStart(inputs: Match, core: MatchCore) -> _Timers:
    return _Timers([core.clock.callLater(core.settings.start, inputs._silent)])


def _awaitDrawStart(inputs: Match, core: MatchCore) -> _Timers:
    return _Timers([core.clock.callLater(core.settings.startGrace, inputs._graceOver)])


@dataclass
class _Held(_Timers):
    """Our first move of a game, held until the peer has had time to see the end of the last one."""

    move: int | None = None


def _holdFirstMove(inputs: Match, core: MatchCore) -> _Held:
    wait = core.settings.startGrace
    if core.peerStartsAnyway and core.settings.peer > 0:
        wait = core.settings.peer / 2  # it will start: give its user time to close its result dialog
    return _Held([core.clock.callLater(wait, inputs._graceOver)])


# -- behaviours shared by several states ------------------------------------------


def _peerGaveUp(inputs: Match, core: MatchCore) -> None:
    core.observer.matchEnded(f"{core.peerNick} gave up (MSG10): you win the series")
    core.close()


def _peerLeft(inputs: Match, core: MatchCore) -> None:
    core.observer.matchEnded(f"{core.peerNick} left (MSG03) in the middle of the match")
    core.close()


def _lost(inputs: Match, core: MatchCore, reason: str) -> None:
    core.observer.matchEnded(f"the connection to {core.peerNick} was lost: {reason}")


def _quit(inputs: Match, core: MatchCore) -> None:
    core.giveUp("you gave up the series (MSG10 sent)")


def _ignoreInviterStart(core: MatchCore, who: int) -> None:
    core.log.info("{peer} sent MSG07 {who} although it invited us; ignored", peer=core.peerNick, who=who)
    core.observer.notice(
        f"{core.peerNick} sent a MSG07 of its own although it invited us (text MSG07: the invitee sends it;"
        " the original program does this once it has been invited itself); ignored"
    )


def _notYourTurn(core: MatchCore) -> None:
    core.observer.notice(f"not your turn: waiting for {core.peerNick}")


def _strayNewGame(core: MatchCore) -> None:
    core.log.info("{peer} sent MSG09 in the middle of game {n}; ignored", peer=core.peerNick, n=core.gameNumber)
    core.observer.notice(
        f"{core.peerNick} sent MSG09 although game {core.gameNumber} had already begun"
        " (text MSG09: only the loser of the last game sends it); ignored"
    )


def _followTheirStart(core: MatchCore, what: str) -> None:
    """The peer started a game that was ours to start; it becomes its game."""
    core.peerStartsAnyway = True
    core.observer.notice(
        f"{core.peerNick} {what} of game {core.gameNumber} although it was ours to start"
        " (text MSG07/MSG09; the original program does this); following it"
    )
    core.restartGame(iStart=False)


def _voidAndFollow(inputs: Match, core: MatchCore) -> None:
    """A MSG09 in the middle of a game: the peer has finished a game we are still playing.

    The original program loses a move that reaches it while its result
    dialog is open (a person slower than ``startGrace``); from then on its
    board differs from ours, and its MSG09 shows it. The game is void (no
    one scores it) and the next one starts with the peer, as on its side.
    """
    core.peerStartsAnyway = True
    core.log.warn("{peer} started a new game during game {n}: boards diverged", peer=core.peerNick, n=core.gameNumber)
    core.observer.notice(
        f"{core.peerNick} sent MSG09 during game {core.gameNumber}: it has finished a game we are still playing"
        " (the original program loses a move that arrives while its result dialog is open). Game"
        f" {core.gameNumber} is void; the next game starts with {core.peerNick}"
    )
    if core.gameNumber >= MAX_GAMES:
        inputs._seriesOver()
        return
    core.newGame(iStart=False)
    inputs._theirTurn()


def _playTheirs(inputs: Match, core: MatchCore, position: int) -> None:
    if core.firstMoveLost(position):
        core.peerStartsAnyway = True
        core.observer.notice(
            f"{core.peerNick} played {position}, where our first move of game {core.gameNumber} is: that move never"
            " reached it (the original program loses a move that arrives while its result dialog is open)."
            f" The game goes on as {core.peerNick} sees it: it started it, without our first move"
        )
        core.replayWithoutOurFirstMove()
    problem = core.apply(position, byMe=False)
    if problem is not None:
        inputs._broken(problem)
        return
    core.decideAfterMove(inputs)


def _restartOrBreak(inputs: Match, core: MatchCore, who: int) -> None:
    """Inviter: a further MSG07. Follow it while game 1 is untouched, else the match ends."""
    if core.gameNumber == 1 and core.untouched():
        core.observer.notice(
            f"{core.peerNick} sent MSG07 again before anyone moved (the original program does when it"
            " answered our invitation twice); following the newest one"
        )
        core.restartGame(iStart=who == MatchStart.INVITER_STARTS)
        core.decideAfterMove(inputs)
        return
    inputs._broken("a second MSG07 arrived after the game had begun (text MSG07: it is sent once, at the start)")


def _buildMatch() -> TypeMachine[Match, MatchCore]:
    builder = TypeMachineBuilder(Match, MatchCore)
    connected = builder.state("connected")
    waitingForStart = builder.state("waitingForStart", _awaitStart)
    judging = builder.state("judging")
    myTurn = builder.state("myTurn")
    theirTurn = builder.state("theirTurn", _awaitPeer)
    theirNewGame = builder.state("theirNewGame", _awaitPeer)
    theirDrawStart = builder.state("theirDrawStart", _awaitDrawStart)
    myStartHeld = builder.state("myStartHeld", _holdFirstMove)
    finished = builder.state("finished")

    plainStates = (connected, judging, myTurn, finished)
    waitingStates = (waitingForStart, theirTurn, theirNewGame, theirDrawStart, myStartHeld)

    # -- nothing happens once finished; nothing but the start may be superseded ----

    for ignored in (
        Match.begin,
        Match.awaitStart,
        Match.startReceived,
        Match.localMove,
        Match.remoteMove,
        Match.remoteNewGame,
        Match.remoteGiveUp,
        Match.peerLeft,
        Match.localQuit,
        Match.connectionLost,
        Match._broken,
    ):
        finished.upon(ignored).loop().returns(None)
    for plain in plainStates:
        plain.upon(Match.supersede).loop().returns(False)
    for started in (theirTurn, theirNewGame, theirDrawStart, myStartHeld):
        started.upon(Match.supersede).loop().returns(False)

    # -- the start: MSG07 --------------------------------------------------------

    @connected.upon(Match.begin).to(judging)
    def sendStart(inputs: Match, core: MatchCore) -> None:
        who = core.settings.chooseStart(core.random)
        core.send(MatchStart(who))
        core.newGame(iStart=(who == MatchStart.INVITEE_STARTS) == core.isInvitee)
        core.decideAfterMove(inputs)

    connected.upon(Match.awaitStart).to(waitingForStart).returns(None)

    @waitingForStart.upon(Match.startReceived).to(judging)
    def startReceived(inputs: Match, core: MatchCore, timers: _Timers, who: int) -> None:
        timers.cancel()
        core.newGame(iStart=who == MatchStart.INVITER_STARTS)
        core.decideAfterMove(inputs)

    @waitingForStart.upon(Match.remoteMove).to(judging)
    def moveBeforeStart(inputs: Match, core: MatchCore, timers: _Timers, position: int) -> None:
        timers.cancel()
        inputs._broken("MSG08 arrived before MSG07 (text MSG07: the game starts with it)")

    @waitingForStart.upon(Match.remoteNewGame).to(judging)
    def newGameBeforeStart(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        inputs._broken("MSG09 arrived before MSG07 (text MSG07: the game starts with it)")

    @waitingForStart.upon(Match.localMove).loop()
    def moveBeforeStartLocal(inputs: Match, core: MatchCore, timers: _Timers, position: int) -> None:
        core.observer.notice(f"the game has not started yet: waiting for {core.peerNick}'s MSG07")

    @waitingForStart.upon(Match.supersede).to(finished)
    def superseded(inputs: Match, core: MatchCore, timers: _Timers) -> bool:
        timers.cancel()
        core.log.info("match connection to {peer} superseded by a newer one", peer=core.peerNick)
        return True

    # -- decisions ---------------------------------------------------------------

    @judging.upon(Match._myTurn).to(myTurn)
    def promptMe(inputs: Match, core: MatchCore) -> None:
        core.observer.yourTurn(core.board)

    judging.upon(Match._theirTurn).to(theirTurn).returns(None)

    @judging.upon(Match._iStartNext).to(myStartHeld)
    def startNextGame(inputs: Match, core: MatchCore) -> None:
        core.send(NewGame())
        core.newGame(iStart=True)
        core.observer.notice(f"you start game {core.gameNumber} (MSG09 sent)")

    judging.upon(Match._resume).to(theirTurn).returns(None)

    @judging.upon(Match._theyStartNext).to(theirNewGame)
    def awaitNewGame(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(f"{core.peerNick} starts game {core.gameNumber + 1}")

    @judging.upon(Match._theyStartAfterDraw).to(theirDrawStart)
    def awaitDrawStart(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(f"{core.peerNick} starts game {core.gameNumber + 1} (after a draw, who did not start)")

    @judging.upon(Match._seriesOver).to(finished)
    def seriesOver(inputs: Match, core: MatchCore) -> None:
        core.observer.seriesOver(core.seriesResult(), (core.score[0], core.score[1]))
        core.close()

    @judging.upon(Match._broken).to(finished)
    def broken(inputs: Match, core: MatchCore, rule: str) -> None:
        core.log.warn("match with {peer} ended: {rule}", peer=core.peerNick, rule=rule)
        core.observer.matchEnded(f"{core.peerNick} broke a rule: {rule}")
        core.close()

    judging.upon(Match.localMove).loop().returns(None)

    # -- our turn -----------------------------------------------------------------

    @myTurn.upon(Match.localMove).to(judging)
    def playMine(inputs: Match, core: MatchCore, position: int) -> None:
        problem = core.apply(position, byMe=True)
        if problem is not None:
            core.observer.notice(f"not played: {problem}")
            inputs._myTurn()
            return
        core.send(Move(position))
        core.decideAfterMove(inputs)

    @myTurn.upon(Match.remoteMove).to(judging)
    def outOfTurn(inputs: Match, core: MatchCore, position: int) -> None:
        if core.untouched():
            # The game is ours to start, but the peer moved first: the
            # original inviter ignores MSG07 1, and the original moves first
            # after winning or after a draw it started. Nothing is on the
            # board yet, so following it keeps one well-defined game.
            _followTheirStart(core, "made the first move")
            _playTheirs(inputs, core, position)
            return
        inputs._broken(f"MSG08 {position} arrived out of turn (text MSG08: only the player who has the turn moves)")

    @myTurn.upon(Match.remoteNewGame).to(judging)
    def newGameOnMyTurn(inputs: Match, core: MatchCore) -> None:
        if core.gameNumber > 1 and core.untouched():
            _followTheirStart(core, "sent MSG09 for the start")
            inputs._theirTurn()
        elif core.untouched():
            _strayNewGame(core)
            inputs._myTurn()
        else:
            _voidAndFollow(inputs, core)

    # -- our first move of a game, held ---------------------------------------------

    @myStartHeld.upon(Match.localMove).loop()
    def keepFirstMove(inputs: Match, core: MatchCore, held: _Held, position: int) -> None:
        held.move = position
        core.observer.notice(f"{position} will be played in a moment, once {core.peerNick} has closed the last game")

    @myStartHeld.upon(Match.remoteMove).to(judging)
    def theyStartedFirst(inputs: Match, core: MatchCore, held: _Held, position: int) -> None:
        held.cancel()
        _followTheirStart(core, "made the first move")
        _playTheirs(inputs, core, position)

    @myStartHeld.upon(Match.remoteNewGame).to(judging)
    def theyClaimTheStart(inputs: Match, core: MatchCore, held: _Held) -> None:
        held.cancel()
        _followTheirStart(core, "sent MSG09 for the start")
        inputs._theirTurn()

    @myStartHeld.upon(Match._graceOver).to(judging)
    def startNow(inputs: Match, core: MatchCore, held: _Held) -> None:
        held.cancel()
        if held.move is None:
            inputs._myTurn()
            return
        problem = core.apply(held.move, byMe=True)
        if problem is not None:
            core.observer.notice(f"not played: {problem}")
            inputs._myTurn()
            return
        core.send(Move(held.move))
        core.decideAfterMove(inputs)

    @myStartHeld.upon(Match.startReceived).loop()
    def startWhileHeld(inputs: Match, core: MatchCore, held: _Held, who: int) -> None:
        core.observer.notice(
            f"{core.peerNick} sent MSG07 {who} between games (text MSG07: once, at the start); ignored"
        )

    @myTurn.upon(Match.startReceived).to(judging)
    def startOnMyTurn(inputs: Match, core: MatchCore, who: int) -> None:
        if core.isInvitee:
            _ignoreInviterStart(core, who)
            inputs._myTurn()
            return
        _restartOrBreak(inputs, core, who)

    # -- their turn ----------------------------------------------------------------

    @theirTurn.upon(Match.remoteMove).to(judging)
    def playTheirs(inputs: Match, core: MatchCore, timers: _Timers, position: int) -> None:
        timers.cancel()
        _playTheirs(inputs, core, position)

    @theirTurn.upon(Match.startReceived).to(judging)
    def startOnTheirTurn(inputs: Match, core: MatchCore, timers: _Timers, who: int) -> None:
        timers.cancel()
        if core.isInvitee:
            _ignoreInviterStart(core, who)
            inputs._theirTurn()
            return
        _restartOrBreak(inputs, core, who)

    # -- between games ------------------------------------------------------------

    @theirNewGame.upon(Match.remoteNewGame).to(theirTurn)
    @theirDrawStart.upon(Match.remoteNewGame).to(theirTurn)
    def theyStart(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        core.newGame(iStart=False)

    @theirNewGame.upon(Match.remoteMove).to(judging)
    @theirDrawStart.upon(Match.remoteMove).to(judging)
    def implicitNewGame(inputs: Match, core: MatchCore, timers: _Timers, position: int) -> None:
        timers.cancel()
        core.observer.notice(f"{core.peerNick} moved without sending MSG09 first (text MSG09); accepted")
        core.newGame(iStart=False)
        _playTheirs(inputs, core, position)

    @theirDrawStart.upon(Match._graceOver).to(myTurn)
    def startAfterSilentDraw(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        core.send(NewGame())
        core.newGame(iStart=True)
        core.observer.notice(
            f"{core.peerNick} did not start game {core.gameNumber} within {core.settings.startGrace:g} s after the"
            " draw (the original program never does); you start it (MSG09 sent)"
        )
        core.observer.yourTurn(core.board)

    @theirNewGame.upon(Match.startReceived).loop()
    @theirDrawStart.upon(Match.startReceived).loop()
    def startBetweenGames(inputs: Match, core: MatchCore, timers: _Timers, who: int) -> None:
        core.observer.notice(
            f"{core.peerNick} sent MSG07 {who} between games (text MSG07: once, at the start); ignored"
        )

    # -- while waiting for the peer --------------------------------------------------

    for waitingForPeer in (theirTurn, theirNewGame, theirDrawStart):

        @waitingForPeer.upon(Match.localMove).loop()
        def notMyTurn(inputs: Match, core: MatchCore, timers: _Timers, position: int) -> None:
            _notYourTurn(core)

    @theirTurn.upon(Match.remoteNewGame).to(judging)
    def newGameOnTheirTurn(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        if core.gameNumber > 1 and core.iStarted and core.board.moveCount == 1 and not core.peerEndedLastGame:
            # Our move ended the last game: the original's result dialog
            # blocked its reader, so our MSG09 and first move were delayed,
            # not lost; its own MSG09 crossed them. It has our move.
            core.log.info("{peer}'s MSG09 crossed our first move of game {n}", peer=core.peerNick, n=core.gameNumber)
            core.observer.notice(
                f"{core.peerNick} sent MSG09 after our first move of game {core.gameNumber}; it crossed ours (the"
                " original program reads nothing while its result dialog is open) and it has our move: ignored"
            )
        elif core.gameNumber > 1 and core.iStarted and core.board.moveCount == 1:
            # Our first move reached the original while its result dialog
            # was open and was lost; its MSG09 says it starts this game now.
            lost = core.board.lastMove
            core.peerStartsAnyway = True
            core.observer.notice(
                f"{core.peerNick} sent MSG09 after our first move of game {core.gameNumber}: it never saw that move"
                f" ({lost}; the original program loses a move that arrives while its result dialog is open)."
                " The game restarts with its first move"
            )
            core.restartGame(iStart=False)
        elif core.untouched():
            _strayNewGame(core)
        else:
            _voidAndFollow(inputs, core)
            return
        inputs._resume()

    @theirTurn.upon(Match._stillWaiting).loop()
    @theirNewGame.upon(Match._stillWaiting).loop()
    def stillWaiting(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        what = "a move" if core.board.outcome is None else f"the start of game {core.gameNumber + 1} (MSG09)"
        core.observer.notice(
            f"still waiting for {what} from {core.peerNick} ({core.settings.peer / 2:g} s);"
            f" velhanet gives up the match after {core.settings.peer:g} s (--peer-timeout)"
        )

    @waitingForStart.upon(Match._silent).to(finished)
    def noStart(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        core.log.warn("no MSG07 from {peer} within {s} s", peer=core.peerNick, s=core.settings.start)
        core.giveUp(
            f"{core.peerNick} sent no MSG07 within {core.settings.start:g} s of our connection"
            " (text MSG07: the invitee sends it once the inviter has connected); match given up (MSG10 sent)"
        )

    @theirTurn.upon(Match._silent).to(finished)
    @theirNewGame.upon(Match._silent).to(finished)
    def silentPeer(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        what = "no move" if core.board.outcome is None else "no MSG09"
        core.log.warn("{peer} silent for {s} s; giving up", peer=core.peerNick, s=core.settings.peer)
        core.giveUp(
            f"{core.peerNick} sent {what} for {core.settings.peer:g} s; match given up (MSG10 sent)"
            " (--peer-timeout to wait longer)"
        )

    # -- endings ----------------------------------------------------------------------

    for active in (connected, myTurn):
        active.upon(Match.remoteGiveUp).to(finished)(_peerGaveUp)
        active.upon(Match.peerLeft).to(finished)(_peerLeft)
        active.upon(Match.localQuit).to(finished)(_quit)
        active.upon(Match.connectionLost).to(finished)(_lost)

    def peerGaveUp(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        _peerGaveUp(inputs, core)

    def peerLeft(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        _peerLeft(inputs, core)

    def giveUp(inputs: Match, core: MatchCore, timers: _Timers) -> None:
        timers.cancel()
        _quit(inputs, core)

    def lost(inputs: Match, core: MatchCore, timers: _Timers, reason: str) -> None:
        timers.cancel()
        _lost(inputs, core, reason)

    for waiting in waitingStates:
        waiting.upon(Match.remoteGiveUp).to(finished)(peerGaveUp)
        waiting.upon(Match.peerLeft).to(finished)(peerLeft)
        waiting.upon(Match.localQuit).to(finished)(giveUp)
        waiting.upon(Match.connectionLost).to(finished)(lost)

    return builder.build()


MatchMachine = _buildMatch()
