"""What the Gambit client shows: the board from the player's side, and the commands it understands."""

from __future__ import annotations

import typing

import chess

from velhanet import i18n
from velhanet.gambit.texts import Texts
from velhanet.i18n import N_, _


def renderBoard(board: chess.Board, colour: chess.Color) -> str:
    rows = board.unicode(empty_square="·", orientation=colour).splitlines()
    ranks = "87654321" if colour == chess.WHITE else "12345678"
    files = "a b c d e f g h" if colour == chess.WHITE else "h g f e d c b a"
    return "\n".join(f"{rank} {row}" for rank, row in zip(ranks, rows, strict=True)) + f"\n  {files}"


HELP = N_(
    """\
moves: SAN (e4, Nf3, O-O, exd8=Q) or UCI (e2e4, e7e8q)
  draw     offer a draw (or accept the opponent's offer)
  resign   give up the game
  board    show the board again
  quit     leave (the server tells your opponent)"""
)
"""The commands (their words stay as typed: only what they do is translated)."""


def clientTexts() -> Texts:
    """The chess words (a game's end, a move that is not legal) in the language the client speaks."""
    return Texts(i18n.current().code)


class Commands(typing.Protocol):
    """The session's inputs a typed line can feed."""

    def play(self, text: str) -> None: ...

    def offerDraw(self) -> None: ...

    def resign(self) -> None: ...

    def quit(self) -> None: ...


class Console(typing.Protocol):
    def say(self, text: str) -> None: ...

    def show(self) -> None: ...


def runCommand(inputs: Commands, core: Console, line: str) -> None:
    """One line the player typed (or a script holds): a command or a move."""
    word = line.strip()
    if not word:
        return
    if word == "help":
        core.say(_(HELP))
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
