"""Two front ends of the same player interface: a console for people, a bot for tests.

Neither knows about sockets: both implement L{FrontEnd} (what the peer
tells the user) and call the peer's commands (``invite``, ``answer``,
``play``, ``quitMatch``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.protocols.basic import LineReceiver

from velhanet.bots.tictactoe import PerfectBot
from velhanet.games.kinarow import KInARowState
from velhanet.tracing import Tracer, arrow
from velhanet.velha.room import placeToPosition

if TYPE_CHECKING:
    from velhanet.velha.peer import Peer

SYMBOLS = ("X", "O")


def renderBoard(board: KInARowState) -> str:
    """The board as three rows; empty cells show their position number."""
    rows = []
    for y in range(3):
        cells = []
        for x in range(3):
            owner = board.stoneAt(x, y)
            cells.append(str(y * 3 + x + 1) if owner is None else SYMBOLS[owner])
        rows.append(" " + " | ".join(cells))
    return "\n---+---+---\n".join(rows)


class BotFrontEnd:
    """Accepts what the policy says and plays perfect tic-tac-toe after a short pause.

    The pause (``moveDelay``) matters: the reference program mishandles a
    reply that arrives within milliseconds of its own move.
    """

    log = Logger()

    def __init__(self, clock: IReactorTime, moveDelay: float = 0.5, seed: int | None = None) -> None:
        self.clock = clock
        self.moveDelay = moveDelay
        self.bot = PerfectBot(seed)
        self.peer: Peer | None = None
        self._pending: IDelayedCall | None = None

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    def _cancelPending(self) -> None:
        if self._pending is not None and self._pending.active():
            self._pending.cancel()
        self._pending = None

    def _play(self, board: KInARowState) -> None:
        self._pending = None
        if self.peer is not None:
            self.peer.play(placeToPosition(self.bot.chooseMove(board)))

    # FrontEnd
    def peerOnline(self, nick: str, address: str) -> None:
        self.log.info("{nick} is online ({address})", nick=nick, address=address)

    def peerOffline(self, nick: str, why: str) -> None:
        self.log.info("{nick} went offline: {why}", nick=nick, why=why)

    def invitationReceived(self, nick: str) -> None:
        if self.peer is not None:
            self.peer.answer(True, nick)

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None:
        self.log.info("invitation with {nick}: {outcome}: {detail}", nick=nick, outcome=outcome, detail=detail)

    def matchStarted(self, opponent: str) -> None:
        self.log.info("match against {opponent} begins", opponent=opponent)

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.log.info("game {n}: {who}", n=gameNumber, who="we start" if iStart else "they start")

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        self.log.info("{who} played {position}", who="we" if byMe else "they", position=position)

    def yourTurn(self, board: KInARowState) -> None:
        self._cancelPending()
        self._pending = self.clock.callLater(self.moveDelay, self._play, board)

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        self.log.info("game {result}; series {a}-{b}", result=result, a=score[0], b=score[1])

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self._cancelPending()
        self.log.info("series {result} {a}-{b}", result=result, a=score[0], b=score[1])

    def matchEnded(self, reason: str) -> None:
        self._cancelPending()
        self.log.info("match ended: {reason}", reason=reason)

    def notice(self, text: str) -> None:
        self.log.info("{text}", text=text)


HELP = """\
commands:
  who            list the players online
  invite NICK    invite NICK to a best-of-5
  yes / no       answer an invitation
  1 .. 9         play that cell (numbered row by row)
  quit           give up the running match (MSG10)
  exit           leave velhanet (Ctrl-D too)
  help           this text"""


class ConsoleFrontEnd(LineReceiver):
    """A line-oriented terminal UI on standard input/output.

    Everything it prints goes through its transport (never ``print``, which
    twistd captures into the log), so logs, kept in a file, never garble the
    board.
    """

    delimiter = b"\n"

    def __init__(self, exit: Callable[[], None]) -> None:
        self.peer: Peer | None = None
        self.exit = exit
        self.opponent: str | None = None
        self.mySymbol = "X"

    def attach(self, peer: Peer) -> None:
        self.peer = peer

    promptShown = False

    def say(self, text: str) -> None:
        """Print a line; if the prompt is showing, print above it and show it again."""
        if self.transport is None:
            return
        clear = b"\r\x1b[K" if self.promptShown else b""
        self.transport.write(clear + text.encode("utf-8", "replace") + b"\n")
        if self.promptShown:
            self.transport.write(b"> ")

    def prompt(self) -> None:
        if self.transport is not None and not self.promptShown:
            self.promptShown = True
            self.transport.write(b"> ")

    def connectionMade(self) -> None:
        assert self.peer is not None
        self.say(f"velhanet JogoVelha peer '{self.peer.nick}'. Type 'help' for commands.")
        self.prompt()

    def connectionLost(self, reason: object = None) -> None:
        self.exit()

    def lineReceived(self, line: bytes) -> None:
        assert self.peer is not None
        self.promptShown = False  # the user's Enter moved the cursor to a new line
        words = line.decode("utf-8", "replace").split()
        problem: str | None = None
        if not words:
            pass
        elif words[0] == "help":
            self.say(HELP)
        elif words[0] == "who":
            entries = list(self.peer.roster)
            self.say("\n".join(f"  {e.nick} ({e.address})" for e in entries) or "  nobody else is online yet")
        elif words[0] == "invite":
            if len(words) != 2:
                problem = "usage: invite NICK (type 'who' to see who is online)"
            else:
                problem = self.peer.invite(words[1])
                if problem is None:
                    self.say(f"inviting {words[1]} ...")
        elif words[0] in ("yes", "y", "no", "n"):
            problem = self.peer.answer(words[0].startswith("y"))
        elif words[0].isdigit() and len(words) == 1:
            problem = self.peer.play(int(words[0]))
        elif words[0] == "quit":
            problem = self.peer.quitMatch()
        elif words[0] == "exit":
            self.exit()
            return
        else:
            problem = f"unknown command {words[0]!r}; type 'help'"
        if problem:
            self.say(problem)
        self.prompt()

    def tracer(self, channel: str) -> Tracer:
        """``--trace`` on the console: each message of ``channel`` (udp, tcp) as one line above the prompt."""

        def trace(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
            self.say(f"[{channel} {arrow(direction)} {peer}] {raw!r}  {decoded}")

        return trace

    # FrontEnd
    def peerOnline(self, nick: str, address: str) -> None:
        self.say(f"* {nick} is online ({address})")

    def peerOffline(self, nick: str, why: str) -> None:
        self.say(f"* {nick} is offline: {why}")

    def invitationReceived(self, nick: str) -> None:
        self.say(f"* {nick} invites you to a best-of-5. Accept? (yes/no)")
        self.prompt()

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None:
        self.say(f"* invitation with {nick}: {detail}")

    def matchStarted(self, opponent: str) -> None:
        self.opponent = opponent
        self.say(f"* match against {opponent}: best of 5, first to 3 wins")

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.mySymbol = "X" if iStart else "O"
        who = "you start" if iStart else f"{self.opponent} starts"
        self.say(f"* game {gameNumber}: {who}; you play {self.mySymbol}")

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        who = "you" if byMe else self.opponent
        self.say(f"{who} played {position}\n{renderBoard(board)}")

    def yourTurn(self, board: KInARowState) -> None:
        if board.moveCount == 0:
            self.say(renderBoard(board))
        self.say(f"your move ({self.mySymbol}), 1-9:")
        self.prompt()

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        text = {"won": "you won this game", "lost": "you lost this game", "draw": "this game is a draw"}[result]
        self.say(f"* {text}; series: you {score[0]} - {score[1]} {self.opponent}")

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        text = {"won": "you won the series", "lost": "you lost the series", "draw": "the series is drawn"}[result]
        self.say(f"* {text} ({score[0]}-{score[1]}). Back in the peer.")
        self.prompt()

    def matchEnded(self, reason: str) -> None:
        self.say(f"* match over: {reason}. Back in the peer.")
        self.prompt()

    def notice(self, text: str) -> None:
        self.say(f"* {text}")
