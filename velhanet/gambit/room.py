"""One Gambit game on the server: an automat machine from CREATE to its end.

States: ``waiting`` (White created it, no opponent yet) → ``playing`` →
``over``. The room decides whose turn it is and whether a move is legal
(with validation on, by the ``chess`` library), relays what the text says
to relay, and tells both players when the game ends. It talks to players
only through the narrow L{Participant} interface; the protocol provides it.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
from automat import TypeMachine, TypeMachineBuilder
from twisted.logger import Logger

from velhanet.gambit.texts import Texts
from velhanet.gambit.wire import Cmd, Message
from velhanet.games.chessgame import gameOutcome, parseMove, playForgetting
from velhanet.games.interfaces import IllegalMove
from velhanet.i18n import _
from velhanet.indexedmachine import indexed
from velhanet.watching import NO_WATCHER, UNWATCHED, GameWatcher, Score, WatchedGame


class Participant(typing.Protocol):
    """A connection as a room sees it."""

    name: str

    def send(self, message: Message) -> None: ...

    def relay(self, message: Message, sender: Participant) -> None:
        """A message from ``sender``, its opponent; if this player cannot keep up, the sender pays."""

    def disconnect(self, why: str, tell: str) -> None:
        """Close this player's connection after telling it ``tell`` (it flooded its opponent)."""

    def leaveRoom(self) -> None:
        """The room is over for this player (it may CREATE or JOIN again)."""


class Room(typing.Protocol):
    def join(self, black: Participant) -> None:
        "A second player joined: the game starts."

    def move(self, player: Participant, args: str) -> None:
        "MOVE from one of the players."

    def end(self, player: Participant, args: str) -> None:
        "END from one of the players: it abandons (or, the original client, says it is mated)."

    def draw(self, player: Participant, args: str) -> None:
        "DRAW (extension): offer, or accept the opponent's offer."

    def leave(self, player: Participant) -> None:
        "The player's connection closed."

    def _finish(self, text: str, score: Score) -> None:
        "private: the game is decided; tell both and close the room."


@dataclass
class RoomCore:
    gameId: str
    white: Participant
    validate: bool
    removeRoom: Callable[[str], None]
    texts: Texts = field(default_factory=Texts)
    log: Logger = field(default_factory=lambda: Logger(namespace="velhanet.gambit.room"))
    black: Participant | None = None
    board: chess.Board = field(default_factory=chess.Board)
    drawOfferBy: Participant | None = None
    """A draw offer stands until its receiver accepts (DRAW) or declines by moving (FIDE 9.1)."""
    watcher: GameWatcher = NO_WATCHER
    """Where the game is reported for spectators (``--web``); it never acts on the game."""
    watched: WatchedGame = UNWATCHED

    def winBy(self, winner: Participant, termination: str = "normal") -> Score:
        """The score of a game that ``winner`` won off the board (a resignation, an END, a player who left)."""
        return Score("1-0" if winner is self.white else "0-1", termination)

    def opponentOf(self, player: Participant) -> Participant | None:
        return self.black if player is self.white else self.white

    def relay(self, sender: Participant, cmd: Cmd, args: str) -> None:
        """To the opponent of the connection that sent it; the text: server messages carry no user.

        Counted against the sender's relay window: a sender that floods is closed.
        """
        opponent = self.opponentOf(sender)
        if opponent is not None:
            opponent.relay(Message(cmd, "", args), sender)

    def endFor(self, player: Participant, args: str) -> None:
        """END to the opponent of ``player``: the last message of the game, never refused."""
        opponent = self.opponentOf(player)
        if opponent is not None:
            opponent.send(Message(Cmd.END, "", args))

    def moved(self, player: Participant) -> None:
        """A move by ``player`` declines its opponent's draw offer; its own offer stands."""
        if self.drawOfferBy is not None and self.drawOfferBy is not player:
            self.drawOfferBy = None


def _buildRoom() -> TypeMachine[Room, RoomCore]:
    builder = TypeMachineBuilder(Room, RoomCore)
    waiting = builder.state("waiting")
    playing = builder.state("playing")
    over = builder.state("over")

    for ignored in (Room.join, Room.move, Room.end, Room.draw, Room.leave, Room._finish):
        over.upon(ignored).loop().returns(None)

    @waiting.upon(Room.join).to(playing)
    def start(inputs: Room, core: RoomCore, black: Participant) -> None:
        core.black = black
        black.send(Message(Cmd.OK, "", core.white.name))
        core.white.send(Message(Cmd.OK, "", black.name))
        board = core.board
        core.watched = core.watcher.started("gambit", "chess", (core.white.name, black.name), lambda: board)

    @waiting.upon(Room.move).loop()
    @waiting.upon(Room.end).loop()
    @waiting.upon(Room.draw).loop()
    def tooEarly(inputs: Room, core: RoomCore, player: Participant, args: str) -> None:
        player.send(Message(Cmd.ERROR, "", core.texts("noOpponentYet", game=core.gameId)))

    @waiting.upon(Room.leave).to(over)
    def creatorLeft(inputs: Room, core: RoomCore, player: Participant) -> None:
        core.removeRoom(core.gameId)

    @playing.upon(Room.move).loop()
    def move(inputs: Room, core: RoomCore, player: Participant, args: str) -> None:
        if not core.validate:
            core.moved(player)
            core.relay(player, Cmd.MOVE, args)
            core.watched.moved(args.rpartition(":")[2].strip())  # not validated: the board does not follow
            return
        colour = chess.WHITE if player is core.white else chess.BLACK
        if core.board.turn != colour:
            player.send(Message(Cmd.ERROR, "", core.texts("notYourTurn", side=core.texts.side(core.board.turn))))
            return
        try:
            chosen = parseMove(core.board, args, core.gameId)
        except IllegalMove as error:
            player.send(Message(Cmd.ERROR, "", core.texts.refused(error)))
            return
        playForgetting(core.board, chosen)
        core.moved(player)
        core.relay(player, Cmd.MOVE, args)
        core.watched.moved(chosen.uci())  # never the game id the text starts with
        outcome = gameOutcome(core.board)
        if outcome is not None:
            inputs._finish(core.texts.outcome(outcome), Score(outcome.result()))

    @playing.upon(Room.end).to(over)
    def abandoned(inputs: Room, core: RoomCore, player: Participant, args: str) -> None:
        opponent = core.opponentOf(player)
        assert opponent is not None
        core.endFor(player, args or core.texts("won", name=opponent.name))
        core.watched.ended(args or core.texts("won", name=opponent.name), core.winBy(opponent))
        _close(core)

    @playing.upon(Room.draw).loop()
    def draw(inputs: Room, core: RoomCore, player: Participant, args: str) -> None:
        if core.drawOfferBy is not None and core.drawOfferBy is not player:
            inputs._finish(core.texts.agreed(), Score("1/2-1/2"))
            return
        opponent = core.opponentOf(player)
        assert opponent is not None
        if core.drawOfferBy is player:
            player.send(Message(Cmd.ERROR, "", core.texts("drawOfferStands", name=opponent.name)))
            return
        core.drawOfferBy = player
        core.relay(player, Cmd.DRAW, args or core.texts("drawOffer", name=player.name))
        # The offerer learns the server took the offer (the original server ignores cmd 6).
        player.send(Message(Cmd.OK, "", core.texts("drawOfferSent", name=opponent.name)))

    @playing.upon(Room.leave).to(over)
    def left(inputs: Room, core: RoomCore, player: Participant) -> None:
        core.endFor(player, core.texts("abandoned", name=player.name))
        opponent = core.opponentOf(player)
        assert opponent is not None
        core.watched.ended(core.texts("abandoned", name=player.name), core.winBy(opponent, "abandoned"))
        _close(core)

    @playing.upon(Room._finish).to(over)
    def finish(inputs: Room, core: RoomCore, text: str, score: Score) -> None:
        core.log.info(_("game {gameId} over: {result}"), gameId=core.gameId, result=text)
        for player in (core.white, core.black):
            if player is not None:
                player.send(Message(Cmd.END, "", text))
        core.watched.ended(text, score)
        _close(core)

    waiting.upon(Room._finish).loop().returns(None)
    return indexed(builder.build())


def _close(core: RoomCore) -> None:
    for player in (core.white, core.black):
        if player is not None:
            player.leaveRoom()
    core.removeRoom(core.gameId)


RoomMachine = _buildRoom()
