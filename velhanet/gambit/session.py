"""The Gambit client's logic: a game as the player sees it, an automat machine between a connection and a screen.

States: ``connecting`` → ``creating`` → ``waiting`` (White, for an opponent),
or ``connecting`` → ``joining`` (→ ``refused``: an ERROR that an OK may still
follow) → ``playing`` → ``ending`` (our board says the game is over: a short
wait for the server's END) or ``resigned`` → ``over``. Each waiting state owns
its timer as its data (L{velhanet.gambit.turns}), so every way out of it cancels the timer; every call
of ``finish`` leaves the machine ``over``, where nothing said can start
anything again.

L{ClientSession} is the machine's face for ``client.py``, which wires it to TCP
and standard input; tests drive it in memory against either server, and the
machine alone with recording fakes.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IReactorTime

from velhanet.gambit.movesource import Bot, askBot
from velhanet.gambit.scoresheet import Scoresheet, winnerResult
from velhanet.gambit.screen import clientTexts, renderBoard, runCommand
from velhanet.gambit.turns import Ending, Pending, Refusal, Timed, Turns
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessgame import gameOutcome, parseMove
from velhanet.games.interfaces import IllegalMove
from velhanet.i18n import _
from velhanet.indexedmachine import indexed

JOIN_TIMEOUT = 10.0
"""The original server never answers a JOIN for an unknown id: give up after this long."""

END_GRACE = 2.0
"""Seconds to wait for the server's END once the board shows the game is over.

velhanet's server sends END at mate and at every draw; the original server
sends nothing at a draw or to the mated side, so the client ends by itself."""

ERROR_GRACE = 1.0
"""Seconds an ERROR to our JOIN waits for an OK: the original server refuses a
same-name JOIN with an ERROR and then joins the player anyway."""

DRAW_ACK = 2.0
"""Seconds to wait for the server to confirm a draw offer (the original ignores cmd 6)."""

RESIGN_GRACE = 0.3
"""Seconds our resigning END has to leave before we close the connection."""


class Session(typing.Protocol):
    """The inputs: what the server said, what the player typed, and the machine's own timers."""

    def create(self) -> None:
        "The connection is up and no game id was given: CREATE a game."

    def join(self) -> None:
        "The connection is up: JOIN the game id given."

    def ok(self, args: str) -> None:
        "OK: our game's id, our opponent's name, or a confirmed draw offer."

    def error(self, text: str) -> None:
        "ERROR from the server."

    def opponentMoved(self, args: str) -> None:
        "MOVE from the server."

    def drawOffered(self) -> None:
        "DRAW from the server: the opponent offers a draw."

    def ended(self, text: str) -> None:
        "END from the server: the game is over."

    def play(self, text: str) -> None:
        "A move typed (or chosen by the bot)."

    def offerDraw(self) -> None:
        "'draw': offer one, or accept the opponent's."

    def resign(self) -> None:
        "'resign'."

    def quit(self) -> None:
        "'quit', or the terminal closed."

    def scripted(self) -> None:
        "A line of a standard input that is not a terminal is waiting, or that input ended."

    def connectionLost(self, why: str) -> None:
        "The connection to the server closed."

    def phase(self) -> str:
        "The step of the game, as a word (each state answers; ``ending`` and ``resigned`` say ``over``)."

    def _prompt(self) -> None:
        "private: the game has just started; ask for the first move if it is ours."

    def _decided(self, verdict: str) -> None:
        "private: our own board says the game is over."

    def _botMove(self) -> None:
        "private: the bot's delay is over."

    def _drawUnconfirmed(self) -> None:
        "private: the server did not confirm our draw offer in time."

    def _joinTimedOut(self) -> None:
        "private: nobody answered our JOIN."

    def _refusalFinal(self) -> None:
        "private: no OK followed the ERROR to our JOIN."

    def _graceOver(self) -> None:
        "private: no END followed the end our board saw."

    def _resignDone(self) -> None:
        "private: our resignation had time to leave."


@dataclass
class SessionCore:
    user: str
    gameId: str | None
    send: Callable[[Message], None]
    say: Callable[[str], None]
    finish: Callable[[int], None]
    clock: IReactorTime
    bot: Bot | None = None
    botDelay: float = 0.5
    serverOptions: str = ""
    """``--host``/``--port`` as the user gave them, for the join hint."""
    colour: chess.Color = chess.WHITE
    opponent: str = ""
    board: chess.Board = field(default_factory=chess.Board)
    script: list[str] | None = None
    """Lines from a standard input that is not a terminal: played when the client is ready."""
    scriptEnded: bool = False
    drawHintGiven: bool = False
    sheet: Scoresheet = field(init=False)
    """The game's moves as a chess player writes them (``1. e4 e5``), its summary and its PGN."""
    resultOnEnd: str | None = None

    def __post_init__(self) -> None:
        self.sheet = Scoresheet(self.clock.seconds)

    def endGame(
        self, code: int, last: str | None, result: str | None = None, serverText: str | None = None, how: str = "normal"
    ) -> None:
        """Say the game in one line (and keep its PGN) if it began, then ``last``; leave with ``code``."""
        if self.opponent:
            result = result or self.resultOnEnd
            self.sheet.finish(self.say, self.user, self.opponent, self.colour, result, serverText, how)
        if last is not None:
            self.say(last)
        self.finish(code)

    def myTurn(self) -> bool:
        """Whether the board waits for our move (asked in ``playing`` only)."""
        return self.board.turn == self.colour and not self.board.is_game_over()

    def show(self) -> None:
        self.say(renderBoard(self.board, self.colour))

    def moveUser(self) -> str:
        """The ``User`` of what we send: our name, except as White against our own name.

        The original server sends a MOVE to White when its ``User`` is Black's
        name, else to Black: with both players named alike, White's moves
        would come back to White. An empty ``User`` reaches Black.
        """
        if self.colour == chess.WHITE and self.opponent == self.user:
            return ""
        return self.user


def _nextScripted(inputs: Session, core: SessionCore) -> None:
    assert core.script is not None
    if core.script:
        runCommand(inputs, core, core.script.pop(0))
    elif core.scriptEnded:
        core.say(_("Standard input has ended and it is your move: leaving the game."))
        inputs.quit()


def prompt(inputs: Session, core: SessionCore, turns: Turns) -> None:
    if not core.myTurn():
        return
    if core.bot is not None:
        turns.armBot(core.clock.callLater(core.botDelay, inputs._botMove))
    elif core.script is not None:
        _nextScripted(inputs, core)
    else:
        core.say(_("Your move:"))


def start(inputs: Session, core: SessionCore, opponent: str) -> None:
    core.opponent = opponent
    if opponent == core.user:
        core.say(_("Your opponent is also called {name}: your moves go out without a user name.").format(name=opponent))
    if core.colour == chess.WHITE:
        said = _("{opponent} joined your game {game}. You play White. Type 'help' for commands.")
        core.say(said.format(opponent=opponent, game=core.gameId))
    else:
        said = _("You joined {opponent}'s game {game}. You play Black. Type 'help' for commands.")
        core.say(said.format(opponent=opponent, game=core.gameId))
    core.show()
    core.sheet.begin()
    inputs._prompt()  # queued: runs in ``playing``, which holds the bot's timer


def playMove(inputs: Session, core: SessionCore, turns: Turns, text: str) -> None:
    if not core.myTurn():
        core.say(_("Not your turn."))
        return
    try:
        move = parseMove(core.board, text, None)
    except IllegalMove as error:
        core.say(_("Illegal: {reason}").format(reason=clientTexts().problem(error)))
        prompt(inputs, core, turns)
        return
    written = core.sheet.play(move)
    core.board.push(move)
    turns.lastSent = move
    core.send(Message(Cmd.MOVE, core.moveUser(), f"{core.gameId}:{move.uci()}"))
    core.say(_("You played {move}").format(move=written))
    if turns.theirOffer:
        turns.theirOffer = False
        core.say(_("You played on: {opponent}'s draw offer is declined.").format(opponent=core.opponent))
    core.show()
    outcome = gameOutcome(core.board)
    if outcome is not None:
        said = clientTexts().describe(outcome)
        core.say(said)
        inputs._decided(said)


def sayGameOver(core: SessionCore, text: str) -> None:
    core.endGame(0, _("GAME OVER: {text}").format(text=text or _("the game has ended")), serverText=text)


def sayLeft(core: SessionCore) -> None:
    core.endGame(0, _("Leaving the game."), winnerResult(core.colour == chess.BLACK), how="abandoned")


def sayLost(core: SessionCore, why: str, code: int) -> None:
    core.endGame(code, _("Connection to the server closed: {why}").format(why=why), "*", how="unterminated")


def outOfTurn(inputs: Session, core: SessionCore, args: str) -> None:
    core.say(_("Ignored a move from the server out of turn: {move!r}").format(move=args))


def serverSays(inputs: Session, core: SessionCore, text: str) -> None:
    core.say(_("Server: {text}").format(text=text))


def theirMove(inputs: Session, core: SessionCore, turns: Turns, args: str) -> None:
    if core.board.turn == core.colour:
        outOfTurn(inputs, core, args)
        return
    try:
        move = parseMove(core.board, args, None)
    except IllegalMove as error:
        said = _("Ignored an unreadable move from {opponent}: {reason}")
        core.say(said.format(opponent=core.opponent, reason=clientTexts().problem(error)))
        return
    written = core.sheet.play(move)
    core.board.push(move)
    turns.lastSent = None
    core.say(_("{opponent} played {move}").format(opponent=core.opponent, move=written))
    if turns.myOffer:
        turns.settleOffer()
        core.say(_("{opponent} played on: your draw offer is declined.").format(opponent=core.opponent))
    core.show()
    if core.board.is_checkmate():
        # The original server does not detect mate; its client announces it with END.
        core.say(_("Checkmate: you lost."))
        core.send(Message(Cmd.END, core.moveUser(), ""))
        inputs._decided(_("checkmate, you lost"))
        return
    outcome = gameOutcome(core.board)
    if outcome is not None:
        said = clientTexts().describe(outcome)
        core.say(said)
        inputs._decided(said)
        return
    prompt(inputs, core, turns)


def moveRefused(inputs: Session, core: SessionCore, turns: Turns, text: str) -> None:
    serverSays(inputs, core, text)
    if turns.lastSent is not None and core.board.move_stack and core.board.peek() == turns.lastSent:
        core.board.pop()
        core.sheet.undo()
        turns.lastSent = None
        core.say(_("Your move was not played."))
        prompt(inputs, core, turns)


# -- the data factories: each waiting state arms its timer on entry ---------------------


def armJoin(inputs: Session, core: SessionCore) -> Pending:
    return Pending(core.clock.callLater(JOIN_TIMEOUT, inputs._joinTimedOut))


def armRefusal(inputs: Session, core: SessionCore, text: str) -> Refusal:
    return Refusal(text, core.clock.callLater(ERROR_GRACE, inputs._refusalFinal))


def newGame(inputs: Session, core: SessionCore, args: str) -> Turns:
    """``args``: the opponent's name, which the transition into ``playing`` announces."""
    return Turns()


def armEnd(inputs: Session, core: SessionCore, verdict: str) -> Ending:
    return Ending(verdict, core.clock.callLater(END_GRACE, inputs._graceOver))


def armResign(inputs: Session, core: SessionCore) -> Pending:
    return Pending(core.clock.callLater(RESIGN_GRACE, inputs._resignDone))


def _buildSession() -> TypeMachine[Session, SessionCore]:
    builder = TypeMachineBuilder(Session, SessionCore)
    connecting = builder.state("connecting")
    creating = builder.state("creating")
    waiting = builder.state("waiting")
    over = builder.state("over")

    joining = builder.state("joining", armJoin)
    refused = builder.state("refused", armRefusal)
    playing = builder.state("playing", newGame)
    ending = builder.state("ending", armEnd)
    resigned = builder.state("resigned", armResign)

    connecting.upon(Session.phase).loop().returns("connecting")
    creating.upon(Session.phase).loop().returns("creating")
    joining.upon(Session.phase).loop().returns("joining")
    refused.upon(Session.phase).loop().returns("joining")
    waiting.upon(Session.phase).loop().returns("waiting")
    playing.upon(Session.phase).loop().returns("playing")
    ending.upon(Session.phase).loop().returns("over")
    resigned.upon(Session.phase).loop().returns("over")
    over.upon(Session.phase).loop().returns("over")

    # -- what changes nothing -----------------------------------------------------------
    afterGame = (ending, resigned, over)
    for state in (connecting, creating, joining, refused, waiting, *afterGame):
        for ignored in (Session.drawOffered, Session.resign, Session.scripted):
            state.upon(ignored).loop().returns(None)
    for state in (connecting, *afterGame):
        state.upon(Session.ok).loop().returns(None)
    for state in afterGame:
        for gone in (Session.quit, Session.connectionLost):
            state.upon(gone).loop().returns(None)
    for late in (Session.error, Session.opponentMoved, Session.ended):
        over.upon(late).loop().returns(None)

    # -- refusals ------------------------------------------------------------------------
    def notStarted(inputs: Session, core: SessionCore, text: str) -> None:
        core.say(_("The game has not started."))

    def isOver(inputs: Session, core: SessionCore, text: str) -> None:
        core.say(_("The game is over."))

    def noGame(inputs: Session, core: SessionCore) -> None:
        core.say(_("No game is running."))

    # Data states are told not to pass their data to these (``nodata``); plain states have none.
    for plain in (connecting, creating, waiting):
        plain.upon(Session.play).loop()(notStarted)
        plain.upon(Session.offerDraw).loop()(noGame)
        plain.upon(Session.opponentMoved).loop()(outOfTurn)
    for timed in (joining, refused):
        timed.upon(Session.play, nodata=True).loop()(notStarted)
        timed.upon(Session.offerDraw, nodata=True).loop()(noGame)
        timed.upon(Session.opponentMoved, nodata=True).loop()(outOfTurn)
    for after in (ending, resigned):
        after.upon(Session.play, nodata=True).loop()(isOver)
        after.upon(Session.offerDraw, nodata=True).loop()(noGame)
        after.upon(Session.opponentMoved, nodata=True).loop()(outOfTurn)
        after.upon(Session.error, nodata=True).loop()(serverSays)
    over.upon(Session.play).loop()(isOver)
    over.upon(Session.offerDraw).loop()(noGame)
    for plain in (connecting, waiting):
        plain.upon(Session.error).loop()(serverSays)
    refused.upon(Session.error, nodata=True).loop()(serverSays)

    # -- into a game ---------------------------------------------------------------------
    @connecting.upon(Session.create).to(creating)
    def create(inputs: Session, core: SessionCore) -> None:
        core.colour = chess.WHITE
        core.send(Message(Cmd.CREATE, core.user, ""))

    @connecting.upon(Session.join).to(joining)
    def join(inputs: Session, core: SessionCore) -> None:
        core.colour = chess.BLACK
        core.say(_("Joining game {game} as {user} ...").format(game=core.gameId, user=core.user))
        core.send(Message(Cmd.JOIN, core.user, core.gameId or ""))

    @creating.upon(Session.ok).to(waiting)
    def created(inputs: Session, core: SessionCore, args: str) -> None:
        core.gameId = args
        core.say(_("Game {game} created; you play White. Tell your opponent to run:").format(game=args))
        name = _("NAME")  # in a command line the reader types: "gambit-client --user NAME"
        core.say(f"    gambit-client --user {name} --game {args}{core.serverOptions}")
        core.say(_("Waiting for your opponent ..."))

    @creating.upon(Session.error).to(over)
    def createRefused(inputs: Session, core: SessionCore, text: str) -> None:
        core.say(_("The server refused: {text}").format(text=text))
        core.finish(1)

    @waiting.upon(Session.ok).to(playing)
    def opponentJoined(inputs: Session, core: SessionCore, args: str) -> None:
        start(inputs, core, args)

    @joining.upon(Session.ok).to(playing)
    def joined(inputs: Session, core: SessionCore, pending: Pending, args: str) -> None:
        pending.stop()
        start(inputs, core, args)

    @joining.upon(Session.error).to(refused)
    def joinRefused(inputs: Session, core: SessionCore, pending: Pending, text: str) -> None:
        """Final unless an OK follows: the original server joins a same-name player after its ERROR."""
        pending.stop()

    @joining.upon(Session._joinTimedOut).to(over)
    def joinTimedOut(inputs: Session, core: SessionCore, pending: Pending) -> None:
        said = _("No answer to JOIN {game} within {seconds:g} s: is the id right?")
        core.say(said.format(game=core.gameId, seconds=JOIN_TIMEOUT))
        core.finish(1)

    @refused.upon(Session.ok).to(playing)
    def joinedAnyway(inputs: Session, core: SessionCore, refusal: Refusal, args: str) -> None:
        refusal.stop()
        said = _("Server: {text} (and it joined us anyway, as the original Gambit server does)")
        core.say(said.format(text=refusal.text))
        start(inputs, core, args)

    @refused.upon(Session._refusalFinal).to(over)
    def refusalFinal(inputs: Session, core: SessionCore, refusal: Refusal) -> None:
        core.say(_("The server refused: {text}").format(text=refusal.text))
        core.finish(1)

    # -- the game ------------------------------------------------------------------------
    playing.upon(Session._prompt).loop()(prompt)
    playing.upon(Session.scripted).loop()(prompt)
    playing.upon(Session.play).loop()(playMove)
    playing.upon(Session.opponentMoved).loop()(theirMove)
    playing.upon(Session.error).loop()(moveRefused)

    @playing.upon(Session._botMove).loop()
    def botMove(inputs: Session, core: SessionCore, turns: Turns) -> None:
        turns.timer = None
        if core.myTurn() and core.bot is not None and (turns.thinking is None or turns.thinking.called):
            turns.thinking = askBot(core.bot, core.board, inputs.play, inputs.resign, core.say)

    @playing.upon(Session.offerDraw).loop()
    def offerDraw(inputs: Session, core: SessionCore, turns: Turns) -> None:
        core.send(Message(Cmd.DRAW, core.user, ""))
        if turns.theirOffer:
            core.say(_("Draw accepted."))
            return
        turns.myOffer = True
        core.say(_("Draw offered to {opponent}; it stands until {opponent} moves.").format(opponent=core.opponent))
        if turns.drawAck is None:
            turns.drawAck = core.clock.callLater(DRAW_ACK, inputs._drawUnconfirmed)

    @playing.upon(Session.ok).loop()
    def drawConfirmed(inputs: Session, core: SessionCore, turns: Turns, args: str) -> None:
        if not (turns.myOffer and turns.drawAck is not None):
            return
        turns.drawAck.cancel()
        turns.drawAck = None
        core.say(_("Server: {text}.").format(text=args))
        if not core.drawHintGiven:
            core.drawHintGiven = True
            said = _("(If {opponent} plays with the original Gambit client, it does not see draw offers.)")
            core.say(said.format(opponent=core.opponent))

    @playing.upon(Session._drawUnconfirmed).loop()
    def drawUnconfirmed(inputs: Session, core: SessionCore, turns: Turns) -> None:
        turns.drawAck = None
        core.say(_("The server did not confirm the draw offer: the original Gambit server ignores draw offers."))

    @playing.upon(Session.drawOffered).loop()
    def drawOffered(inputs: Session, core: SessionCore, turns: Turns) -> None:
        turns.theirOffer = True
        core.say(
            _("{opponent} offers a draw: type 'draw' to accept, or move to decline.").format(opponent=core.opponent)
        )

    @playing.upon(Session.resign).to(resigned)
    def resign(inputs: Session, core: SessionCore, turns: Turns) -> None:
        turns.stop()
        core.send(Message(Cmd.END, core.moveUser(), f"{core.user} resigns: {core.opponent} wins"))
        core.resultOnEnd = winnerResult(core.colour == chess.BLACK)
        core.say(_("You resigned."))

    @playing.upon(Session._decided).to(ending)
    def decided(inputs: Session, core: SessionCore, turns: Turns, verdict: str) -> None:
        turns.stop()

    # -- the end -------------------------------------------------------------------------
    @ending.upon(Session.ended).to(over)
    def endConfirmed(inputs: Session, core: SessionCore, end: Ending, text: str) -> None:
        end.stop()
        # Our board already decided it; the original server may add "X ha abandonado"
        # when the winner leaves first, which is not how this game ended.
        said = _("GAME OVER: {verdict} (the server says: {text})")
        core.endGame(0, said.format(verdict=end.verdict, text=text or _("the game has ended")))

    @ending.upon(Session._graceOver).to(over)
    def noEnd(inputs: Session, core: SessionCore, end: Ending) -> None:
        said = _("GAME OVER: {verdict} (the server sent no END; the original Gambit server does not)")
        core.endGame(0, said.format(verdict=end.verdict))

    @resigned.upon(Session._resignDone).to(over)
    def resignDone(inputs: Session, core: SessionCore, pending: Pending) -> None:
        core.endGame(0, None)

    def ended(inputs: Session, core: SessionCore, text: str) -> None:
        sayGameOver(core, text)

    def endedCancel(inputs: Session, core: SessionCore, pending: Timed, text: str) -> None:
        pending.stop()
        sayGameOver(core, text)

    def left(inputs: Session, core: SessionCore) -> None:
        sayLeft(core)

    def leftCancel(inputs: Session, core: SessionCore, pending: Timed) -> None:
        pending.stop()
        sayLeft(core)

    def closed(inputs: Session, core: SessionCore, why: str) -> None:
        sayLost(core, why, 1)

    def closedCancel(inputs: Session, core: SessionCore, pending: Timed, why: str) -> None:
        pending.stop()
        sayLost(core, why, 1)

    @playing.upon(Session.connectionLost).to(over)
    def lostInGame(inputs: Session, core: SessionCore, turns: Turns, why: str) -> None:
        turns.stop()
        sayLost(core, why, 0)

    for plain in (connecting, creating, waiting):
        plain.upon(Session.ended).to(over)(ended)
        plain.upon(Session.quit).to(over)(left)
        plain.upon(Session.connectionLost).to(over)(closed)
    for live in (joining, refused, playing, resigned):
        live.upon(Session.ended).to(over)(endedCancel)
    for beingLeft in (joining, refused, playing):
        beingLeft.upon(Session.quit).to(over)(leftCancel)
    for answering in (joining, refused):
        answering.upon(Session.connectionLost).to(over)(closedCancel)

    return indexed(builder.build())


SessionMachine = _buildSession()


class ClientSession:
    """The client's game, between a connection (``send``) and a screen (``say``): the machine's face.

    Works the same on velhanet's server and on the original Go server: every
    waiting step has a way out (a JOIN nobody answers, a game the original
    server never closes), and a normal end reads as one.
    """

    def __init__(
        self,
        user: str,
        gameId: str | None,
        send: Callable[[Message], None],
        say: Callable[[str], None],
        finish: Callable[[int], None],
        clock: IReactorTime,
        bot: Bot | None = None,
        botDelay: float = 0.5,
        serverOptions: str = "",
        keepPgn: Callable[[str], None] | None = None,
        site: str = "?",
    ) -> None:
        self.core = SessionCore(user, gameId, send, say, finish, clock, bot, botDelay, serverOptions)
        self.core.sheet.keep, self.core.sheet.site = keepPgn, site
        self.machine = SessionMachine(self.core)
        self.say, self.finish, self.clock = say, finish, clock

    @property
    def phase(self) -> str:
        """``connecting``, ``creating``, ``joining``, ``waiting``, ``playing`` or ``over``."""
        return self.machine.phase()

    @property
    def gameId(self) -> str | None:
        return self.core.gameId

    @property
    def board(self) -> chess.Board:
        return self.core.board

    def connected(self) -> None:
        if self.core.gameId is None:
            self.machine.create()
        else:
            self.machine.join()

    def received(self, message: Message) -> None:
        cmd = message.cmd
        if cmd == Cmd.ERROR:
            self.machine.error(message.args)
        elif cmd == Cmd.OK:
            self.machine.ok(message.args)
        elif cmd == Cmd.MOVE:
            self.machine.opponentMoved(message.args)
        elif cmd == Cmd.DRAW:
            self.machine.drawOffered()
        elif cmd == Cmd.END:
            self.machine.ended(message.args)

    def connectionLost(self, why: str) -> None:
        self.machine.connectionLost(why)

    def command(self, line: str) -> None:
        runCommand(self.machine, self.core, line)

    # -- a standard input that is not a terminal ---------------------------------------

    def scriptedLine(self, line: str) -> None:
        """A line from a file or a pipe: kept until the client can use it (it is never dropped)."""
        if self.core.script is None:
            self.core.script = []
        if line.strip():
            self.core.script.append(line)
        self.machine.scripted()

    def scriptEnded(self) -> None:
        """Standard input is exhausted; leave when a move is wanted and none is left."""
        self.core.scriptEnded = True
        if self.core.script is None:
            self.core.script = []
        self.machine.scripted()
