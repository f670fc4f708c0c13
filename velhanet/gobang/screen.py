"""What a Gobang player sees and types: the board drawn as text, and a typed line turned into a move.

The session (``session.py``) keeps the game and decides; this draws its board
and reads the player's lines, as gambit's ``screen.py`` does for chess.
"""

from __future__ import annotations

import typing

from velhanet.games.kinarow import KInARowRules, gobangRules
from velhanet.i18n import N_, _

SYMBOLS = ("X", "O")
COLOURS = (N_("black"), N_("white"))
"""A colour's name inside a sentence (``_(COLOURS[colour])``)."""
LEGEND = N_("X = black, O = white")


def renderBoard(size: int, stones: dict[tuple[int, int], int]) -> str:
    """x = column 1..size left to right, y = row 1..size top to bottom; black X, white O (the legend
    ends the header line)."""
    width = 3 if size >= 10 else 2
    lines = [" " * 3 + "".join(f"{x:>{width}}" for x in range(1, size + 1)) + f"   {_(LEGEND)}"]
    for y in range(1, size + 1):
        cells = "".join(f"{SYMBOLS[stones[(x, y)]] if (x, y) in stones else '.':>{width}}" for x in range(1, size + 1))
        lines.append(f"{y:>3}{cells}")
    return "\n".join(lines)


def rulesFor(size: int) -> KInARowRules:
    """Tic-tac-toe on 3x3 (the server's --game tictactoe), else gobang."""
    return KInARowRules("tictactoe", 3, 3, 3) if size == 3 else gobangRules(size)


def gameName(size: int) -> str:
    return "tic-tac-toe" if size == 3 else "gobang"


class Commands(typing.Protocol):
    """The session's inputs a typed line can feed."""

    def place(self, x: int, y: int) -> None: ...

    def resign(self) -> None: ...

    def mistyped(self, why: str) -> None: ...

    def signoff(self) -> None: ...


class Board(typing.Protocol):
    """What a typed move is checked against: the board's size and stones, and whether passing is allowed."""

    size: int
    stones: dict[tuple[int, int], int]

    def allowPass(self) -> bool: ...


def runCommand(inputs: Commands, core: Board, line: str) -> None:
    """One line the player typed: checked against the board, then an input of the machine."""
    words = line.split()
    if not words:
        return
    if words[0] in ("quit", "exit"):
        inputs.signoff()
    elif words[0] == "pass":
        if core.allowPass():
            inputs.place(0, 0)
        else:
            inputs.mistyped(
                _("Passing is not allowed in {game}; type 'x y' or 'resign'.").format(game=gameName(core.size))
            )
    elif words[0] == "resign":
        inputs.resign()
    elif len(words) == 2 and all(w.isdigit() for w in words):
        x, y = int(words[0]), int(words[1])
        if not (1 <= x <= core.size and 1 <= y <= core.size):
            inputs.mistyped(_("x and y go from 1 to {size}.").format(size=core.size))
        elif (x, y) in core.stones:
            inputs.mistyped(_("That point is taken."))
        else:
            inputs.place(x, y)
    else:
        if core.allowPass():
            inputs.mistyped(_("Type two numbers 'x y', or 'pass', or 'resign'."))
        else:
            inputs.mistyped(_("Type two numbers 'x y', or 'resign'."))
