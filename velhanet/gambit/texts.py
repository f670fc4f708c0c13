"""What the Gambit server says on the wire, in the language it was started with (``--language``; Spanish by default).

The original server is Spanish and its client shows the server's words
inside Spanish screens ("LA PARTIDA HA TERMINADO", "Has perdido la
partida"); a class that uses the original client wants the server in
Spanish, so that is the default. Where the original server has a text
("El jugador X ha abandonado la partida", "X ha ganado la partida", "No se
puede usar el mismo nombre que el oponente") velhanet uses its words
exactly (L{ORIGINAL}: in every language, as the scoresheets read them); the
rest are velhanet's own, in the catalogs (L{MESSAGES}, L{velhanet.i18n}).

The same words say a chess game's end and a refused move in any other
language: the client's (the process's), a spectators' page's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import chess

from velhanet import i18n
from velhanet.games.chessgame import MOVE_PROBLEMS, TERMINATIONS, MoveRefused
from velhanet.i18n import N_
from velhanet.watching import Score

WIRE_LANGUAGE: Final = "es"
"""The language of the server's words when ``--language`` does not say: the original server's."""

ORIGINAL: Final = {
    "abandoned": "El jugador {name} ha abandonado la partida",
    "won": "{name} ha ganado la partida",
}
"""The original server's own words, sent as it sends them whatever the language (clients read them)."""

ORIGINAL_SPANISH: Final = {"sameName": "No se puede usar el mismo nombre que el oponente"}
"""The original server's words where velhanet's own say more: sent as they are by a server speaking Spanish."""

MESSAGES: Final = {
    "nameRequired": N_("a user name is required in 'user'"),
    "nameTooLong": N_("the user name is longer than {limit} characters"),
    "alreadyInGame": N_("you are already in game {game}"),
    "noFreeId": N_("the server has no free game id; try again later"),
    "noSuchGame": N_("there is no open game {game!r}"),
    "gameFull": N_("game {game} already has two players"),
    "sameName": N_("you cannot use the same name as your opponent ({name!r})"),
    "outsideGame": N_("{verb} outside a game: send CREATE or JOIN first"),
    "badMessage": N_("bad message: {reason}"),
    "unknownCmd": N_("unknown cmd {cmd} (ERROR=0 OK=1 CREATE=2 JOIN=3 MOVE=4 END=5 DRAW=6)"),
    "noOpponentYet": N_("game {game} has no opponent yet: wait for the OK with its name"),
    "notYourTurn": N_("not your turn: {side} is to move"),
    "moveRefused": N_("move refused: {reason}"),
    "drawOffer": N_("{name} offers a draw"),
    "drawOfferSent": N_("draw offered to {name}"),
    "drawOfferStands": N_("your draw offer to {name} still stands: it is not sent again"),
    "floodedOpponent": N_("{name} has not read the last {count} messages you sent: closing your connection"),
    "joinsRefusedForAWhile": N_("too many JOINs to games that are not open from your address: wait {seconds} s"),
}
"""velhanet's own words on the wire, by key (the English text is the catalogs' msgid)."""

SIDES: Final = {chess.WHITE: N_("White"), chess.BLACK: N_("Black")}


class Texts:
    """The server's words in one language; every call returns the text of one message."""

    def __init__(self, language: str = WIRE_LANGUAGE) -> None:
        self.words = i18n.language(language)
        self.language = self.words.code

    def __call__(self, key: str, **details: object) -> str:
        if key in ORIGINAL:
            return ORIGINAL[key].format(**details)
        if self.language == "es" and key in ORIGINAL_SPANISH:
            return ORIGINAL_SPANISH[key]
        return self.words.gettext(MESSAGES[key]).format(**details)

    def tooManyBad(self, count: int) -> str:
        return self.words.ngettext(
            "{count} bad message in a row: closing the connection",
            "{count} bad messages in a row: closing the connection",
            count,
        ).format(count=count)

    def tooManyFailedJoins(self, count: int) -> str:
        return self.words.ngettext(
            "{count} JOIN to a game that is not open: closing the connection",
            "{count} JOINs to games that are not open: closing the connection",
            count,
        ).format(count=count)

    def side(self, colour: chess.Color) -> str:
        return self.words.gettext(SIDES[colour])

    def problem(self, error: Exception) -> str:
        """Why a move is not legal, in this language (``e7e5 is not legal here: …``)."""
        if not isinstance(error, MoveRefused):
            return str(error)
        details = dict(error.details)
        if "side" in details:
            details["side"] = self.side(chess.WHITE if details["side"] == "White" else chess.BLACK)
        return self.words.gettext(MOVE_PROBLEMS[error.kind]).format(**details)

    def refused(self, error: Exception) -> str:
        """Why a move was refused, in this language."""
        return self("moveRefused", reason=self.problem(error))

    def describe(self, outcome: chess.Outcome) -> str:
        """How a game ended by the rules: ``Black wins by checkmate``."""
        termination = TERMINATIONS.get(outcome.termination)
        reason = self.words.gettext(termination) if termination else outcome.termination.name.lower()
        if outcome.winner is None:
            return self.words.gettext(N_("draw by {reason}")).format(reason=reason)
        return self.words.gettext(N_("{side} wins by {reason}")).format(side=self.side(outcome.winner), reason=reason)

    def outcome(self, outcome: chess.Outcome) -> str:
        """The end of a game, with its PGN result: ``Black wins by checkmate (0-1)``."""
        return f"{self.describe(outcome)} ({outcome.result()})"

    def agreed(self) -> str:
        return self.words.gettext(N_("draw by agreement")) + " (1/2-1/2)"

    def ended(self, score: Score, outcome: chess.Outcome | None, players: Sequence[str]) -> str:
        """A room's end as a spectator reads it in this language, from its score (and the board's ``outcome``)."""
        if outcome is not None and outcome.result() == score.result:
            return self.outcome(outcome)
        if score.result == "1/2-1/2":
            return self.agreed()
        white, black = (*players, "?", "?")[:2]
        if score.result not in ("1-0", "0-1"):
            return score.result
        winner, loser = (white, black) if score.result == "1-0" else (black, white)
        if score.termination == "abandoned":
            text = self.words.gettext(N_("{name} left the game")).format(name=loser)
        else:
            text = self.words.gettext(N_("{name} wins")).format(name=winner)
        return f"{text} ({score.result})"
