"""The Gambit client's logic: a game as the player sees it, an automat machine between a connection and a screen.

States: ``connecting`` → ``creating`` → ``waiting`` (White, for an opponent),
or ``connecting`` → ``joining`` (→ ``refused``: an ERROR that an OK may still
follow) → ``playing`` → ``ending`` (our board says the game is over: a short
wait for the server's END) or ``resigned`` → ``over``. Each waiting state owns
its timer as its data (``velhanet.gambit.sessioncore``), so every way out of
it cancels the timer; every call of ``finish`` leaves the machine ``over``,
where nothing said can start anything again.

L{ClientSession} is the machine's face for ``client.py``, which wires it to TCP
and standard input; tests drive it in memory against either server, and the
machine alone with recording fakes.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import chess
from automat import TypeMachine, TypeMachineBuilder
from twisted.internet.interfaces import IReactorTime

from velhanet.bots.chess import chooseBotMove
from velhanet.gambit.sessioncore import (
    DRAW_ACK,
    JOIN_TIMEOUT,
    Client,
    ClientCore,
    Ending,
    Refusal,
    Timed,
    Turns,
    Waiting,
    armEnd,
    armJoin,
    armRefusal,
    armResign,
    moveRefused,
    newGame,
    playMove,
    prompt,
    runCommand,
    sayGameOver,
    sayLeft,
    sayLost,
    start,
    theirMove,
)
from velhanet.gambit.wire import Cmd, Message
from velhanet.indexedmachine import indexed


def _buildSession() -> TypeMachine[Client, ClientCore]:
    builder = TypeMachineBuilder(Client, ClientCore)
    connecting = builder.state("connecting")
    creating = builder.state("creating")
    waiting = builder.state("waiting")
    over = builder.state("over")

    joining = builder.state("joining", armJoin)
    refused = builder.state("refused", armRefusal)
    playing = builder.state("playing", newGame)
    ending = builder.state("ending", armEnd)
    resigned = builder.state("resigned", armResign)

    connecting.upon(Client.phase).loop().returns("connecting")
    creating.upon(Client.phase).loop().returns("creating")
    joining.upon(Client.phase).loop().returns("joining")
    refused.upon(Client.phase).loop().returns("joining")
    waiting.upon(Client.phase).loop().returns("waiting")
    playing.upon(Client.phase).loop().returns("playing")
    ending.upon(Client.phase).loop().returns("over")
    resigned.upon(Client.phase).loop().returns("over")
    over.upon(Client.phase).loop().returns("over")

    # -- what changes nothing -----------------------------------------------------------
    afterGame = (ending, resigned, over)
    for state in (connecting, creating, joining, refused, waiting, *afterGame):
        for ignored in (Client.drawOffered, Client.resign, Client.scripted):
            state.upon(ignored).loop().returns(None)
    for state in (connecting, *afterGame):
        state.upon(Client.ok).loop().returns(None)
    for state in afterGame:
        for gone in (Client.quit, Client.connectionLost):
            state.upon(gone).loop().returns(None)
    for late in (Client.error, Client.opponentMoved, Client.ended):
        over.upon(late).loop().returns(None)

    # -- refusals ------------------------------------------------------------------------
    def notStarted(inputs: Client, core: ClientCore, text: str) -> None:
        core.say("The game has not started.")

    def isOver(inputs: Client, core: ClientCore, text: str) -> None:
        core.say("The game is over.")

    def noGame(inputs: Client, core: ClientCore) -> None:
        core.say("No game is running.")

    def outOfTurn(inputs: Client, core: ClientCore, args: str) -> None:
        core.say(f"Ignored a move from the server out of turn: {args!r}")

    def serverSays(inputs: Client, core: ClientCore, text: str) -> None:
        core.say(f"Server: {text}")

    # Data states are told not to pass their data to these (``nodata``); plain states have none.
    for plain in (connecting, creating, waiting):
        plain.upon(Client.play).loop()(notStarted)
        plain.upon(Client.offerDraw).loop()(noGame)
        plain.upon(Client.opponentMoved).loop()(outOfTurn)
    for timed in (joining, refused):
        timed.upon(Client.play, nodata=True).loop()(notStarted)
        timed.upon(Client.offerDraw, nodata=True).loop()(noGame)
        timed.upon(Client.opponentMoved, nodata=True).loop()(outOfTurn)
    for after in (ending, resigned):
        after.upon(Client.play, nodata=True).loop()(isOver)
        after.upon(Client.offerDraw, nodata=True).loop()(noGame)
        after.upon(Client.opponentMoved, nodata=True).loop()(outOfTurn)
        after.upon(Client.error, nodata=True).loop()(serverSays)
    over.upon(Client.play).loop()(isOver)
    over.upon(Client.offerDraw).loop()(noGame)
    for plain in (connecting, waiting):
        plain.upon(Client.error).loop()(serverSays)
    refused.upon(Client.error, nodata=True).loop()(serverSays)

    # -- into a game ---------------------------------------------------------------------
    @connecting.upon(Client.create).to(creating)
    def create(inputs: Client, core: ClientCore) -> None:
        core.colour = chess.WHITE
        core.send(Message(Cmd.CREATE, core.user, ""))

    @connecting.upon(Client.join).to(joining)
    def join(inputs: Client, core: ClientCore) -> None:
        core.colour = chess.BLACK
        core.say(f"Joining game {core.gameId} as {core.user} ...")
        core.send(Message(Cmd.JOIN, core.user, core.gameId or ""))

    @creating.upon(Client.ok).to(waiting)
    def created(inputs: Client, core: ClientCore, args: str) -> None:
        core.gameId = args
        core.say(f"Game {args} created; you play White. Tell your opponent to run:")
        core.say(f"    gambit-client --user NAME --game {args}{core.serverOptions}")
        core.say("Waiting for your opponent ...")

    @creating.upon(Client.error).to(over)
    def createRefused(inputs: Client, core: ClientCore, text: str) -> None:
        core.say(f"The server refused: {text}")
        core.finish(1)

    @waiting.upon(Client.ok).to(playing)
    def opponentJoined(inputs: Client, core: ClientCore, args: str) -> None:
        start(inputs, core, args)

    @joining.upon(Client.ok).to(playing)
    def joined(inputs: Client, core: ClientCore, pending: Waiting, args: str) -> None:
        pending.stop()
        start(inputs, core, args)

    @joining.upon(Client.error).to(refused)
    def joinRefused(inputs: Client, core: ClientCore, pending: Waiting, text: str) -> None:
        """Final unless an OK follows: the original server joins a same-name player after its ERROR."""
        pending.stop()

    @joining.upon(Client._joinTimedOut).to(over)
    def joinTimedOut(inputs: Client, core: ClientCore, pending: Waiting) -> None:
        core.say(f"No answer to JOIN {core.gameId} within {JOIN_TIMEOUT:g} s: is the id right?")
        core.finish(1)

    @refused.upon(Client.ok).to(playing)
    def joinedAnyway(inputs: Client, core: ClientCore, refusal: Refusal, args: str) -> None:
        refusal.stop()
        core.say(f"Server: {refusal.text} (and it joined us anyway, as the original Gambit server does)")
        start(inputs, core, args)

    @refused.upon(Client._refusalFinal).to(over)
    def refusalFinal(inputs: Client, core: ClientCore, refusal: Refusal) -> None:
        core.say(f"The server refused: {refusal.text}")
        core.finish(1)

    # -- the game ------------------------------------------------------------------------
    playing.upon(Client._prompt).loop()(prompt)
    playing.upon(Client.scripted).loop()(prompt)
    playing.upon(Client.play).loop()(playMove)
    playing.upon(Client.opponentMoved).loop()(theirMove)
    playing.upon(Client.error).loop()(moveRefused)

    @playing.upon(Client._botMove).loop()
    def botMove(inputs: Client, core: ClientCore, turns: Turns) -> None:
        turns.timer = None
        if core.myTurn() and core.bot is not None:
            playMove(inputs, core, turns, chooseBotMove(core.board, core.bot).uci())

    @playing.upon(Client.offerDraw).loop()
    def offerDraw(inputs: Client, core: ClientCore, turns: Turns) -> None:
        core.send(Message(Cmd.DRAW, core.user, ""))
        if turns.theirOffer:
            core.say("Draw accepted.")
            return
        turns.myOffer = True
        core.say(f"Draw offered to {core.opponent}; it stands until {core.opponent} moves.")
        if turns.drawAck is None:
            turns.drawAck = core.clock.callLater(DRAW_ACK, inputs._drawUnconfirmed)

    @playing.upon(Client.ok).loop()
    def drawConfirmed(inputs: Client, core: ClientCore, turns: Turns, args: str) -> None:
        if not (turns.myOffer and turns.drawAck is not None):
            return
        turns.drawAck.cancel()
        turns.drawAck = None
        core.say(f"Server: {args}.")
        if not core.drawHintGiven:
            core.drawHintGiven = True
            core.say(f"(If {core.opponent} plays with the original Gambit client, it does not see draw offers.)")

    @playing.upon(Client._drawUnconfirmed).loop()
    def drawUnconfirmed(inputs: Client, core: ClientCore, turns: Turns) -> None:
        turns.drawAck = None
        core.say("The server did not confirm the draw offer: the original Gambit server ignores draw offers.")

    @playing.upon(Client.drawOffered).loop()
    def drawOffered(inputs: Client, core: ClientCore, turns: Turns) -> None:
        turns.theirOffer = True
        core.say(f"{core.opponent} offers a draw: type 'draw' to accept, or move to decline.")

    @playing.upon(Client.resign).to(resigned)
    def resign(inputs: Client, core: ClientCore, turns: Turns) -> None:
        turns.stop()
        core.send(Message(Cmd.END, core.moveUser(), f"{core.user} resigns: {core.opponent} wins"))
        core.say("You resigned.")

    @playing.upon(Client._decided).to(ending)
    def decided(inputs: Client, core: ClientCore, turns: Turns, verdict: str) -> None:
        turns.stop()

    # -- the end -------------------------------------------------------------------------
    @ending.upon(Client.ended).to(over)
    def endConfirmed(inputs: Client, core: ClientCore, end: Ending, text: str) -> None:
        end.stop()
        # Our board already decided it; the original server may add "X ha abandonado"
        # when the winner leaves first, which is not how this game ended.
        core.say(f"GAME OVER: {end.verdict} (the server says: {text or 'the game has ended'})")
        core.finish(0)

    @ending.upon(Client._graceOver).to(over)
    def noEnd(inputs: Client, core: ClientCore, end: Ending) -> None:
        core.say(f"GAME OVER: {end.verdict} (the server sent no END; the original Gambit server does not)")
        core.finish(0)

    @resigned.upon(Client._resignDone).to(over)
    def resignDone(inputs: Client, core: ClientCore, pending: Waiting) -> None:
        core.finish(0)

    def ended(inputs: Client, core: ClientCore, text: str) -> None:
        sayGameOver(core, text)

    def endedCancel(inputs: Client, core: ClientCore, pending: Timed, text: str) -> None:
        pending.stop()
        sayGameOver(core, text)

    def left(inputs: Client, core: ClientCore) -> None:
        sayLeft(core)

    def leftCancel(inputs: Client, core: ClientCore, pending: Timed) -> None:
        pending.stop()
        sayLeft(core)

    def closed(inputs: Client, core: ClientCore, why: str) -> None:
        sayLost(core, why, 1)

    def closedCancel(inputs: Client, core: ClientCore, pending: Timed, why: str) -> None:
        pending.stop()
        sayLost(core, why, 1)

    @playing.upon(Client.connectionLost).to(over)
    def lostInGame(inputs: Client, core: ClientCore, turns: Turns, why: str) -> None:
        turns.stop()
        sayLost(core, why, 0)

    for plain in (connecting, creating, waiting):
        plain.upon(Client.ended).to(over)(ended)
        plain.upon(Client.quit).to(over)(left)
        plain.upon(Client.connectionLost).to(over)(closed)
    for live in (joining, refused, playing, resigned):
        live.upon(Client.ended).to(over)(endedCancel)
    for beingLeft in (joining, refused, playing):
        beingLeft.upon(Client.quit).to(over)(leftCancel)
    for answering in (joining, refused):
        answering.upon(Client.connectionLost).to(over)(closedCancel)

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
        bot: random.Random | None = None,
        botDelay: float = 0.5,
        serverOptions: str = "",
    ) -> None:
        self.core = ClientCore(user, gameId, send, say, finish, clock, bot, botDelay, serverOptions)
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

    @property
    def colour(self) -> chess.Color:
        return self.core.colour

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

    def play(self, text: str) -> None:
        self.machine.play(text)

    def offerDraw(self) -> None:
        self.machine.offerDraw()

    def show(self) -> None:
        self.core.show()

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
