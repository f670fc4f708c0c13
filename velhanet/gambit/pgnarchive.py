"""``gambit-server --pgn-dir DIR``: every finished game as a PGN file, so that a class keeps its games.

The archive is one more watcher of the rooms (L{velhanet.watching.GameWatcher}):
it hears each move as the room relays it, with the time it took, and when the
game ends writes ``DIR/<date>-<number>-<white>-<black>.pgn`` through python-chess's
PGN writer (L{velhanet.games.chessrecord}). A room without ``--pgn-dir`` never
meets it (L{velhanet.watching.NO_WATCHER}); with it, a move costs one small
tuple until the game ends.

A server run with ``--no-validate`` relays moves it does not check: the file
then holds the game up to its first move that is not legal chess, says so in
a comment, and its result is ``*``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from velhanet.games.chessrecord import ChessRecord, pgnText, resultOf
from velhanet.i18n import _
from velhanet.watching import UNWATCHED, Position, Score, WatchedGame

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _fileSafe(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._")[:40] or "player"


class PgnArchive:
    """The watcher that writes one PGN file per finished chess game into ``directory``."""

    log = Logger(namespace="velhanet.gambit.pgn")

    def __init__(
        self,
        directory: Path,
        clock: IReactorTime,
        site: str = "?",
        today: Callable[[], datetime.date] = datetime.date.today,
    ) -> None:
        self.directory, self.clock, self.site, self.today = directory, clock, site, today
        self.count = 0

    def started(
        self, family: str, gameType: str, players: Iterable[str], position: Position, hidden: bool = False
    ) -> WatchedGame:
        if gameType != "chess":
            return UNWATCHED
        self.count += 1
        white, black = (*players, "?", "?")[:2]
        return ArchivedGame(self, self.count, white, black, self.clock.seconds())

    def write(self, game: ArchivedGame, result: str, score: Score | None) -> Path | None:
        """The finished game's file; None (and a log line) when it cannot be written."""
        record = ChessRecord()
        stopped: str | None = None
        for text, seconds in game.moves:
            try:
                record.play(text, seconds)
            except ValueError:
                stopped = text
                break
        pgnResult = score.result if score is not None else resultOf(result)
        termination = score.termination if score is not None else None
        if stopped is not None:
            pgnResult, termination = "*", "unterminated"
        date = self.today()
        text = pgnText(
            record.game(
                game.white,
                game.black,
                result=pgnResult,
                termination=termination,
                site=self.site,
                date=date,
            )
        )
        if stopped is not None:
            comment = _("the server relayed {move!r}, which is not legal here").format(move=stopped)
            text = text.rstrip("\n") + "\n{" + comment + "}\n"
        name = f"{date:%Y-%m-%d}-{game.number:04d}-{_fileSafe(game.white)}-{_fileSafe(game.black)}.pgn"
        path = self.directory / name
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            self.log.error(_("cannot write the PGN of game {number}: {error}"), number=game.number, error=error)
            return None
        self.log.info(_("game {number} written to {path}"), number=game.number, path=str(path))
        return path


class ArchivedGame:
    """One game's moves as the room relays them, with the seconds each took, until it ends."""

    def __init__(self, archive: PgnArchive, number: int, white: str, black: str, startedAt: float) -> None:
        self.archive, self.number, self.white, self.black = archive, number, white, black
        self.lastAt = startedAt
        self.moves: list[tuple[str, float]] = []
        self.done = False

    def moved(self, text: str) -> None:
        now = self.archive.clock.seconds()
        self.moves.append((text, now - self.lastAt))
        self.lastAt = now

    def ended(self, result: str, score: Score | None = None) -> None:
        if not self.done:
            self.done = True
            self.archive.write(self, result, score)
