"""A Piranhas move as the Software-Challenge's documents write it: ``A4 → C4``.

The official rules (docs.software-challenge.de, "Spielregeln Piranhas",
``spiele/26_piranhas/regeln``) name the board "ein 10x10 Schachbrett mit den
Spalten A-J und Zeilen 0-9" and a move by its two fields: "von A4 nach C4",
"von A1 nach A9". The protocol sends a start and a direction (``<from x y>``,
``<direction>``); the target follows from the position before the move.
"""

from __future__ import annotations

from typing import Final

from velhanet.games.piranhas import SIZE, PiranhaMove, checkMove, teamOf

COLUMNS: Final = "ABCDEFGHIJ"
"""The columns' letters, x = 0 to 9, as the Software-Challenge's rules name them ("Spalten A-J und Zeilen 0-9")."""


def squareName(x: int, y: int) -> str:
    """``A4``: the column's letter and the row's number (0 at the bottom), as the official rules write a field."""
    return f"{COLUMNS[x]}{y}" if 0 <= x < SIZE and 0 <= y < SIZE else f"({x}, {y})"


def moveNotation(cells: bytes, move: PiranhaMove) -> str:
    """``A4 → C4``: a move from the position ``cells`` before it, as the rules' examples write one ("von A4 nach
    C4"); a move that is not legal there (a log may hold anything) is its start and direction, ``A4 UP``."""
    start = squareName(move.x, move.y)
    team = teamOf(cells[move.y * SIZE + move.x]) if start[0] != "(" else None
    target = checkMove(cells, team, move) if team is not None else "WRONG_START"
    if isinstance(target, str):
        return f"{start} {move.direction.name}"
    return f"{start} → {squareName(*target)}"
