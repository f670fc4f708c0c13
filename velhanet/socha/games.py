"""Games offered through the Software-Challenge room layer, and their XML.

A room hosts every game through two small typing Protocols, checked by mypy
against each game below: a L{GameType} starts a L{HostedGame}, and a hosted
game answers who moves, writes the ``<state>`` of a memento, plays a move read
from ``<data class="move">`` and says how it ended. The engine underneath is
an L{IGameState} (``apply``, ``toMove``); what is socha's own (the XML
shapes, the result's texts and score parts) lives here, not in the engines.

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
import typing
from dataclasses import dataclass
from xml.etree.ElementTree import Element

from velhanet.games.interfaces import IllegalMove
from velhanet.games.kinarow import EMPTY, PASS, TICTACTOE, KInARowRules, KInARowState, Place
from velhanet.games.piranhas import (
    FIELD_NAMES,
    FIELD_VALUES,
    SIZE,
    TEAM_NAMES,
    Direction,
    PiranhaMove,
    PiranhasState,
    WinReason,
)
from velhanet.games.piranhassetup import PiranhasRules
from velhanet.socha.wire import Prerendered, pad, tag


@dataclass(frozen=True)
class GameEnd:
    winner: int | None
    """Team index (0 = ONE) or None for a draw."""
    reason: str
    """With ``%s`` where the winner's name goes."""
    swarms: tuple[int, int]
    """The second score part of each team."""


class HostedGame(typing.Protocol):
    """One game in a room: the position so far and what the room asks of it."""

    @property
    def toMove(self) -> int | None:
        """The team to move (0 = ONE), None once the game is over."""

    def stateElement(self) -> Element:
        """The ``<state>`` of the next memento."""

    def play(self, data: Element) -> None:
        """Play the move in ``<data class="move">``; L{IllegalMove} if it is not one, or not allowed."""

    def end(self) -> GameEnd | None:
        """How the game ended by its rules, or None while it goes on."""

    def parts(self) -> tuple[int, int]:
        """Each team's second score part now (for a result that is not the rules' own)."""


class GameType(typing.Protocol):
    """A game a room can host: its ``gameType`` and its score definition."""

    @property
    def gameType(self) -> str: ...

    @property
    def fragments(self) -> tuple[tuple[str, str], ...]:
        """(name, aggregation) of each score part of a result, the victory points first."""

    def newGame(self, rng: random.Random) -> HostedGame: ...


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


class PiranhasGame:
    """``swc_2026_piranhas``, exactly in the official shapes (``docs/socha.md``)."""

    def __init__(self, state: PiranhasState) -> None:
        self.state = state
        self.before: PiranhasState | None = None
        """The position before the last move: where its fish came from (the spectators' move text)."""

    @property
    def toMove(self) -> int | None:
        return self.state.toMove

    def stateElement(self) -> Element:
        state = self.state
        firstUnion = TEAM_NAMES[state.firstUnion] if state.firstUnion is not None else None
        element = tag("state", {"class": "state", "startTeam": "ONE", "turn": state.turn, "firstUnion": firstUnion})
        if state.lastMove is not None:
            move = state.lastMove
            origin = tag("from", {"x": move.x, "y": move.y})
            element.append(tag("lastMove", None, origin, tag("direction", None, move.direction.name)))
        cells = state.cells
        element.append(Prerendered("board", lambda level: _boardXml(cells, level)))
        return element

    def play(self, data: Element) -> None:
        x, y = _coordinate(data.find("from"), "from")
        direction = data.findtext("direction", "").strip()
        try:
            move = PiranhaMove(x, y, Direction[direction])
        except KeyError:
            raise IllegalMove(f"unknown direction {direction!r} (UP, UP_RIGHT, … UP_LEFT)") from None
        before = self.state
        self.state = before.apply(move)
        self.before = before

    def end(self) -> GameEnd | None:
        result = self.state.result()
        if result is None:
            return None
        return GameEnd(result.winner, result.reason.value, self.state.scores())

    def parts(self) -> tuple[int, int]:
        return self.state.scores()


def stateFromMemento(data: Element) -> PiranhasState:
    """The position in a ``<data class="memento">`` element: what L{PiranhasGame.stateElement} wrote."""
    state = data.find("state")
    if state is None:
        raise ValueError("a memento without <state>")
    cells = bytes(
        FIELD_VALUES[(field.text or "").strip()] for row in state.findall("board/row") for field in row.findall("field")
    )
    if len(cells) != SIZE * SIZE:
        raise ValueError(f"a board of {len(cells)} fields, not {SIZE * SIZE}")
    return PiranhasState(cells, int(state.get("turn", "0")))


def moveData(move: PiranhaMove) -> str:
    """``<data class="move">`` of a Piranhas move: what L{PiranhasGame.play} reads."""
    return (
        f'<data class="move"><from x="{move.x}" y="{move.y}"/>'
        f"<direction>{move.direction.name}</direction></data>"
    )


class PiranhasType:
    gameType = "swc_2026_piranhas"
    fragments = (("Siegpunkte", "SUM"), ("Schwarmgröße", "AVERAGE"))

    def __init__(self) -> None:
        self.rules = PiranhasRules()

    def newGame(self, rng: random.Random) -> PiranhasGame:
        return PiranhasGame(self.rules.initial(rng))


class KInARowGame:
    """Tic-tac-toe or gobang in a room (velhanet's own XML, documented above)."""

    def __init__(self, rules: KInARowRules) -> None:
        self.rules = rules
        self.state: KInARowState = rules.initial()

    @property
    def toMove(self) -> int | None:
        return self.state.toMove

    def stateElement(self) -> Element:
        rules, state = self.rules, self.state
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

    def play(self, data: Element) -> None:
        move = PASS if data.find("pass") is not None else Place(*_coordinate(data.find("place"), "place"))
        self.state = self.state.apply(move)

    def end(self) -> GameEnd | None:
        outcome = self.state.outcome
        if outcome is None:
            return None
        stones = self.parts()
        if outcome.winner is None:
            return GameEnd(None, WinReason.TIE.value, stones)
        return GameEnd(outcome.winner, "%s hat eine Reihe vollendet", stones)

    def parts(self) -> tuple[int, int]:
        return self.state.cells.count(1), self.state.cells.count(2)


class KInARowType:
    fragments = (("Siegpunkte", "SUM"), ("Steine", "AVERAGE"))

    def __init__(self, gameType: str, rules: KInARowRules) -> None:
        self.gameType = gameType
        self.rules = rules

    def newGame(self, rng: random.Random) -> KInARowGame:
        return KInARowGame(self.rules)


_OFFERED: tuple[GameType, ...] = (
    PiranhasType(),
    KInARowType("velhanet_tictactoe", TICTACTOE),
    KInARowType("velhanet_gobang", KInARowRules("gobang", 15, 15, 5, allowPass=True, earlyDraw=True)),
)
GAME_TYPES: dict[str, GameType] = {game.gameType: game for game in _OFFERED}
DEFAULT_GAME = "swc_2026_piranhas"
