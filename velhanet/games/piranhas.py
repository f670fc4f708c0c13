"""Piranhas, the Software-Challenge game of season 2026 (``swc_2026_piranhas``).

Rules as the official server plays them (backend ``games/piranhas``, formerly
``plugin2026``, checked against v27.0.4; its own rule tests are transcribed in
``tests/test_piranhas_official.py``):

- a 10×10 board, (x, y) from the bottom-left corner, UP = +y;
- team ONE starts on the left and right edges (x = 0 and 9, y = 1…8), team
  TWO on the bottom and top edges (y = 0 and 9, x = 1…8); fish sizes are
  random (S:M:L = 4:3:2) but symmetric (ONE at (0, i) has the size of TWO at
  (i, 0), ONE at (9, i) that of TWO at (i, 9)); two squids lie in the inner
  block 2…7, never on one row, column or diagonal;
- a move takes one of your fish in one of 8 directions, exactly as far as
  there are fish (of both teams, the mover included) on that whole line;
  it may jump over own fish and squids but not over the opponent's, must end
  on the board, not on a squid nor on an own fish, and eats an opponent fish
  it lands on;
- a team's fish are "connected" when they form one swarm (8-connected
  group); a team with no fish left is not connected, and its greatest swarm
  weighs -1 (the official ``greatestSwarmSize`` of no fish);
- the game ends after a full round (even turn) when a team is connected, when
  the player to move cannot move, or after 60 turns;
- the winner: if a team is connected, the heavier heaviest swarm (S=1, M=2,
  L=3), on equal weight the team that was connected first (checked after each
  move, ONE before TWO), else a draw; else a player who cannot move loses (at
  the round limit too); else (round limit) the heavier heaviest swarm, or a
  draw.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from zope.interface import implementer

from velhanet.games.interfaces import IGameState, IllegalMove, Outcome

SIZE: Final = 10
ROUND_LIMIT: Final = 30
ONE, TWO = 0, 1
TEAM_NAMES: Final = ("ONE", "TWO")

EMPTY: Final = 0
SQUID: Final = 7
# Team ONE fish are 1..3 (S, M, L), team TWO fish 4..6.
FIELD_NAMES: Final = ("EMPTY", "ONE_S", "ONE_M", "ONE_L", "TWO_S", "TWO_M", "TWO_L", "SQUID")
FIELD_VALUES: Final = {name: value for value, name in enumerate(FIELD_NAMES)}


def fish(team: int, size: int) -> int:
    return team * 3 + size


_TEAM_OF: Final = (None, ONE, ONE, ONE, TWO, TWO, TWO, None)


def teamOf(value: int) -> int | None:
    return _TEAM_OF[value] if 0 <= value < len(_TEAM_OF) else None


def weightOf(value: int) -> int:
    return (value - 1) % 3 + 1 if 1 <= value <= 6 else 0


class Direction(Enum):
    UP = (0, 1)
    UP_RIGHT = (1, 1)
    RIGHT = (1, 0)
    DOWN_RIGHT = (1, -1)
    DOWN = (0, -1)
    DOWN_LEFT = (-1, -1)
    LEFT = (-1, 0)
    UP_LEFT = (-1, 1)


DIRECTIONS: Final = tuple(Direction)


@dataclass(frozen=True, slots=True)
class PiranhaMove:
    x: int
    y: int
    direction: Direction

    def __str__(self) -> str:
        return f"({self.x}, {self.y}) {self.direction.name}"


class WinReason(Enum):
    BIGGER_SWARM = "%s hat den größeren zusammenhängenden Schwarm"
    FIRST_UNION = "%s hat zuerst alle Fische einer Farbe vereinigt"
    BLOCKED = "%s hat den Gegner blockiert, sodass er keinen Zug mehr machen kann"
    TIE = "Beide Spieler sind gleichauf"


_STEPS: Final = tuple((direction, direction.value[0], direction.value[1]) for direction in DIRECTIONS)
"""Each direction with its (dx, dy): reading an Enum member's value costs a descriptor call."""


def _line(cells: bytes, x: int, y: int, dx: int, dy: int) -> int:
    """Fish (both teams) on the whole line through (x, y) along the axis of (dx, dy)."""
    count = 0
    for sign in (1, -1):
        cx, cy = (x, y) if sign == 1 else (x - dx, y - dy)
        while 0 <= cx < SIZE and 0 <= cy < SIZE:
            if 1 <= cells[cy * SIZE + cx] <= 6:
                count += 1
            cx, cy = cx + sign * dx, cy + sign * dy
    return count


def _lineCounts(cells: bytes) -> tuple[list[int], list[int], list[int], list[int]]:
    """Fish per row, column, diagonal (x - y) and anti-diagonal (x + y): every move's distance."""
    rows, columns = [0] * SIZE, [0] * SIZE
    diagonals, antiDiagonals = [0] * (2 * SIZE - 1), [0] * (2 * SIZE - 1)
    for index, value in enumerate(cells):
        if 1 <= value <= 6:
            y, x = divmod(index, SIZE)
            rows[y] += 1
            columns[x] += 1
            diagonals[x - y + SIZE - 1] += 1
            antiDiagonals[x + y] += 1
    return rows, columns, diagonals, antiDiagonals


def _target(cells: bytes, team: int, x: int, y: int, dx: int, dy: int, distance: int) -> tuple[int, int] | str:
    """Where a fish of ``team`` at (x, y) lands going ``distance`` along (dx, dy), or the rule it breaks."""
    tx, ty = x + dx * distance, y + dy * distance
    if not (0 <= tx < SIZE and 0 <= ty < SIZE):
        return "DESTINATION_OUT_OF_BOUNDS"
    opponent = TWO if team == ONE else ONE
    for step in range(1, distance):
        if _TEAM_OF[cells[(y + dy * step) * SIZE + x + dx * step]] == opponent:
            return "JUMP_OVER_OPPONENT"
    target = cells[ty * SIZE + tx]
    if target == SQUID:
        return "DESTINATION_BLOCKED"
    if _TEAM_OF[target] == team:
        return "DESTINATION_BLOCKED_BY_SELF"
    return tx, ty


def movementDistance(cells: bytes, move: PiranhaMove) -> int:
    """How far ``move`` goes: the fish (both teams, the mover included) on its whole line."""
    dx, dy = move.direction.value
    return _line(cells, move.x, move.y, dx, dy)


def checkMove(cells: bytes, team: int, move: PiranhaMove) -> tuple[int, int] | str:
    """The target of a legal move by ``team``, or the name of the rule it breaks.

    The mistakes are the official server's (``GameState.performMoveDirectly``):
    a start field without a fish of ``team`` (empty, too) is ``WRONG_START``;
    then ``GameRuleLogic.checkMove`` walks the path, so an opponent's fish on it
    is ``JUMP_OVER_OPPONENT`` even when the move would also leave the board.
    """
    x, y = move.x, move.y
    if not (0 <= x < SIZE and 0 <= y < SIZE):
        return "START_OUT_OF_BOUNDS"
    if teamOf(cells[y * SIZE + x]) != team:
        return "WRONG_START"
    dx, dy = move.direction.value
    distance = _line(cells, x, y, dx, dy)
    checked = _target(cells, team, x, y, dx, dy, distance)
    if checked == "DESTINATION_OUT_OF_BOUNDS":
        opponent = TWO if team == ONE else ONE
        for step in range(1, distance):
            cx, cy = x + dx * step, y + dy * step
            if not (0 <= cx < SIZE and 0 <= cy < SIZE):
                break
            if _TEAM_OF[cells[cy * SIZE + cx]] == opponent:
                return "JUMP_OVER_OPPONENT"
    return checked


MISTAKE_TEXT: Final = {
    "START_OUT_OF_BOUNDS": "the start field is not on the board",
    "WRONG_START": "the start field holds no fish of the own team",
    "DESTINATION_OUT_OF_BOUNDS": "the move would leave the board",
    "JUMP_OVER_OPPONENT": "the move would jump over an opponent's fish",
    "DESTINATION_BLOCKED": "the target field holds a squid",
    "DESTINATION_BLOCKED_BY_SELF": "the target field holds an own fish",
}


def _neighbours(index: int) -> tuple[int, ...]:
    y, x = divmod(index, SIZE)
    return tuple(
        ny * SIZE + nx
        for ny in (y - 1, y, y + 1)
        for nx in (x - 1, x, x + 1)
        if (nx, ny) != (x, y) and 0 <= nx < SIZE and 0 <= ny < SIZE
    )


_NEIGHBOURS: Final = tuple(_neighbours(index) for index in range(SIZE * SIZE))
"""The 8-connected neighbours of every field, once: a swarm walk then does no arithmetic."""


def swarms(cells: bytes, team: int) -> list[list[int]]:
    """The team's fish grouped in 8-connected swarms (field indexes)."""
    own = {i for i, value in enumerate(cells) if _TEAM_OF[value] == team}
    groups: list[list[int]] = []
    while own:
        group = [own.pop()]
        for index in group:  # the list grows while it is walked: a breadth-first search
            for neighbour in _NEIGHBOURS[index]:
                if neighbour in own:
                    own.remove(neighbour)
                    group.append(neighbour)
        groups.append(group)
    return groups


def heaviestSwarm(cells: bytes, team: int) -> int:
    """The weight of the team's heaviest swarm; -1 when it has no fish (the official score part)."""
    return max((sum(weightOf(cells[i]) for i in group) for group in swarms(cells, team)), default=-1)


def isConnected(cells: bytes, team: int) -> bool:
    """Whether the team's fish form one swarm: one walk from any fish reaches them all.

    A team with no fish is not connected (the official ``isSwarmConnected``)."""
    own = {i for i, value in enumerate(cells) if _TEAM_OF[value] == team}
    if not own:
        return False
    group = [own.pop()]
    for index in group:
        for neighbour in _NEIGHBOURS[index]:
            if neighbour in own:
                own.remove(neighbour)
                group.append(neighbour)
    return not own


def _legalMoves(cells: bytes, team: int) -> Iterator[PiranhaMove]:
    """The team's legal moves, lazily: the line counts are taken once for all of them."""
    rows, columns, diagonals, antiDiagonals = _lineCounts(cells)
    for index, value in enumerate(cells):
        if _TEAM_OF[value] != team:
            continue
        y, x = divmod(index, SIZE)
        for direction, dx, dy in _STEPS:
            if dx == 0:
                distance = columns[x]
            elif dy == 0:
                distance = rows[y]
            elif dx == dy:
                distance = diagonals[x - y + SIZE - 1]
            else:
                distance = antiDiagonals[x + y]
            if type(_target(cells, team, x, y, dx, dy, distance)) is tuple:
                yield PiranhaMove(x, y, direction)


def legalMovesFor(cells: bytes, team: int) -> list[PiranhaMove]:
    return list(_legalMoves(cells, team))


def hasLegalMove(cells: bytes, team: int) -> bool:
    """Can ``team`` move at all? Stops at the first legal move found."""
    return next(_legalMoves(cells, team), None) is not None


@dataclass(frozen=True, slots=True)
class GameResult:
    """The end of a game: the winning team (None = draw) and why."""

    winner: int | None
    reason: WinReason


@implementer(IGameState)
@dataclass(frozen=True, slots=True)
class PiranhasState:
    """An immutable Piranhas position. ``cells[y * 10 + x]`` holds a field value."""

    cells: bytes
    turn: int = 0
    lastMove: PiranhaMove | None = None
    firstUnion: int | None = None
    _memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    """What was computed about this (immutable) position: a server asks the same questions
    several times per move (who moves, is it over, the result, the legal moves)."""

    @property
    def currentTeam(self) -> int:
        return self.turn % 2

    @property
    def toMove(self) -> int | None:
        return None if self.result() is not None else self.currentTeam

    @property
    def moveCount(self) -> int:
        return self.turn

    @property
    def outcome(self) -> Outcome | None:
        result = self.result()
        if result is None:
            return None
        return Outcome(result.winner, result.reason.name.lower())

    def field(self, x: int, y: int) -> str:
        return FIELD_NAMES[self.cells[y * SIZE + x]]

    def legalMoves(self) -> list[PiranhaMove]:
        if self.isOver():
            return []
        moves = self._memo.get("moves")
        if moves is None:
            moves = self._memo["moves"] = legalMovesFor(self.cells, self.currentTeam)
        return list(moves)  # type: ignore[call-overload]

    def _anyConnected(self) -> bool:
        connected = self._memo.get("connected")
        if connected is None:
            connected = self._memo["connected"] = any(isConnected(self.cells, team) for team in (ONE, TWO))
        return bool(connected)

    def _canMove(self) -> bool:
        canMove = self._memo.get("canMove")
        if canMove is None:
            canMove = self._memo["canMove"] = hasLegalMove(self.cells, self.currentTeam)
        return bool(canMove)

    def isOver(self) -> bool:
        if self.turn % 2 == 0 and self._anyConnected():
            return True
        if self.turn // 2 >= ROUND_LIMIT:
            return True
        return not self._canMove()

    def result(self) -> GameResult | None:
        if "result" not in self._memo:
            self._memo["result"] = self._result()
        return self._memo["result"]  # type: ignore[return-value]

    def _result(self) -> GameResult | None:
        if not self.isOver():
            return None
        weights = (heaviestSwarm(self.cells, ONE), heaviestSwarm(self.cells, TWO))
        heavier = None if weights[0] == weights[1] else (ONE if weights[0] > weights[1] else TWO)
        if self._anyConnected():
            if heavier is not None:
                return GameResult(heavier, WinReason.BIGGER_SWARM)
            if self.firstUnion is not None:
                return GameResult(self.firstUnion, WinReason.FIRST_UNION)
            return GameResult(None, WinReason.TIE)
        if not self._canMove():
            return GameResult(1 - self.currentTeam, WinReason.BLOCKED)
        if heavier is not None:
            return GameResult(heavier, WinReason.BIGGER_SWARM)
        return GameResult(None, WinReason.TIE)

    def scores(self) -> tuple[int, int]:
        """The heaviest swarm of each team: the second score part (-1 for a team with no fish)."""
        return heaviestSwarm(self.cells, ONE), heaviestSwarm(self.cells, TWO)

    def apply(self, move: object, player: int | None = None) -> PiranhasState:
        if self.isOver():
            raise IllegalMove("the game is already over")
        team = self.currentTeam
        if player is not None and player != team:
            raise IllegalMove(f"it is not team {TEAM_NAMES[player]}'s turn: {TEAM_NAMES[team]} is to move")
        if not isinstance(move, PiranhaMove):
            raise IllegalMove(f"not a Piranhas move: {move!r}")
        checked = checkMove(self.cells, team, move)
        if isinstance(checked, str):
            raise IllegalMove(f"{checked}: {MISTAKE_TEXT[checked]} (move {move})")
        tx, ty = checked
        cells = bytearray(self.cells)
        cells[ty * SIZE + tx] = cells[move.y * SIZE + move.x]
        cells[move.y * SIZE + move.x] = EMPTY
        after = bytes(cells)
        firstUnion = self.firstUnion
        if firstUnion is None:
            for candidate in (ONE, TWO):  # the official order, whoever moved
                if isConnected(after, candidate):
                    firstUnion = candidate
                    break
            state = PiranhasState(after, self.turn + 1, move, firstUnion)
            # Both teams were just checked: the end-of-round check needs no second walk.
            state._memo["connected"] = firstUnion is not None
            return state
        return PiranhasState(after, self.turn + 1, move, firstUnion)
