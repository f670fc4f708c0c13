"""Where ``gambit-client --bot`` gets its moves: the built-in heuristic, or a UCI engine (``--engine``).

The session asks its L{MoveSource} through L{askBot} when the bot's delay is
over and plays what comes back; a source that fails (the engine crashed,
answered nonsense or nothing in time) makes the bot resign, saying why. The
heuristic answers at once; an engine answers later, so the session keeps
the question as the ``playing`` state's data and cancels it when the game
ends first.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Callable

import chess
from twisted.internet.defer import CancelledError, Deferred, succeed
from twisted.python.failure import Failure

from velhanet.bots.chess import chooseBotMove
from velhanet.gambit.engine import Engine
from velhanet.i18n import _


class MoveSource(typing.Protocol):
    def choose(self, board: chess.Board) -> Deferred[chess.Move]:
        "A legal move in ``board`` (which the source may keep: it is a copy), or a failure that says why not."


class Heuristic:
    """The built-in player (``velhanet.bots.chess``): mate if it can, win material, avoid hanging pieces."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, board: chess.Board) -> Deferred[chess.Move]:
        return succeed(chooseBotMove(board, self.rng))


class EnginePlayer:
    """A running UCI engine, ``movetime`` seconds a move."""

    def __init__(self, engine: Engine, movetime: float) -> None:
        self.engine = engine
        self.movetime = movetime

    def choose(self, board: chess.Board) -> Deferred[chess.Move]:
        return self.engine.play(board, self.movetime)


Bot = MoveSource | random.Random
"""A session's bot: a move source, or the seeded random choices of the built-in heuristic."""


def askBot(
    source: Bot,
    board: chess.Board,
    play: Callable[[str], None],
    resign: Callable[[], None],
    say: Callable[[str], None],
) -> Deferred[None]:
    """Ask ``source`` for a move in ``board``: ``play`` it, or ``say`` why not and ``resign``.

    Cancelling the returned Deferred (the game ended first) drops the answer.
    """
    if isinstance(source, random.Random):
        source = Heuristic(source)

    def failed(failure: Failure) -> None:
        if failure.check(CancelledError):
            return
        say(_("{reason}: resigning").format(reason=failure.getErrorMessage()))
        resign()

    return source.choose(board.copy()).addCallbacks(lambda move: play(move.uci()), failed)
