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

The rules of the series are pure and live in ``velhanet.velha.series`` (the
board is ``velhanet.games.kinarow``'s tic-tac-toe); how velhanet follows the
original Java program where it departs from the text is in
``velhanet.velha.tolerance``. A move that cannot be reconciled (out of turn,
on an occupied cell, off the board) ends the match cleanly with the rule named.

Every state that waits for the peer holds its timers as state data
(L{Timers}, below), armed on entry and cancelled on every way
out: no MSG07 within ``startTimeout`` of our connection, or silence for
``peerTimeout`` while a move or MSG09 is due, is reported to the user and
ends the match with MSG10 (never stuck). Half way through ``peerTimeout`` the
user is told what velhanet is waiting for.

After every move the machine passes through the transient state
``judging``, whose behaviour decides what comes next and feeds exactly one
private input: automat transitions have a fixed target, so a decision
becomes an input.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from velhanet.games.kinarow import KInARowState
from velhanet.i18n import N_, _
from velhanet.indexedmachine import indexed
from velhanet.velha import tolerance
from velhanet.velha.said import said
from velhanet.velha.series import MAX_GAMES, WINS_NEEDED, AfterGame, Series, placeToPosition, positionToPlace
from velhanet.velha.tolerance import UNANSWERED_WARNING
from velhanet.velha.wire import GiveUp, MatchStart, Move, NewGame, StreamMessage

__all__ = ["MAX_GAMES", "WINS_NEEDED", "placeToPosition", "positionToPlace"]
"""Re-exported: the series' limits and cell numbers, for the match's users."""

START_TIMEOUT = 30.0
"""Seconds the inviter waits for MSG07 after connecting (the original invitee gives up after 30 s)."""

PEER_TIMEOUT = 120.0
"""Seconds of silence while the peer owes a move or MSG09 before velhanet gives up with MSG10 (0: wait forever)."""

START_GRACE = 8.0
"""Seconds the peer has to start a game that could be its own before velhanet starts it:
after a draw we started (the original never sends MSG09 then), and before our first move
of a game after one the peer ended (the original loses a move that arrives too early)."""


class MatchObserver(typing.Protocol):
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


class Match(typing.Protocol):
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

    def _replyUnanswered(self) -> None:
        "private: our reply to the peer's first move after a game it ended has had no answer for 20 s."


def deliver(match: Match, message: StreamMessage) -> None:
    """Feed one decoded TCP message (MSG07–MSG10) to the match as the input it is."""
    if isinstance(message, MatchStart):
        match.startReceived(message.who)
    elif isinstance(message, Move):
        match.remoteMove(message.position)
    elif isinstance(message, NewGame):
        match.remoteNewGame()
    else:
        match.remoteGiveUp()


@dataclass
class MatchSettings:
    """How long the match waits for the peer (see ``velhanet.velha.room``), and our MSG07."""

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
    """The collaborators of one match and its series; every change of the series is reported here."""

    isInvitee: bool
    send: Callable[[StreamMessage], None]
    close: Callable[[], None]
    observer: MatchObserver
    peerNick: str
    clock: IReactorTime
    settings: MatchSettings = field(default_factory=MatchSettings)
    random: random.Random = field(default_factory=random.Random)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.velha.room"))
    series: Series = field(default_factory=Series)

    def newGame(self, iStart: bool) -> None:
        self.series.newGame(iStart)
        self.observer.gameStarted(self.series.gameNumber, iStart, self.series.board)

    def restartGame(self, iStart: bool) -> None:
        """Begin the current game afresh (a peer that re-sent MSG07 before any move)."""
        self.series.restartGame(iStart)
        self.observer.gameStarted(self.series.gameNumber, iStart, self.series.board)

    def apply(self, position: int, byMe: bool) -> str | None:
        """Play ``position`` for us or the peer; the rule it breaks, or None."""
        problem = self.series.play(position, byMe)
        if problem is None:
            self.observer.moved(self.series.board, position, byMe)
        return problem

    def replayWithoutOurFirstMove(self) -> None:
        """Rebuild the game as the peer sees it: it started it, and our lost first move is not on the board."""
        kept = self.series.moves[1:]
        self.restartGame(iStart=False)
        for position, byMe in kept:
            problem = self.apply(position, byMe)
            assert problem is None, problem  # the same stones, one fewer: nothing can collide

    def playMine(self, inputs: Match, position: int) -> None:
        """Our move: refused (still our turn) if it breaks a rule, else sent and judged."""
        problem = self.apply(position, byMe=True)
        if problem is not None:
            self.observer.notice(said(N_("not played: {problem}"), problem=problem))
            inputs._myTurn()
            return
        self.send(Move(position))
        self.decideAfterMove(inputs)

    def decideAfterMove(self, inputs: tolerance.Judge) -> None:
        """Feed the one private input that says what follows the last move."""
        series = self.series
        outcome = series.board.outcome
        if outcome is None:
            if series.board.toMove == series.mySide():
                inputs._myTurn()
            else:
                inputs._theirTurn()
            return
        result = series.scoreGame(outcome)
        self.observer.gameOver(result, series.board, series.scoreboard())
        after = series.afterGame(result)
        if after is AfterGame.SERIES_OVER:
            inputs._seriesOver()
        elif after is AfterGame.I_START:
            inputs._iStartNext()
        elif after is AfterGame.THEY_START:
            inputs._theyStartNext()
        else:
            inputs._theyStartAfterDraw()

    def startNextGame(self, announce: bool = True) -> None:
        """We start the next game: MSG09 now (or with our first move), our first move when chosen."""
        if announce:
            self.send(NewGame())
        self.newGame(iStart=True)

    def giveUp(self, why: str) -> None:
        """Send MSG10, tell the user why, and close."""
        self.send(GiveUp())
        self.observer.matchEnded(why)
        self.close()


# -- what a waiting state holds -------------------------------------------------


@dataclass
class Timers:
    """The delayed calls of one waiting state; every way out cancels them."""

    calls: list[IDelayedCall]

    def cancel(self) -> None:
        for call in self.calls:
            if call.active():
                call.cancel()
        self.calls.clear()


@dataclass
class HeldMove(Timers):
    """Our first move of a game, held until the peer has had time to see the end of the last one."""

    move: int | None = None
    unannounced: bool = False
    """MSG09 is not sent yet: it goes with our first move (``Series.quietStart``)."""


def timersAwaitingPeer(inputs: Match, core: MatchCore) -> Timers:
    """A move or MSG09 is due from the peer: warn half way, give up at ``settings.peer``.

    After our reply to the peer's first move of a game that followed one it
    ended, the user also hears after 20 s what may have happened (the
    original program's reader can stop at that moment).
    """
    clock, limit = core.clock, core.settings.peer
    calls = []
    if core.series.answersTheirFirstMoveAfterTheirEnding() and (limit <= 0 or limit / 2 > UNANSWERED_WARNING):
        calls.append(clock.callLater(UNANSWERED_WARNING, inputs._replyUnanswered))
    if limit > 0:
        calls += [clock.callLater(limit / 2, inputs._stillWaiting), clock.callLater(limit, inputs._silent)]
    return Timers(calls)


def timersAwaitingStart(inputs: Match, core: MatchCore) -> Timers:
    return Timers([core.clock.callLater(core.settings.start, inputs._silent)])


def timersAwaitingDrawStart(inputs: Match, core: MatchCore) -> Timers:
    return Timers([core.clock.callLater(core.settings.startGrace, inputs._graceOver)])


def holdFirstMove(inputs: Match, core: MatchCore) -> HeldMove:
    wait = core.settings.startGrace
    if core.series.peerStartsAnyway and core.settings.peer > 0:
        wait = core.settings.peer / 2  # it will start: give its user time to close its result dialog
    return HeldMove([core.clock.callLater(wait, inputs._graceOver)], unannounced=core.series.quietStart())


def _buildMatch() -> TypeMachine[Match, MatchCore]:
    builder = TypeMachineBuilder(Match, MatchCore)
    connected = builder.state("connected")
    waitingForStart = builder.state("waitingForStart", timersAwaitingStart)
    judging = builder.state("judging")
    myTurn = builder.state("myTurn")
    theirTurn = builder.state("theirTurn", timersAwaitingPeer)
    theirNewGame = builder.state("theirNewGame", timersAwaitingPeer)
    theirDrawStart = builder.state("theirDrawStart", timersAwaitingDrawStart)
    myStartHeld = builder.state("myStartHeld", holdFirstMove)
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
    def startReceived(inputs: Match, core: MatchCore, timers: Timers, who: int) -> None:
        timers.cancel()
        core.newGame(iStart=who == MatchStart.INVITER_STARTS)
        core.decideAfterMove(inputs)

    @waitingForStart.upon(Match.remoteMove).to(judging)
    def moveBeforeStart(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
        timers.cancel()
        inputs._broken(said(N_("MSG08 arrived before MSG07 (text MSG07: the game starts with it)")))

    @waitingForStart.upon(Match.remoteNewGame).to(judging)
    def newGameBeforeStart(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        inputs._broken(said(N_("MSG09 arrived before MSG07 (text MSG07: the game starts with it)")))

    @waitingForStart.upon(Match.localMove).loop()
    def moveBeforeStartLocal(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
        core.observer.notice(said(N_("the game has not started yet: waiting for {peer}'s MSG07"), peer=core.peerNick))

    @waitingForStart.upon(Match.supersede).to(finished)
    def superseded(inputs: Match, core: MatchCore, timers: Timers) -> bool:
        timers.cancel()
        core.log.info(_("match connection to {peer} superseded by a newer one"), peer=core.peerNick)
        return True

    # -- decisions ---------------------------------------------------------------

    @judging.upon(Match._myTurn).to(myTurn)
    def promptMe(inputs: Match, core: MatchCore) -> None:
        core.observer.yourTurn(core.series.board)

    judging.upon(Match._theirTurn).to(theirTurn).returns(None)

    @judging.upon(Match._iStartNext).to(myStartHeld)
    def startNextGame(inputs: Match, core: MatchCore) -> None:
        quiet = core.series.quietStart()
        core.startNextGame(announce=not quiet)
        n, peer = core.series.gameNumber, core.peerNick
        if quiet:
            text = N_("you start game {n}; MSG09 goes with your first move ({peer} starts such games itself)")
        else:
            text = N_("you start game {n} (MSG09 sent)")
        core.observer.notice(said(text, n=n, peer=peer))

    judging.upon(Match._resume).to(theirTurn).returns(None)

    @judging.upon(Match._theyStartNext).to(theirNewGame)
    def awaitNewGame(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(said(N_("{peer} starts game {n}"), peer=core.peerNick, n=core.series.gameNumber + 1))

    @judging.upon(Match._theyStartAfterDraw).to(theirDrawStart)
    def awaitDrawStart(inputs: Match, core: MatchCore) -> None:
        text = N_("{peer} starts game {n} (after a draw, who did not start)")
        core.observer.notice(said(text, peer=core.peerNick, n=core.series.gameNumber + 1))

    @judging.upon(Match._seriesOver).to(finished)
    def seriesOver(inputs: Match, core: MatchCore) -> None:
        core.observer.seriesOver(core.series.seriesResult(), core.series.scoreboard())
        core.close()

    @judging.upon(Match._broken).to(finished)
    def broken(inputs: Match, core: MatchCore, rule: str) -> None:
        core.log.warn(_("match with {peer} ended: {rule}"), peer=core.peerNick, rule=rule)
        core.observer.matchEnded(said(N_("{peer} broke a rule: {rule}"), peer=core.peerNick, rule=rule))
        core.close()

    judging.upon(Match.localMove).loop().returns(None)

    # -- our turn -----------------------------------------------------------------

    @myTurn.upon(Match.localMove).to(judging)
    def playMine(inputs: Match, core: MatchCore, position: int) -> None:
        core.playMine(inputs, position)

    @myTurn.upon(Match.remoteMove).to(judging)
    def outOfTurn(inputs: Match, core: MatchCore, position: int) -> None:
        if core.series.untouched():
            # The game is ours to start, but the peer moved first: the
            # original inviter ignores MSG07 1, and the original moves first
            # after winning or after a draw it started. Nothing is on the
            # board yet, so following it keeps one well-defined game.
            tolerance.followTheirStart(core, byMove=True)
            tolerance.playTheirs(inputs, core, position)
            return
        text = N_("MSG08 {position} arrived out of turn (text MSG08: only the player who has the turn moves)")
        inputs._broken(said(text, position=position))

    @myTurn.upon(Match.remoteNewGame).to(judging)
    def newGameOnMyTurn(inputs: Match, core: MatchCore) -> None:
        if core.series.gameNumber > 1 and core.series.untouched():
            tolerance.followTheirStart(core, byMove=False)
            inputs._theirTurn()
        elif core.series.untouched():
            tolerance.strayNewGame(core)
            inputs._myTurn()
        else:
            tolerance.voidAndFollow(inputs, core)

    @myTurn.upon(Match.startReceived).to(judging)
    def startOnMyTurn(inputs: Match, core: MatchCore, who: int) -> None:
        if core.isInvitee:
            tolerance.ignoreInviterStart(core, who)
            inputs._myTurn()
            return
        tolerance.restartOrBreak(inputs, core, who)

    # -- our first move of a game, held ---------------------------------------------

    @myStartHeld.upon(Match.localMove).loop()
    def keepFirstMove(inputs: Match, core: MatchCore, held: HeldMove, position: int) -> None:
        held.move = position
        text = N_("{position} will be played in a moment, once {peer} has closed the last game")
        core.observer.notice(said(text, position=position, peer=core.peerNick))

    @myStartHeld.upon(Match.remoteMove).to(judging)
    def theyStartedFirst(inputs: Match, core: MatchCore, held: HeldMove, position: int) -> None:
        held.cancel()
        tolerance.followTheirStart(core, byMove=True)
        tolerance.playTheirs(inputs, core, position)

    @myStartHeld.upon(Match.remoteNewGame).to(judging)
    def theyClaimTheStart(inputs: Match, core: MatchCore, held: HeldMove) -> None:
        held.cancel()
        tolerance.followTheirStart(core, byMove=False)
        inputs._theirTurn()

    @myStartHeld.upon(Match._graceOver).to(judging)
    def startNow(inputs: Match, core: MatchCore, held: HeldMove) -> None:
        held.cancel()
        if held.unannounced:
            core.send(NewGame())
        if held.move is None:
            inputs._myTurn()
            return
        core.playMine(inputs, held.move)

    # -- their turn ----------------------------------------------------------------

    @theirTurn.upon(Match.remoteMove).to(judging)
    def playTheirs(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
        timers.cancel()
        tolerance.playTheirs(inputs, core, position)

    @theirTurn.upon(Match.startReceived).to(judging)
    def startOnTheirTurn(inputs: Match, core: MatchCore, timers: Timers, who: int) -> None:
        timers.cancel()
        if core.isInvitee:
            tolerance.ignoreInviterStart(core, who)
            inputs._theirTurn()
            return
        tolerance.restartOrBreak(inputs, core, who)

    @theirTurn.upon(Match.remoteNewGame).to(judging)
    def newGameOnTheirTurn(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        if core.series.ourFirstMoveOnly():
            tolerance.newGameAfterOurFirstMove(core)
        elif core.series.untouched():
            tolerance.strayNewGame(core)
        else:
            tolerance.voidAndFollow(inputs, core)
            return
        inputs._resume()

    # -- between games ------------------------------------------------------------

    @theirNewGame.upon(Match.remoteNewGame).to(theirTurn)
    @theirDrawStart.upon(Match.remoteNewGame).to(theirTurn)
    def theyStart(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        core.newGame(iStart=False)

    @theirNewGame.upon(Match.remoteMove).to(judging)
    @theirDrawStart.upon(Match.remoteMove).to(judging)
    def implicitNewGame(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
        timers.cancel()
        core.observer.notice(
            said(N_("{peer} moved without sending MSG09 first (text MSG09); accepted"), peer=core.peerNick)
        )
        core.newGame(iStart=False)
        tolerance.playTheirs(inputs, core, position)

    @theirDrawStart.upon(Match._graceOver).to(myTurn)
    def startAfterSilentDraw(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        core.startNextGame()
        text = N_(
            "{peer} did not start game {n} within {grace:g} s after the draw (the original program never does);"
            " you start it (MSG09 sent)"
        )
        core.observer.notice(said(text, peer=core.peerNick, n=core.series.gameNumber, grace=core.settings.startGrace))
        core.observer.yourTurn(core.series.board)

    @myStartHeld.upon(Match.startReceived).loop()  # last: a behaviour taking Timers also takes its HeldMove
    @theirNewGame.upon(Match.startReceived).loop()
    @theirDrawStart.upon(Match.startReceived).loop()
    def startBetweenGames(inputs: Match, core: MatchCore, timers: Timers, who: int) -> None:
        tolerance.ignoreStartBetweenGames(core, who)

    # -- while waiting for the peer --------------------------------------------------

    for waitingForPeer in (theirTurn, theirNewGame, theirDrawStart):

        @waitingForPeer.upon(Match.localMove).loop()
        def notMyTurn(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
            tolerance.notYourTurn(core)

    @theirTurn.upon(Match._replyUnanswered).loop()
    def replyUnanswered(inputs: Match, core: MatchCore, timers: Timers) -> None:
        tolerance.replyUnanswered(core)

    @theirTurn.upon(Match._stillWaiting).loop()
    @theirNewGame.upon(Match._stillWaiting).loop()
    def stillWaiting(inputs: Match, core: MatchCore, timers: Timers) -> None:
        series, limit = core.series, core.settings.peer
        if series.board.outcome is None:
            text = N_(
                "still waiting for a move from {peer} ({half:g} s);"
                " velhanet gives up the match after {limit:g} s (--peer-timeout)"
            )
        else:
            text = N_(
                "still waiting for the start of game {n} (MSG09) from {peer} ({half:g} s);"
                " velhanet gives up the match after {limit:g} s (--peer-timeout)"
            )
        core.observer.notice(said(text, peer=core.peerNick, n=series.gameNumber + 1, half=limit / 2, limit=limit))

    @waitingForStart.upon(Match._silent).to(finished)
    def noStart(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        core.log.warn(_("no MSG07 from {peer} within {s} s"), peer=core.peerNick, s=core.settings.start)
        text = N_(
            "{peer} sent no MSG07 within {s:g} s of our connection"
            " (text MSG07: the invitee sends it once the inviter has connected); match given up (MSG10 sent)"
        )
        core.giveUp(said(text, peer=core.peerNick, s=core.settings.start))

    @theirTurn.upon(Match._silent).to(finished)
    @theirNewGame.upon(Match._silent).to(finished)
    def silentPeer(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        if core.series.board.outcome is None:
            text = N_("{peer} sent no move for {s:g} s; match given up (MSG10 sent) (--peer-timeout to wait longer)")
        else:
            text = N_("{peer} sent no MSG09 for {s:g} s; match given up (MSG10 sent) (--peer-timeout to wait longer)")
        core.log.warn(_("{peer} silent for {s} s; giving up"), peer=core.peerNick, s=core.settings.peer)
        core.giveUp(said(text, peer=core.peerNick, s=core.settings.peer))

    # -- endings ----------------------------------------------------------------------

    for active in (connected, myTurn):
        active.upon(Match.remoteGiveUp).to(finished)(tolerance.peerGaveUp)
        active.upon(Match.peerLeft).to(finished)(tolerance.peerLeft)
        active.upon(Match.localQuit).to(finished)(tolerance.localQuit)
        active.upon(Match.connectionLost).to(finished)(tolerance.connectionLost)

    def peerGaveUp(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        tolerance.peerGaveUp(inputs, core)

    def peerLeft(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        tolerance.peerLeft(inputs, core)

    def giveUp(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        tolerance.localQuit(inputs, core)

    def lost(inputs: Match, core: MatchCore, timers: Timers, reason: str) -> None:
        timers.cancel()
        tolerance.connectionLost(inputs, core, reason)

    for waiting in waitingStates:
        waiting.upon(Match.remoteGiveUp).to(finished)(peerGaveUp)
        waiting.upon(Match.peerLeft).to(finished)(peerLeft)
        waiting.upon(Match.localQuit).to(finished)(giveUp)
        waiting.upon(Match.connectionLost).to(finished)(lost)

    return indexed(builder.build())


MatchMachine = _buildMatch()
