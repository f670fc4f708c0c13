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
(``velhanet.velha.matchcore``), armed on entry and cancelled on every way
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

from automat import TypeMachine, TypeMachineBuilder

from velhanet.indexedmachine import indexed
from velhanet.velha import tolerance
from velhanet.velha.matchcore import (
    PEER_TIMEOUT,
    START_GRACE,
    START_TIMEOUT,
    HeldMove,
    Match,
    MatchCore,
    MatchObserver,
    MatchSettings,
    Timers,
    deliver,
    holdFirstMove,
    timersAwaitingDrawStart,
    timersAwaitingPeer,
    timersAwaitingStart,
)
from velhanet.velha.series import MAX_GAMES, WINS_NEEDED, placeToPosition, positionToPlace
from velhanet.velha.wire import MatchStart, NewGame

__all__ = [
    "MAX_GAMES",
    "PEER_TIMEOUT",
    "START_GRACE",
    "START_TIMEOUT",
    "WINS_NEEDED",
    "Match",
    "MatchCore",
    "MatchMachine",
    "MatchObserver",
    "MatchSettings",
    "deliver",
    "placeToPosition",
    "positionToPlace",
]


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
        inputs._broken("MSG08 arrived before MSG07 (text MSG07: the game starts with it)")

    @waitingForStart.upon(Match.remoteNewGame).to(judging)
    def newGameBeforeStart(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        inputs._broken("MSG09 arrived before MSG07 (text MSG07: the game starts with it)")

    @waitingForStart.upon(Match.localMove).loop()
    def moveBeforeStartLocal(inputs: Match, core: MatchCore, timers: Timers, position: int) -> None:
        core.observer.notice(f"the game has not started yet: waiting for {core.peerNick}'s MSG07")

    @waitingForStart.upon(Match.supersede).to(finished)
    def superseded(inputs: Match, core: MatchCore, timers: Timers) -> bool:
        timers.cancel()
        core.log.info("match connection to {peer} superseded by a newer one", peer=core.peerNick)
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
        n = core.series.gameNumber
        if quiet:
            core.observer.notice(
                f"you start game {n}; MSG09 goes with your first move ({core.peerNick} starts such games itself)"
            )
        else:
            core.observer.notice(f"you start game {n} (MSG09 sent)")

    judging.upon(Match._resume).to(theirTurn).returns(None)

    @judging.upon(Match._theyStartNext).to(theirNewGame)
    def awaitNewGame(inputs: Match, core: MatchCore) -> None:
        core.observer.notice(f"{core.peerNick} starts game {core.series.gameNumber + 1}")

    @judging.upon(Match._theyStartAfterDraw).to(theirDrawStart)
    def awaitDrawStart(inputs: Match, core: MatchCore) -> None:
        n = core.series.gameNumber + 1
        core.observer.notice(f"{core.peerNick} starts game {n} (after a draw, who did not start)")

    @judging.upon(Match._seriesOver).to(finished)
    def seriesOver(inputs: Match, core: MatchCore) -> None:
        core.observer.seriesOver(core.series.seriesResult(), core.series.scoreboard())
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
        core.playMine(inputs, position)

    @myTurn.upon(Match.remoteMove).to(judging)
    def outOfTurn(inputs: Match, core: MatchCore, position: int) -> None:
        if core.series.untouched():
            # The game is ours to start, but the peer moved first: the
            # original inviter ignores MSG07 1, and the original moves first
            # after winning or after a draw it started. Nothing is on the
            # board yet, so following it keeps one well-defined game.
            tolerance.followTheirStart(core, "made the first move")
            tolerance.playTheirs(inputs, core, position)
            return
        inputs._broken(f"MSG08 {position} arrived out of turn (text MSG08: only the player who has the turn moves)")

    @myTurn.upon(Match.remoteNewGame).to(judging)
    def newGameOnMyTurn(inputs: Match, core: MatchCore) -> None:
        if core.series.gameNumber > 1 and core.series.untouched():
            tolerance.followTheirStart(core, "sent MSG09 for the start")
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
        core.observer.notice(f"{position} will be played in a moment, once {core.peerNick} has closed the last game")

    @myStartHeld.upon(Match.remoteMove).to(judging)
    def theyStartedFirst(inputs: Match, core: MatchCore, held: HeldMove, position: int) -> None:
        held.cancel()
        tolerance.followTheirStart(core, "made the first move")
        tolerance.playTheirs(inputs, core, position)

    @myStartHeld.upon(Match.remoteNewGame).to(judging)
    def theyClaimTheStart(inputs: Match, core: MatchCore, held: HeldMove) -> None:
        held.cancel()
        tolerance.followTheirStart(core, "sent MSG09 for the start")
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
        core.observer.notice(f"{core.peerNick} moved without sending MSG09 first (text MSG09); accepted")
        core.newGame(iStart=False)
        tolerance.playTheirs(inputs, core, position)

    @theirDrawStart.upon(Match._graceOver).to(myTurn)
    def startAfterSilentDraw(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        core.startNextGame()
        core.observer.notice(
            f"{core.peerNick} did not start game {core.series.gameNumber} within {core.settings.startGrace:g} s"
            " after the draw (the original program never does); you start it (MSG09 sent)"
        )
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
        series = core.series
        what = "a move" if series.board.outcome is None else f"the start of game {series.gameNumber + 1} (MSG09)"
        core.observer.notice(
            f"still waiting for {what} from {core.peerNick} ({core.settings.peer / 2:g} s);"
            f" velhanet gives up the match after {core.settings.peer:g} s (--peer-timeout)"
        )

    @waitingForStart.upon(Match._silent).to(finished)
    def noStart(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        core.log.warn("no MSG07 from {peer} within {s} s", peer=core.peerNick, s=core.settings.start)
        core.giveUp(
            f"{core.peerNick} sent no MSG07 within {core.settings.start:g} s of our connection"
            " (text MSG07: the invitee sends it once the inviter has connected); match given up (MSG10 sent)"
        )

    @theirTurn.upon(Match._silent).to(finished)
    @theirNewGame.upon(Match._silent).to(finished)
    def silentPeer(inputs: Match, core: MatchCore, timers: Timers) -> None:
        timers.cancel()
        what = "no move" if core.series.board.outcome is None else "no MSG09"
        core.log.warn("{peer} silent for {s} s; giving up", peer=core.peerNick, s=core.settings.peer)
        core.giveUp(
            f"{core.peerNick} sent {what} for {core.settings.peer:g} s; match given up (MSG10 sent)"
            " (--peer-timeout to wait longer)"
        )

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
