"""Piranhas game logs read back for a replay: every position, every move, the result.

A log is what ``socha-match --log-dir`` writes for each game (and what an
observer of a room sees): ``<protocol>`` holding ``<room>`` packets whose
``<data>`` is a ``memento`` per position, ``error`` for a refused move and
one ``result``. Bare ``<data>`` elements (no ``<room>`` around them) are read
the same way. Reading goes through the server's own L{XmlStreamReader}, so a
log from anyone is held to the server's limits (no entities, no DOCTYPE,
bounded size and depth).

The answer times are not in the XML (the official format has none);
``socha-match`` keeps them in ``summary.json`` next to the logs, per player,
and L{moveSeconds} puts them back in move order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from velhanet.games.piranhas import Direction, PiranhaMove
from velhanet.games.piranhasnotation import moveNotation
from velhanet.i18n import _
from velhanet.socha.adminprotocol import TEAMS, RoomReport, describeMove
from velhanet.socha.games import stateFromMemento
from velhanet.socha.wire import XmlError, XmlStreamReader

MAX_LOG_BYTES = 16 * 1024 * 1024
"""A Piranhas game of 60 turns is about 150 kB; anything far bigger is not a game log."""


class LogError(Exception):
    """The file is not a Piranhas game log that can be replayed; the message says why, in one line."""


class IncompleteLog(LogError):
    """No ``</protocol>`` yet: the log may still be being written."""


@dataclass
class ReplayedGame:
    """One game from its log: the positions (``cells`` of each), the moves between them, how it ended."""

    name: str
    players: tuple[str, str] = ("ONE", "TWO")
    startTeam: str = "ONE"
    positions: list[bytes] = field(default_factory=list)
    """The board before the first move, then after each move."""
    moves: list[str] = field(default_factory=list)
    result: str = ""
    """How it ended, as a person reads it (L{readLog} says when the log has no result)."""
    errors: list[str] = field(default_factory=list)


def readLog(raw: bytes, name: str = "log") -> ReplayedGame:
    """Parse a log's bytes; raise L{LogError} when they hold no game to replay."""
    if len(raw) > MAX_LOG_BYTES:
        raise LogError(_("{name}: {size} bytes, more than a game log holds").format(name=name, size=len(raw)))
    reader = XmlStreamReader()
    try:
        packets = reader.feed(raw)
    except XmlError as error:
        raise LogError(f"{name}: {error}") from None
    game = ReplayedGame(name)
    report = RoomReport()
    for packet in packets:
        data = packet.find("data") if packet.tag == "room" else packet if packet.tag == "data" else None
        if data is None:
            continue
        kind = data.get("class")
        if kind == "memento":
            _memento(game, data, name)
        elif kind == "error":
            game.errors.append(" ".join(data.get("message", "").split()))
        elif kind == "result":
            game.result = report.verdict(data)
            game.players = (report.names.get("ONE", "ONE"), report.names.get("TWO", "TWO"))
    if not game.positions:
        raise LogError(_("{name}: no Piranhas position in it").format(name=name))
    if not reader.closed:
        raise IncompleteLog(
            _("{name}: no </protocol> at the end (still being written, or cut short)").format(name=name)
        )
    game.result = game.result or _("no result in the log")
    return game


def _memento(game: ReplayedGame, data: Element, name: str) -> None:
    try:
        state = stateFromMemento(data)
    except (ValueError, KeyError) as error:
        raise LogError(
            _("{name}: memento of turn {turn}: {error}").format(name=name, turn=len(game.positions), error=error)
        ) from None
    element = data.find("state")
    if not game.positions and element is not None:
        game.startTeam = element.get("startTeam", "ONE")
    elif element is not None:
        game.moves.append(moveName(game.positions[-1], element.find("lastMove")))
    game.positions.append(state.cells)


def moveName(before: bytes, lastMove: Element | None) -> str:
    """The move from the position ``before`` as the site shows a Piranhas move, ``A4 → C4``
    (L{velhanet.games.piranhas.moveNotation}); what is no Piranhas move, as the admin's console writes it."""
    origin = lastMove.find("from") if lastMove is not None else None
    if lastMove is None or origin is None:
        return describeMove(lastMove)
    try:
        x, y = int(origin.get("x", "")), int(origin.get("y", ""))
        move = PiranhaMove(x, y, Direction[(lastMove.findtext("direction") or "").strip()])
    except (ValueError, KeyError):
        return describeMove(lastMove)
    return moveNotation(before, move)


def loadLog(path: Path) -> ReplayedGame:
    """A log file (raises L{LogError}, also for a file that cannot be read)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_LOG_BYTES + 1)
    except OSError as error:
        raise LogError(f"{path}: {error.strerror or error}") from None
    return readLog(data, path.name)


def moveSeconds(game: ReplayedGame, entry: dict[str, Any] | None) -> Sequence[float | None]:
    """Each move's answer time from a ``summary.json`` game entry (None each when there is none).

    The entry has each player's times in order (``answerTimes``) and which
    player was team ONE (``teamOne``); moves alternate from the start team.
    """
    unknown: list[float | None] = [None] * len(game.moves)
    if not entry or "answerTimes" not in entry or "teamOne" not in entry:
        return unknown
    teamOne = int(entry["teamOne"])
    playerOf = {"ONE": teamOne, "TWO": 1 - teamOne}
    other = TEAMS[1 - TEAMS.index(game.startTeam)] if game.startTeam in TEAMS else "TWO"
    queues = [list(entry["answerTimes"][0]), list(entry["answerTimes"][1])]
    seconds: list[float | None] = []
    for turn in range(1, len(game.moves) + 1):
        queue = queues[playerOf[game.startTeam if turn % 2 == 1 else other]]
        seconds.append(float(queue.pop(0)) if queue else None)
    return seconds
