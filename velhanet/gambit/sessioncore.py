"""What the Gambit client's session machine is given and holds: its inputs, its core (the
collaborators and the game as the player sees it), the data of its states, which own its
timers, and the steps of a game its transitions share.

The machine itself is in ``velhanet.gambit.session``. The core knows no socket
and no terminal: it is given ``send``, ``say``, ``finish`` and a clock, so a
test drives the machine with recording fakes and a ``task.Clock``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import chess
from twisted.internet.interfaces import IDelayedCall, IReactorTime

from velhanet.gambit.screen import HELP, renderBoard
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessgame import describeOutcome, gameOutcome, parseMove
from velhanet.games.interfaces import IllegalMove

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


class Client(Protocol):
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
class ClientCore:
    user: str
    gameId: str | None
    send: Callable[[Message], None]
    say: Callable[[str], None]
    finish: Callable[[int], None]
    clock: IReactorTime
    bot: random.Random | None = None
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


class Timed:
    """The data of a state that owns a timer: every transition out of the state calls L{stop}."""

    timer: IDelayedCall | None

    def stop(self) -> None:
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        self.timer = None


@dataclass
class Waiting(Timed):
    timer: IDelayedCall | None


@dataclass
class Refusal(Timed):
    text: str
    timer: IDelayedCall | None


@dataclass
class Ending(Timed):
    verdict: str
    timer: IDelayedCall | None


@dataclass
class Turns(Timed):
    """``playing``: what stands between the moves, and the game's two timers."""

    timer: IDelayedCall | None = None
    """The bot's next move."""
    drawAck: IDelayedCall | None = None
    """The server has this long to confirm our draw offer."""
    lastSent: chess.Move | None = None
    myOffer: bool = False
    theirOffer: bool = False

    def armBot(self, call: IDelayedCall) -> None:
        """One pending bot move at most: a repeated prompt replaces the pending one."""
        super().stop()
        self.timer = call

    def settleOffer(self) -> None:
        self.myOffer = False
        if self.drawAck is not None and self.drawAck.active():
            self.drawAck.cancel()
        self.drawAck = None

    def stop(self) -> None:
        super().stop()
        self.settleOffer()


def runCommand(inputs: Client, core: ClientCore, line: str) -> None:
    """One line the player typed (or a script holds): a command or a move."""
    word = line.strip()
    if not word:
        return
    if word == "help":
        core.say(HELP)
    elif word == "board":
        core.show()
    elif word == "draw":
        inputs.offerDraw()
    elif word == "resign":
        inputs.resign()
    elif word in ("quit", "exit"):
        inputs.quit()
    else:
        inputs.play(word)


def _nextScripted(inputs: Client, core: ClientCore) -> None:
    assert core.script is not None
    if core.script:
        runCommand(inputs, core, core.script.pop(0))
    elif core.scriptEnded:
        core.say("Standard input has ended and it is your move: leaving the game.")
        inputs.quit()


def prompt(inputs: Client, core: ClientCore, turns: Turns) -> None:
    if not core.myTurn():
        return
    if core.bot is not None:
        turns.armBot(core.clock.callLater(core.botDelay, inputs._botMove))
    elif core.script is not None:
        _nextScripted(inputs, core)
    else:
        core.say("Your move:")


def start(inputs: Client, core: ClientCore, opponent: str) -> None:
    core.opponent = opponent
    if opponent == core.user:
        core.say(f"Your opponent is also called {opponent}: your moves go out without a user name.")
    if core.colour == chess.WHITE:
        core.say(f"{opponent} joined your game {core.gameId}. You play White. Type 'help' for commands.")
    else:
        core.say(f"You joined {opponent}'s game {core.gameId}. You play Black. Type 'help' for commands.")
    core.show()
    inputs._prompt()  # queued: runs in ``playing``, which holds the bot's timer


def playMove(inputs: Client, core: ClientCore, turns: Turns, text: str) -> None:
    if not core.myTurn():
        core.say("Not your turn.")
        return
    try:
        move = parseMove(core.board, text, None)
    except IllegalMove as error:
        core.say(f"Illegal: {error}")
        prompt(inputs, core, turns)
        return
    san = core.board.san(move)
    core.board.push(move)
    turns.lastSent = move
    core.send(Message(Cmd.MOVE, core.moveUser(), f"{core.gameId}:{move.uci()}"))
    core.say(f"You played {san}")
    if turns.theirOffer:
        turns.theirOffer = False
        core.say(f"You played on: {core.opponent}'s draw offer is declined.")
    core.show()
    outcome = gameOutcome(core.board)
    if outcome is not None:
        core.say(describeOutcome(outcome))
        inputs._decided(describeOutcome(outcome))


def sayGameOver(core: ClientCore, text: str) -> None:
    core.say(f"GAME OVER: {text or 'the game has ended'}")
    core.finish(0)


def sayLeft(core: ClientCore) -> None:
    core.say("Leaving the game.")
    core.finish(0)


def sayLost(core: ClientCore, why: str, code: int) -> None:
    core.say(f"Connection to the server closed: {why}")
    core.finish(code)


def theirMove(inputs: Client, core: ClientCore, turns: Turns, args: str) -> None:
    if core.board.turn == core.colour:
        core.say(f"Ignored a move from the server out of turn: {args!r}")
        return
    try:
        move = parseMove(core.board, args, None)
    except IllegalMove as error:
        core.say(f"Ignored an unreadable move from {core.opponent}: {error}")
        return
    san = core.board.san(move)
    core.board.push(move)
    turns.lastSent = None
    core.say(f"{core.opponent} played {san}")
    if turns.myOffer:
        turns.settleOffer()
        core.say(f"{core.opponent} played on: your draw offer is declined.")
    core.show()
    if core.board.is_checkmate():
        # The original server does not detect mate; its client announces it with END.
        core.say("Checkmate: you lost.")
        core.send(Message(Cmd.END, core.moveUser(), ""))
        inputs._decided("checkmate, you lost")
        return
    outcome = gameOutcome(core.board)
    if outcome is not None:
        core.say(describeOutcome(outcome))
        inputs._decided(describeOutcome(outcome))
        return
    prompt(inputs, core, turns)


def moveRefused(inputs: Client, core: ClientCore, turns: Turns, text: str) -> None:
    core.say(f"Server: {text}")
    if turns.lastSent is not None and core.board.move_stack and core.board.peek() == turns.lastSent:
        core.board.pop()
        turns.lastSent = None
        core.say("Your move was not played.")
        prompt(inputs, core, turns)


# -- the data factories: each waiting state arms its timer on entry ---------------------


def armJoin(inputs: Client, core: ClientCore) -> Waiting:
    return Waiting(core.clock.callLater(JOIN_TIMEOUT, inputs._joinTimedOut))


def armRefusal(inputs: Client, core: ClientCore, text: str) -> Refusal:
    return Refusal(text, core.clock.callLater(ERROR_GRACE, inputs._refusalFinal))


def newGame(inputs: Client, core: ClientCore, args: str) -> Turns:
    """``args``: the opponent's name, which the transition into ``playing`` announces."""
    return Turns()


def armEnd(inputs: Client, core: ClientCore, verdict: str) -> Ending:
    return Ending(verdict, core.clock.callLater(END_GRACE, inputs._graceOver))


def armResign(inputs: Client, core: ClientCore) -> Waiting:
    return Waiting(core.clock.callLater(RESIGN_GRACE, inputs._resignDone))
