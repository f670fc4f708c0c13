"""Games offered through the Software-Challenge room layer, and their XML.

Each game type is an adapter: a new game, the ``<state>`` of a memento, a
move read from ``<data class="move">``, the result and its score parts.

- ``swc_2026_piranhas``: exactly the official shapes (``docs/socha.md``), so
  the real ``socha`` players can play.
- ``velhanet_tictactoe`` and ``velhanet_gobang`` (15×15): velhanet's own
  games, for players written against ``docs/socha.md``::

      <state class="state" startTeam="ONE" turn="3" width="15" height="15" k="5">
        <board><row><field>EMPTY|ONE|TWO</field>…</row>…</board>   (row i = y i)
      </state>

      <data class="move"><place x="7" y="7"/></data>      (0-based)
      <data class="move"><pass/></data>                   (gobang only)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Protocol
from xml.etree.ElementTree import Element

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import EMPTY, PASS, TICTACTOE, KInARowRules, KInARowState, Place
from velhanet.games.piranhas import (
    FIELD_NAMES,
    SIZE,
    TEAM_NAMES,
    Direction,
    PiranhaMove,
    PiranhasRules,
    PiranhasState,
    WinReason,
)
from velhanet.socha.xml import Prerendered, pad, tag


@dataclass(frozen=True)
class GameEnd:
    winner: int | None
    """Team index (0 = ONE) or None for a draw."""
    reason: str
    """With ``%s`` where the winner's name goes."""
    swarms: tuple[int, int]
    """The second score part of each team."""


class GameAdapter(Protocol):
    gameType: str
    fragments: tuple[tuple[str, str], ...]
    """(name, aggregation) of each score part after the victory points."""

    def newGame(self, rng: random.Random) -> Any: ...

    def teamToMove(self, state: Any) -> int | None: ...

    def stateElement(self, state: Any) -> Element: ...

    def parseMove(self, data: Element) -> Any: ...

    def moveElement(self, move: Any, name: str) -> Element: ...

    def apply(self, state: Any, move: Any) -> Any: ...

    def end(self, state: Any) -> GameEnd | None: ...

    def partsFor(self, state: Any) -> tuple[int, int]: ...


def _coordinate(element: Element | None, what: str) -> tuple[int, int]:
    if element is None:
        raise IllegalMove(f"the move has no <{what}> element")
    try:
        return int(element.get("x", "")), int(element.get("y", ""))
    except ValueError:
        raise IllegalMove(f"<{what}> needs integer x and y attributes") from None


_FIELD_LINES: dict[int, tuple[str, ...]] = {}
"""Per indentation level: the ``<field>`` line of each field value."""


def _boardXml(cells: bytes, level: int) -> str:
    """``<board>`` of ten ``<row>`` of ten ``<field>``, as L{render} would write the element tree."""
    fields = _FIELD_LINES.get(level)
    if fields is None:
        fields = _FIELD_LINES[level] = tuple(f"{pad(level + 2)}<field>{name}</field>" for name in FIELD_NAMES)
    rowStart, rowEnd = f"{pad(level + 1)}<row>", f"{pad(level + 1)}</row>"
    parts = [f"{pad(level)}<board>"]
    for y in range(SIZE):
        parts.append(rowStart)
        parts.extend(fields[value] for value in cells[y * SIZE : (y + 1) * SIZE])
        parts.append(rowEnd)
    parts.append(f"{pad(level)}</board>")
    return "".join(parts)


class PiranhasAdapter:
    gameType: str = "swc_2026_piranhas"
    fragments: tuple[tuple[str, str], ...] = (("Siegpunkte", "SUM"), ("Schwarmgröße", "AVERAGE"))

    def __init__(self) -> None:
        self.rules = PiranhasRules()

    def newGame(self, rng: random.Random) -> PiranhasState:
        return self.rules.initial(rng)

    def teamToMove(self, state: PiranhasState) -> int | None:
        return state.toMove

    def stateElement(self, state: PiranhasState) -> Element:
        firstUnion = TEAM_NAMES[state.firstUnion] if state.firstUnion is not None else None
        element = tag("state", {"class": "state", "startTeam": "ONE", "turn": state.turn, "firstUnion": firstUnion})
        if state.lastMove is not None:
            element.append(self.moveElement(state.lastMove, "lastMove"))
        cells = state.cells
        element.append(Prerendered("board", lambda level: _boardXml(cells, level)))
        return element

    def moveElement(self, move: PiranhaMove, name: str) -> Element:
        return tag(name, None, tag("from", {"x": move.x, "y": move.y}), tag("direction", None, move.direction.name))

    def parseMove(self, data: Element) -> PiranhaMove:
        x, y = _coordinate(data.find("from"), "from")
        direction = data.findtext("direction", "").strip()
        try:
            return PiranhaMove(x, y, Direction[direction])
        except KeyError:
            raise IllegalMove(f"unknown direction {direction!r} (UP, UP_RIGHT, … UP_LEFT)") from None

    def apply(self, state: PiranhasState, move: PiranhaMove) -> PiranhasState:
        return state.apply(move)

    def end(self, state: PiranhasState) -> GameEnd | None:
        result = state.result()
        if result is None:
            return None
        return GameEnd(result.winner, result.reason.value, state.scores())

    def partsFor(self, state: PiranhasState) -> tuple[int, int]:
        return state.scores()


class KInARowAdapter:
    """Tic-tac-toe or gobang in the room layer (velhanet's own XML, documented above)."""

    fragments: tuple[tuple[str, str], ...] = (("Siegpunkte", "SUM"), ("Steine", "AVERAGE"))

    def __init__(self, gameType: str, rules: KInARowRules) -> None:
        self.gameType: str
        self.gameType, self.rules = gameType, rules

    def newGame(self, rng: random.Random) -> KInARowState:
        return self.rules.initial()

    def teamToMove(self, state: KInARowState) -> int | None:
        return state.toMove

    def stateElement(self, state: KInARowState) -> Element:
        rules = self.rules
        element = tag(
            "state",
            {
                "class": "state",
                "startTeam": "ONE",
                "turn": state.moveCount,
                "width": rules.width,
                "height": rules.height,
                "k": rules.k,
            },
        )
        if isinstance(state.lastMove, Place):
            element.append(tag("lastMove", None, tag("place", {"x": state.lastMove.x, "y": state.lastMove.y})))
        board = tag("board")
        for y in range(rules.height):
            row = tag("row")
            for x in range(rules.width):
                value = state.cells[y * rules.width + x]
                row.append(tag("field", None, "EMPTY" if value == EMPTY else TEAM_NAMES[value - 1]))
            board.append(row)
        element.append(board)
        return element

    def moveElement(self, move: object, name: str) -> Element:
        if isinstance(move, Place):
            return tag(name, None, tag("place", {"x": move.x, "y": move.y}))
        return tag(name, None, tag("pass"))

    def parseMove(self, data: Element) -> object:
        if data.find("pass") is not None:
            return PASS
        x, y = _coordinate(data.find("place"), "place")
        return Place(x, y)

    def apply(self, state: KInARowState, move: object) -> KInARowState:
        return state.apply(move)

    def end(self, state: KInARowState) -> GameEnd | None:
        outcome = state.outcome
        if outcome is None:
            return None
        stones = self.partsFor(state)
        if outcome.winner is None:
            return GameEnd(None, WinReason.TIE.value, stones)
        return GameEnd(outcome.winner, "%s hat eine Reihe vollendet", stones)

    def partsFor(self, state: KInARowState) -> tuple[int, int]:
        return state.cells.count(1), state.cells.count(2)


ADAPTERS: dict[str, GameAdapter] = {
    adapter.gameType: adapter
    for adapter in (
        PiranhasAdapter(),
        KInARowAdapter("velhanet_tictactoe", TICTACTOE),
        KInARowAdapter("velhanet_gobang", KInARowRules("gobang", 15, 15, 5, allowPass=True, earlyDraw=True)),
    )
}
DEFAULT_GAME = "swc_2026_piranhas"
