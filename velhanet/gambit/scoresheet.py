"""The client's scoresheet: the moves of its game as a chess player writes them, and the result.

``gambit-client`` shows each move with its number (``You played 12. Nf3``,
``bob played 12... Nc6``), ends with the whole game in one line, and with
``--pgn FILE`` appends the game to a PGN file. The session hands every move it
plays or accepts to the sheet; nothing here knows the network or the terminal
(the file is written through the function the client gives).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import chess

from velhanet.games.chessrecord import ChessRecord, pgnText, resultOf
from velhanet.i18n import _

_WINNER = re.compile(r"^(?:El jugador )?(?P<name>.+?) ha ganado la partida")
_LEFT = re.compile(r"^El jugador (?P<name>.+?) ha abandonado la partida")


def winnerResult(winnerIsWhite: bool) -> str:
    return "1-0" if winnerIsWhite else "0-1"


@dataclass
class Scoresheet:
    """One game's half-moves with numbers and times; its summary line and PGN at the end."""

    clock: Callable[[], float]
    keep: Callable[[str], None] | None = None
    """Where the PGN of the finished game goes (``--pgn FILE``); None: nowhere."""
    site: str = "?"
    record: ChessRecord = field(default_factory=ChessRecord)
    lastAt: float | None = None
    written: bool = False

    def begin(self) -> None:
        """The game has started: the first move's time counts from now."""
        self.lastAt = self.clock()

    def play(self, move: chess.Move) -> str:
        """Write a half-move down; its text with its number (``1. e4``, ``1... e5``)."""
        now = self.clock()
        seconds = None if self.lastAt is None else now - self.lastAt
        self.lastAt = now
        self.record.play(move, seconds)
        return self.record.numberedLast()

    def undo(self) -> None:
        """The server refused our last move: it is struck off."""
        if self.record.moves:
            self.record.undo()

    def resultFrom(self, serverText: str | None, user: str, opponent: str, colour: chess.Color) -> str:
        """The PGN result: the board's, the one the server's text carries, or who the text says won."""
        outcome = self.record.outcome()
        if outcome is not None:
            return outcome.result()
        carried = resultOf(serverText)
        if carried != "*" or not serverText:
            return carried
        for pattern, won in ((_WINNER, True), (_LEFT, False)):
            match = pattern.match(serverText.strip())
            if match and user != opponent and match.group("name") in (user, opponent):
                named = chess.WHITE if (match.group("name") == user) == (colour == chess.WHITE) else chess.BLACK
                return winnerResult(named == chess.WHITE if won else named == chess.BLACK)
        return "*"

    def finish(
        self,
        say: Callable[[str], None],
        user: str,
        opponent: str,
        colour: chess.Color,
        result: str | None = None,
        serverText: str | None = None,
        termination: str = "normal",
    ) -> None:
        """Once per game: say the whole game in one line, and keep its PGN (``result``: else L{resultFrom})."""
        if self.written:
            return
        self.written = True
        if result is None:
            result = self.resultFrom(serverText, user, opponent, colour)
        if self.record.moves:
            say(_("The game: {moves} {result}").format(moves=self.record.numbered(), result=result))
        if self.keep is not None:
            white, black = (user, opponent) if colour == chess.WHITE else (opponent, user)
            today = datetime.date.today()
            self.keep(pgnText(self.record.game(white, black, result, termination, site=self.site, date=today)))
