"""``velha --web``: the match's games reported to the spectators' site, everything else to the front end.

A L{MatchObserver} between the match and the front end: the match already
reports each game started, each move and each end (``room.py``), so the
site is fed without a new call in the machine. Each game of the series is
its own entry on the site.
"""

from __future__ import annotations

from velhanet.games.kinarow import KInARowState, squareName
from velhanet.i18n import _
from velhanet.velha.room import MatchObserver
from velhanet.watching import GameWatcher, WatchedGame


class _Board:
    """One game's position for the site: a finished game keeps its last one."""

    def __init__(self, state: KInARowState) -> None:
        self.state = state

    def __call__(self) -> KInARowState:
        return self.state


class SpectatedMatch:
    """Tells ``frontEnd`` everything, and ``watcher`` each game of the series."""

    def __init__(self, frontEnd: MatchObserver, watcher: GameWatcher, me: str, peer: str) -> None:
        self.frontEnd = frontEnd
        self.watcher = watcher
        self.me, self.peer = me, peer
        self.board: _Board | None = None
        self.game: WatchedGame | None = None

    def _follow(self, state: KInARowState) -> None:
        if self.board is not None:
            self.board.state = state

    def _close(self, why: str) -> None:
        if self.game is not None:
            self.game.ended(why)
            self.game = None

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self._close(_("restarted"))
        self.board = _Board(board)
        players = (self.me, self.peer) if iStart else (self.peer, self.me)  # who starts (X) first
        gameType = _("tic-tac-toe, game {n}").format(n=gameNumber)
        self.game = self.watcher.started("velha", gameType, players, self.board)
        self.frontEnd.gameStarted(gameNumber, iStart, board)

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        self._follow(board)
        if self.game is not None:
            # position 1-9 (row by row from the top left) as the site's board labels the square: 5 is b2
            square = squareName(board.rules, (position - 1) % 3, (position - 1) // 3)
            self.game.moved(f"{self.me if byMe else self.peer}: {square}")
        self.frontEnd.moved(board, position, byMe)

    def yourTurn(self, board: KInARowState) -> None:
        self.frontEnd.yourTurn(board)

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        self._follow(board)
        if result == "draw":
            text = _("draw (series {me} {mine}, {peer} {theirs})")
        else:
            text = _("{winner} wins (series {me} {mine}, {peer} {theirs})")
        winner = self.me if result == "won" else self.peer
        self._close(text.format(winner=winner, me=self.me, mine=score[0], peer=self.peer, theirs=score[1]))
        self.frontEnd.gameOver(result, board, score)

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self.frontEnd.seriesOver(result, score)

    def matchEnded(self, reason: str) -> None:
        self._close(reason)
        self.frontEnd.matchEnded(reason)

    def notice(self, text: str) -> None:
        self.frontEnd.notice(text)
