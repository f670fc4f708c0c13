"""What the match machine is given and holds: its inputs, the observer it reports to, its
settings, its core (collaborators and the series) and the timers its waiting states own.

The machine itself is in ``velhanet.velha.room``. Everything it talks to is
here and small on purpose, so that a test can stand in for each part with a
recording fake (``tests/velha_match_fakes.py``) and drive it with a
``twisted.internet.task.Clock``.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger

from velhanet.games.kinarow import KInARowState
from velhanet.velha.series import AfterGame, Series
from velhanet.velha.wire import GiveUp, MatchStart, Move, NewGame, StreamMessage

START_TIMEOUT = 30.0
"""Seconds the inviter waits for MSG07 after connecting (the original invitee gives up after 30 s)."""

PEER_TIMEOUT = 120.0
"""Seconds of silence while the peer owes a move or MSG09 before velhanet gives up with MSG10 (0: wait forever)."""

UNANSWERED_WARNING = 20.0
"""Seconds without an answer to our reply to the peer's first move of a game after one it ended
before the user is told that the original program may have stopped reading (docs/velha.md)."""

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
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.velha.match"))
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
            self.observer.notice(f"not played: {problem}")
            inputs._myTurn()
            return
        self.send(Move(position))
        self.decideAfterMove(inputs)

    def decideAfterMove(self, inputs: Match) -> None:
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
