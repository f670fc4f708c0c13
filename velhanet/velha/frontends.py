"""Two front ends of the same player interface: a console for people, a bot for tests.

Neither knows about sockets: both implement L{FrontEnd} (what the peer
tells the user) and call the peer's commands (``invite``, ``answer``,
``play``, ``quitMatch``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.logger import Logger
from twisted.protocols.basic import LineReceiver

from velhanet.bots.tictactoe import PerfectBot
from velhanet.games.kinarow import KInARowState
from velhanet.i18n import N_, _
from velhanet.tracing import Tracer, arrow
from velhanet.velha.room import placeToPosition

if TYPE_CHECKING:
    from velhanet.velha.peer import Peer

SYMBOLS = ("X", "O")

BOT_GAME_OVER = {
    "won": N_("game won; series {a}-{b}"),
    "lost": N_("game lost; series {a}-{b}"),
    "draw": N_("game draw; series {a}-{b}"),
}
BOT_SERIES_OVER = {
    "won": N_("series won {a}-{b}"),
    "lost": N_("series lost {a}-{b}"),
    "draw": N_("series draw {a}-{b}"),
}
"""The bot's log lines at the end of a game and of the series, by result (``series won 3-1``: tests look for it)."""
GAME_OVER = {"won": N_("you won this game"), "lost": N_("you lost this game"), "draw": N_("this game is a draw")}
SERIES_OVER = {
    "won": N_("you won the series ({mine}-{theirs}). Back in the peer."),
    "lost": N_("you lost the series ({mine}-{theirs}). Back in the peer."),
    "draw": N_("the series is drawn ({mine}-{theirs}). Back in the peer."),
}
YES, NO = N_("yes"), N_("no")
"""The answers to an invitation, in the console's language; the English ``yes``/``y``/``no``/``n`` always work."""


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
        self.log.info(_("{nick} is online ({address})"), nick=nick, address=address)

    def peerOffline(self, nick: str, why: str) -> None:
        self.log.info(_("{nick} went offline: {why}"), nick=nick, why=why)

    def invitationReceived(self, nick: str) -> None:
        if self.peer is not None:
            self.peer.answer(True, nick)

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None:
        self.log.info(_("invitation with {nick}: {outcome}: {detail}"), nick=nick, outcome=outcome, detail=detail)

    def matchStarted(self, opponent: str) -> None:
        self.log.info(_("match against {opponent} begins"), opponent=opponent)

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.log.info(_("game {n}: we start") if iStart else _("game {n}: they start"), n=gameNumber)

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        self.log.info(_("we played {position}") if byMe else _("they played {position}"), position=position)

    def yourTurn(self, board: KInARowState) -> None:
        self._cancelPending()
        self._pending = self.clock.callLater(self.moveDelay, self._play, board)

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        self.log.info(_(BOT_GAME_OVER[result]), a=score[0], b=score[1])

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self._cancelPending()
        self.log.info(_(BOT_SERIES_OVER[result]), a=score[0], b=score[1])

    def matchEnded(self, reason: str) -> None:
        self._cancelPending()
        self.log.info(_("match ended: {reason}"), reason=reason)

    def notice(self, text: str) -> None:
        self.log.info("{text}", text=text)


HELP = N_(
    """\
commands:
  who            list the players online
  invite NICK    invite NICK to a best-of-5
  yes / no       answer an invitation
  1 .. 9         play that cell (numbered row by row)
  quit           give up the running match (MSG10)
  exit           leave velhanet (Ctrl-D too)
  help           this text"""
)


def answer(word: str) -> bool | None:
    """True for a yes (``yes``, ``y`` or the language's word), False for a no, None for anything else.

    Accents do not count: ``nao`` is ``não``, ``si`` is ``sí``.
    """
    word = plain(word)
    if word in ("yes", "y", plain(_(YES))):
        return True
    if word in ("no", "n", plain(_(NO))):
        return False
    return None


def plain(word: str) -> str:
    """``word`` without case or accents, to compare what was typed with a word of the language."""
    return "".join(c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c))


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
        self.say(_("velhanet JogoVelha peer '{nick}'. Type 'help' for commands.").format(nick=self.peer.nick))
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
            self.say(_(HELP))
        elif words[0] == "who":
            entries = list(self.peer.roster)
            self.say("\n".join(f"  {e.nick} ({e.address})" for e in entries) or "  " + _("nobody else is online yet"))
        elif words[0] == "invite":
            if len(words) != 2:
                problem = _("usage: invite NICK (type 'who' to see who is online)")
            else:
                problem = self.peer.invite(words[1])
                if problem is None:
                    self.say(_("inviting {nick} ...").format(nick=words[1]))
        elif (accept := answer(words[0])) is not None:
            problem = self.peer.answer(accept)
        elif words[0].isdigit() and len(words) == 1:
            problem = self.peer.play(int(words[0]))
        elif words[0] == "quit":
            problem = self.peer.quitMatch()
        elif words[0] == "exit":
            self.exit()
            return
        else:
            problem = _("unknown command {command!r}; type 'help'").format(command=words[0])
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
        self.say("* " + _("{nick} is online ({address})").format(nick=nick, address=address))

    def peerOffline(self, nick: str, why: str) -> None:
        self.say("* " + _("{nick} is offline: {why}").format(nick=nick, why=why))

    def invitationReceived(self, nick: str) -> None:
        self.say(
            "* " + _("{nick} invites you to a best-of-5. Accept? ({yes}/{no})").format(nick=nick, yes=_(YES), no=_(NO))
        )
        self.prompt()

    def inviteUpdate(self, nick: str, outcome: str, detail: str) -> None:
        self.say("* " + _("invitation with {nick}: {detail}").format(nick=nick, detail=detail))

    def matchStarted(self, opponent: str) -> None:
        self.opponent = opponent
        self.say("* " + _("match against {opponent}: best of 5, first to 3 wins").format(opponent=opponent))

    def gameStarted(self, gameNumber: int, iStart: bool, board: KInARowState) -> None:
        self.mySymbol = "X" if iStart else "O"
        text = (
            _("game {n}: you start; you play {symbol}")
            if iStart
            else _("game {n}: {opponent} starts; you play {symbol}")
        )
        self.say("* " + text.format(n=gameNumber, opponent=self.opponent, symbol=self.mySymbol))

    def moved(self, board: KInARowState, position: int, byMe: bool) -> None:
        text = _("you played {position}") if byMe else _("{opponent} played {position}")
        self.say(text.format(opponent=self.opponent, position=position) + "\n" + renderBoard(board))

    def yourTurn(self, board: KInARowState) -> None:
        if board.moveCount == 0:
            self.say(renderBoard(board))
        self.say(_("your move ({symbol}), 1-9:").format(symbol=self.mySymbol))
        self.prompt()

    def gameOver(self, result: str, board: KInARowState, score: tuple[int, int]) -> None:
        series = _("series: you {mine} - {theirs} {opponent}").format(
            mine=score[0], theirs=score[1], opponent=self.opponent
        )
        self.say(f"* {_(GAME_OVER[result])}; {series}")

    def seriesOver(self, result: str, score: tuple[int, int]) -> None:
        self.say("* " + _(SERIES_OVER[result]).format(mine=score[0], theirs=score[1]))
        self.prompt()

    def matchEnded(self, reason: str) -> None:
        self.say("* " + _("match over: {reason}. Back in the peer.").format(reason=reason))
        self.prompt()

    def notice(self, text: str) -> None:
        self.say(f"* {text}")
