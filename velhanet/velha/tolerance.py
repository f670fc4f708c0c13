"""How the match follows a peer that departs from the text, and the endings every state shares.

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
- its reader thread writes every message it reads into a Swing table while
  its UI thread opens the result dialog of a game it ended: a message read
  at that instant has crashed its UI thread, and once left its reader dead.
  Once it has shown that it starts such games itself, our MSG09 waits with
  our first move (``Series.quietStart``), and a reply of ours to its first
  move that stays unanswered for 20 s is explained to the user;
- as inviter it ignores MSG07 ``1`` and moves first; as inviter after
  having once been invitee it sends a MSG07 of its own: the first is
  followed while the board is empty, the second ignored;
- when it answered our MSG04 twice it re-sends MSG07 on the newest
  connection, resetting its series: followed while game 1 is untouched.

Each function here is a behaviour (or part of one) of several states of the
match machine in ``velhanet.velha.room``: it changes the core, tells the
user, and, where the machine goes on judging, feeds exactly one input.
"""

from __future__ import annotations

import typing

from twisted.logger import Logger

from velhanet.i18n import N_, _
from velhanet.velha.said import said
from velhanet.velha.series import Series
from velhanet.velha.wire import MatchStart

UNANSWERED_WARNING = 20.0
"""Seconds without an answer to our reply to the peer's first move of a game after one it ended
before the user is told that the original program may have stopped reading (docs/velha.md)."""


class Judge(typing.Protocol):
    """The match machine's private inputs that say what follows (L{velhanet.velha.room.Match} has them)."""

    def _myTurn(self) -> None: ...

    def _theirTurn(self) -> None: ...

    def _iStartNext(self) -> None: ...

    def _theyStartNext(self) -> None: ...

    def _theyStartAfterDraw(self) -> None: ...

    def _seriesOver(self) -> None: ...

    def _broken(self, rule: str) -> None: ...


class Notices(typing.Protocol):
    """What the rules here tell the user (the match's observer)."""

    def notice(self, text: str) -> None: ...

    def matchEnded(self, reason: str) -> None: ...


class PeerLimit(typing.Protocol):
    peer: float


class FollowedMatch(typing.Protocol):
    """What these rules read and change of a match in progress (L{velhanet.velha.room.MatchCore}).

    The machine imports this module, never the other way round: the rules
    see the match only through this narrow interface.
    """

    peerNick: str
    series: Series
    log: Logger

    @property
    def observer(self) -> Notices: ...

    @property
    def settings(self) -> PeerLimit: ...

    def close(self) -> None: ...

    def giveUp(self, why: str) -> None: ...

    def newGame(self, iStart: bool) -> None: ...

    def restartGame(self, iStart: bool) -> None: ...

    def apply(self, position: int, byMe: bool) -> str | None: ...

    def replayWithoutOurFirstMove(self) -> None: ...

    def decideAfterMove(self, inputs: Judge) -> None: ...


# -- endings --------------------------------------------------------------------------


def peerGaveUp(inputs: Judge, core: FollowedMatch) -> None:
    core.observer.matchEnded(said(N_("{peer} gave up (MSG10): you win the series"), peer=core.peerNick))
    core.close()


def peerLeft(inputs: Judge, core: FollowedMatch) -> None:
    core.observer.matchEnded(said(N_("{peer} left (MSG03) in the middle of the match"), peer=core.peerNick))
    core.close()


def connectionLost(inputs: Judge, core: FollowedMatch, reason: str) -> None:
    core.observer.matchEnded(said(N_("the connection to {peer} was lost: {reason}"), peer=core.peerNick, reason=reason))


def localQuit(inputs: Judge, core: FollowedMatch) -> None:
    core.giveUp(said(N_("you gave up the series (MSG10 sent)")))


# -- what the peer did, and how it is followed -----------------------------------------


def ignoreInviterStart(core: FollowedMatch, who: int) -> None:
    core.log.info(_("{peer} sent MSG07 {who} although it invited us; ignored"), peer=core.peerNick, who=who)
    text = N_(
        "{peer} sent a MSG07 of its own although it invited us (text MSG07: the invitee sends it;"
        " the original program does this once it has been invited itself); ignored"
    )
    core.observer.notice(said(text, peer=core.peerNick))


def ignoreStartBetweenGames(core: FollowedMatch, who: int) -> None:
    text = N_("{peer} sent MSG07 {who} between games (text MSG07: once, at the start); ignored")
    core.observer.notice(said(text, peer=core.peerNick, who=who))


def notYourTurn(core: FollowedMatch) -> None:
    core.observer.notice(said(N_("not your turn: waiting for {peer}"), peer=core.peerNick))


def strayNewGame(core: FollowedMatch) -> None:
    n = core.series.gameNumber
    core.log.info(_("{peer} sent MSG09 in the middle of game {n}; ignored"), peer=core.peerNick, n=n)
    text = N_(
        "{peer} sent MSG09 although game {n} had already begun"
        " (text MSG09: only the loser of the last game sends it); ignored"
    )
    core.observer.notice(said(text, peer=core.peerNick, n=n))


def followTheirStart(core: FollowedMatch, byMove: bool) -> None:
    """The peer started a game that was ours to start (with its first move, or with MSG09); it becomes its game."""
    core.series.peerStartsAnyway = True
    if byMove:
        text = N_(
            "{peer} made the first move of game {n} although it was ours to start"
            " (text MSG07/MSG09; the original program does this); following it"
        )
    else:
        text = N_(
            "{peer} sent MSG09 for the start of game {n} although it was ours to start"
            " (text MSG07/MSG09; the original program does this); following it"
        )
    core.observer.notice(said(text, peer=core.peerNick, n=core.series.gameNumber))
    core.restartGame(iStart=False)


def voidAndFollow(inputs: Judge, core: FollowedMatch) -> None:
    """A MSG09 in the middle of a game: the peer has finished a game we are still playing.

    The original program loses a move that reaches it while its result
    dialog is open (a person slower than ``startGrace``); from then on its
    board differs from ours, and its MSG09 shows it. The game is void (no
    one scores it) and the next one starts with the peer, as on its side.
    """
    series = core.series
    series.peerStartsAnyway = True
    n = series.gameNumber
    core.log.warn(_("{peer} started a new game during game {n}: boards diverged"), peer=core.peerNick, n=n)
    text = N_(
        "{peer} sent MSG09 during game {n}: it has finished a game we are still playing"
        " (the original program loses a move that arrives while its result dialog is open). Game"
        " {n} is void; the next game starts with {peer}"
    )
    core.observer.notice(said(text, peer=core.peerNick, n=n))
    if series.lastGame():
        inputs._seriesOver()
        return
    core.newGame(iStart=False)
    inputs._theirTurn()


def newGameAfterOurFirstMove(core: FollowedMatch) -> None:
    """A MSG09 when only our first move of a game after the first is on the board: crossed, or lost."""
    series = core.series
    n = series.gameNumber
    if not series.peerEndedLastGame:
        # Our move ended the last game: the original's result dialog
        # blocked its reader, so our MSG09 and first move were delayed,
        # not lost; its own MSG09 crossed them. It has our move.
        core.log.info(_("{peer}'s MSG09 crossed our first move of game {n}"), peer=core.peerNick, n=n)
        text = N_(
            "{peer} sent MSG09 after our first move of game {n}; it crossed ours (the"
            " original program reads nothing while its result dialog is open) and it has our move: ignored"
        )
        core.observer.notice(said(text, peer=core.peerNick, n=n))
        return
    # Our first move reached the original while its result dialog
    # was open and was lost; its MSG09 says it starts this game now.
    series.peerStartsAnyway = True
    text = N_(
        "{peer} sent MSG09 after our first move of game {n}: it never saw that move"
        " ({move}; the original program loses a move that arrives while its result dialog"
        " is open). The game restarts with its first move"
    )
    core.observer.notice(said(text, peer=core.peerNick, n=n, move=series.board.lastMove))
    core.restartGame(iStart=False)


def playTheirs(inputs: Judge, core: FollowedMatch, position: int) -> None:
    """The peer's move, after putting right our first move if it shows that one was lost."""
    if core.series.firstMoveLost(position):
        core.series.peerStartsAnyway = True
        text = N_(
            "{peer} played {position}, where our first move of game {n} is: that"
            " move never reached it (the original program loses a move that arrives while its result dialog is"
            " open). The game goes on as {peer} sees it: it started it, without our first move"
        )
        core.observer.notice(said(text, peer=core.peerNick, position=position, n=core.series.gameNumber))
        core.replayWithoutOurFirstMove()
    problem = core.apply(position, byMe=False)
    if problem is not None:
        inputs._broken(problem)
        return
    core.decideAfterMove(inputs)


def replyUnanswered(core: FollowedMatch) -> None:
    """20 s without an answer to our reply to the peer's first move of a game after one it ended."""
    peer, position = core.peerNick, core.series.moves[-1][0]
    core.log.warn(_("no answer from {peer} to our reply to its first move for 20 s"), peer=peer)
    peerLimit = core.settings.peer
    if peerLimit > 0:
        limit = said(N_("after {s:g} s (--peer-timeout)"), s=peerLimit)
    else:
        limit = said(N_("never (--peer-timeout 0)"))
    text = N_(
        "no answer to your move {position} for {s:g} s. If {peer} is the original Java program,"
        " it may have stopped reading: its reader can die when a message arrives as its result dialog opens,"
        " and it then shows its own first move, waits for yours and never moves again. velhanet gives up"
        " {limit}; type quit to end the match now"
    )
    core.observer.notice(said(text, position=position, s=UNANSWERED_WARNING, peer=peer, limit=limit))


def restartOrBreak(inputs: Judge, core: FollowedMatch, who: int) -> None:
    """Inviter: a further MSG07. Follow it while game 1 is untouched, else the match ends."""
    if core.series.gameNumber == 1 and core.series.untouched():
        text = N_(
            "{peer} sent MSG07 again before anyone moved (the original program does when it"
            " answered our invitation twice); following the newest one"
        )
        core.observer.notice(said(text, peer=core.peerNick))
        core.restartGame(iStart=who == MatchStart.INVITER_STARTS)
        core.decideAfterMove(inputs)
        return
    inputs._broken(
        said(N_("a second MSG07 arrived after the game had begun (text MSG07: it is sent once, at the start)"))
    )
