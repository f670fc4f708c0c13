"""Boards drawn as SVG from the engines' states, for the spectators' site.

Called only when a spectator needs the board (L{velhanet.web.hub.GameRecord.svg}),
never on a move nobody watches. Each drawing scales to its container
(a ``viewBox``, no fixed size) so it fills a projector or a phone.

The rooms hand over their engines' states (L{velhanet.watching}); the
site picks the drawing by the state's type (L{drawPosition}). Every
service with ``--web`` imports this module, so each drawing imports its own
game's engine when it first draws: a Gambit server does not carry the
Piranhas tables, nor a Software-Challenge server the chess library, for a
board it never draws (1.3 and 1.7 MB of RSS, each imported alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import chess

    from velhanet.games.kinarow import KInARowState
    from velhanet.games.piranhas import PiranhasState

CELL = 40
COLOURS = ("#c0392b", "#2563eb")
"""Team or player one, team or player two."""


def chessBoard(board: chess.Board) -> str:
    """The chess library's own board; the last move marked when the board still knows it."""
    import chess.svg

    last = board.peek() if board.move_stack else None
    check = board.king(board.turn) if board.is_check() else None
    return chess.svg.board(board, lastmove=last, check=check)


MARGIN = CELL // 2
"""Room left of and below a board for its coordinates."""


def _svg(width: int, height: int, body: list[str], kind: str, columns: list[str], rows: list[str]) -> str:
    """A board of ``width`` × ``height`` user units with its coordinates around it, as a chess board has them:
    ``columns`` under it from the left, ``rows`` on its left from the top, so that a move's text (``h8``,
    ``A4 → C4``) can be found on the drawing. No words: the page around it names it in its own language."""
    labels = [
        f'<text x="{MARGIN + i * CELL + CELL // 2}" y="{height + MARGIN - 5}">{name}</text>'
        for i, name in enumerate(columns)
    ]
    labels += [f'<text x="{MARGIN // 2}" y="{i * CELL + CELL // 2 + 5}">{name}</text>' for i, name in enumerate(rows)]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width + MARGIN} {height + MARGIN}" role="img" '
        f'class="board {kind}">'
        '<g class="coordinates" font-family="sans-serif" font-size="14" fill="#555" text-anchor="middle">'
        + "".join(labels)
        + f'</g><g transform="translate({MARGIN} 0)">'
        + "".join(body)
        + "</g></svg>"
    )


def piranhasBoard(cells: bytes) -> str:
    """A 10×10 Piranhas board: fish as discs sized by weight, squids as dark squares."""
    from velhanet.games.piranhas import SIZE, SQUID, teamOf, weightOf

    body = [f'<rect width="{SIZE * CELL}" height="{SIZE * CELL}" fill="#dff1f7"/>']
    for y in range(SIZE):
        for x in range(SIZE):
            value = cells[y * SIZE + x]
            # y = 0 is the bottom row in the Software-Challenge's coordinates.
            px, py = x * CELL, (SIZE - 1 - y) * CELL
            body.append(f'<rect x="{px}" y="{py}" width="{CELL}" height="{CELL}" fill="none" stroke="#9cc"/>')
            if value == SQUID:
                body.append(f'<rect class="squid" x="{px + 6}" y="{py + 6}" width="28" height="28" fill="#333"/>')
                continue
            team = teamOf(value)
            if team is not None:
                radius = 7 + 4 * weightOf(value)
                body.append(
                    f'<circle class="fish team{team}" cx="{px + CELL // 2}" cy="{py + CELL // 2}" r="{radius}" '
                    f'fill="{COLOURS[team]}"/>'
                )
    from velhanet.games.piranhasnotation import COLUMNS

    rows = [str(y) for y in reversed(range(SIZE))]  # A-J and 0-9 from the bottom left, as the official rules
    return _svg(SIZE * CELL, SIZE * CELL, body, "piranhas", list(COLUMNS), rows)


def kInARowBoard(state: KInARowState) -> str:
    """A k-in-a-row board: a grid and each player's stones (gobang), or X and O (tic-tac-toe)."""
    width, height = state.rules.width, state.rules.height
    body = [f'<rect width="{width * CELL}" height="{height * CELL}" fill="#f3d9a4"/>']
    for x in range(width + 1):
        body.append(f'<line x1="{x * CELL}" y1="0" x2="{x * CELL}" y2="{height * CELL}" stroke="#7a5a2a"/>')
    for y in range(height + 1):
        body.append(f'<line x1="0" y1="{y * CELL}" x2="{width * CELL}" y2="{y * CELL}" stroke="#7a5a2a"/>')
    marks = width == height == state.rules.k == 3  # tic-tac-toe is played with X (who starts) and O
    for x, y, player in state.stones():
        cx, cy = x * CELL + CELL // 2, y * CELL + CELL // 2
        if not marks:
            body.append(
                f'<circle class="stone player{player}" cx="{cx}" cy="{cy}" '
                f'r="{CELL // 2 - 4}" fill="{("#111", "#fff")[player]}" stroke="#111"/>'
            )
        elif player == 0:
            arm = CELL // 2 - 8
            body.append(
                f'<path class="stone player0 mark-x" d="M{cx - arm} {cy - arm}L{cx + arm} {cy + arm}'
                f'M{cx + arm} {cy - arm}L{cx - arm} {cy + arm}" stroke="{COLOURS[0]}" stroke-width="5" '
                'stroke-linecap="round" fill="none"/>'
            )
        else:
            body.append(
                f'<circle class="stone player1 mark-o" cx="{cx}" cy="{cy}" r="{CELL // 2 - 9}" '
                f'fill="none" stroke="{COLOURS[1]}" stroke-width="5"/>'
            )
    from velhanet.games.kinarow import columnName

    columns = [columnName(x) for x in range(width)]
    rows = [str(height - y) for y in range(height)]  # h8: letters from the left, numbers from the bottom
    return _svg(width * CELL, height * CELL, body, "kinarow", columns, rows)


def piranhasPosition(state: PiranhasState) -> str:
    return piranhasBoard(state.cells)


DRAWINGS: dict[str, Callable[[Any], str]] = {
    "chess.Board": chessBoard,
    "velhanet.games.kinarow.KInARowState": kInARowBoard,
    "velhanet.games.piranhas.PiranhasState": piranhasPosition,
}
"""The drawing of each engine's state, by the state's class (named, so that choosing imports no engine)."""


def drawPosition(position: object) -> str:
    """The board of a room's position (L{velhanet.watching.Position}) as SVG; "" before there is a position."""
    if position is None:
        return ""
    for kind in type(position).__mro__:
        drawing = DRAWINGS.get(f"{kind.__module__}.{kind.__qualname__}")
        if drawing is not None:
            return drawing(position)
    raise TypeError(f"no drawing for a {type(position).__qualname__} position")
