"""What the Gambit server says, in English or in Spanish (``--language en|es``).

The original server is Spanish and its client shows the server's words
inside Spanish screens ("LA PARTIDA HA TERMINADO", "Has perdido la
partida"); a class that uses the original client wants the server in
Spanish, so that is the default. Where the original server has a text
("El jugador X ha abandonado la partida", "X ha ganado la partida", "No se
puede usar el mismo nombre que el oponente") velhanet uses its words
exactly; the rest are velhanet's own.
"""

from __future__ import annotations

from typing import Final

import chess

from velhanet.games.chessgame import TERMINATIONS, MoveRefused

LANGUAGES: Final = ("es", "en")
DEFAULT_LANGUAGE: Final = "es"

_TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "nameRequired": "a user name is required in 'user'",
        "nameTooLong": "the user name is longer than {limit} characters",
        "alreadyInGame": "you are already in game {game}",
        "noFreeId": "the server has no free game id; try again later",
        "noSuchGame": "there is no open game {game!r}",
        "gameFull": "game {game} already has two players",
        "sameName": "you cannot use the same name as your opponent ({name!r})",
        "outsideGame": "{verb} outside a game: send CREATE or JOIN first",
        "badMessage": "bad message: {reason}",
        "unknownCmd": "unknown cmd {cmd} (ERROR=0 OK=1 CREATE=2 JOIN=3 MOVE=4 END=5 DRAW=6)",
        "noOpponentYet": "game {game} has no opponent yet: wait for the OK with its name",
        "notYourTurn": "not your turn: {side} is to move",
        "moveRefused": "move refused: {reason}",
        "abandoned": "El jugador {name} ha abandonado la partida",
        "won": "{name} ha ganado la partida",
        "drawOffer": "{name} offers a draw",
        "drawOfferSent": "draw offered to {name}",
        "drawOfferStands": "your draw offer to {name} still stands: it is not sent again",
        "tooManyBad": "{count} bad messages in a row: closing the connection",
        "floodedOpponent": "{name} has not read the last {count} messages you sent: closing your connection",
        "tooManyFailedJoins": "{count} JOINs to games that are not open: closing the connection",
        "joinsRefusedForAWhile": "too many JOINs to games that are not open from your address: wait {seconds} s",
        "agreed": "draw by agreement",
        "White": "White",
        "Black": "Black",
        "wins": "{side} wins by {reason}",
        "drawBy": "draw by {reason}",
    },
    "es": {
        "nameRequired": "Hace falta un nombre de usuario en 'user'",
        "nameTooLong": "El nombre de usuario tiene más de {limit} caracteres",
        "alreadyInGame": "Ya estás en la partida {game}",
        "noFreeId": "El servidor no tiene identificadores libres; inténtalo más tarde",
        "noSuchGame": "No hay ninguna partida abierta {game!r}",
        "gameFull": "La partida {game} ya tiene dos jugadores",
        "sameName": "No se puede usar el mismo nombre que el oponente",
        "outsideGame": "{verb} fuera de una partida: envía antes CREATE o JOIN",
        "badMessage": "Mensaje incorrecto: {reason}",
        "unknownCmd": "Cmd desconocido {cmd} (ERROR=0 OK=1 CREATE=2 JOIN=3 MOVE=4 END=5 DRAW=6)",
        "noOpponentYet": "La partida {game} aún no tiene oponente: espera el OK con su nombre",
        "notYourTurn": "No es tu turno: mueven las {side}",
        "moveRefused": "Movimiento rechazado: {reason}",
        "abandoned": "El jugador {name} ha abandonado la partida",
        "won": "{name} ha ganado la partida",
        "drawOffer": "{name} ofrece tablas",
        "drawOfferSent": "Tablas ofrecidas a {name}",
        "drawOfferStands": "Tu oferta de tablas a {name} sigue en pie: no se envía otra vez",
        "tooManyBad": "{count} mensajes incorrectos seguidos: se cierra la conexión",
        "floodedOpponent": "{name} no ha leído los últimos {count} mensajes que enviaste: se cierra tu conexión",
        "tooManyFailedJoins": "{count} JOIN a partidas que no están abiertas: se cierra la conexión",
        "joinsRefusedForAWhile": "Demasiados JOIN a partidas cerradas desde tu dirección: espera {seconds} s",
        "agreed": "Tablas de mutuo acuerdo",
        "White": "blancas",
        "Black": "negras",
        "wins": "Ganan las {side} por {reason}",
        "drawBy": "Tablas por {reason}",
        # chess rules
        "checkmate": "jaque mate",
        "stalemate": "rey ahogado",
        "insufficient material": "material insuficiente",
        "75-move rule": "la regla de los 75 movimientos",
        "fivefold repetition": "quíntuple repetición",
        "50-move rule": "la regla de los 50 movimientos",
        "threefold repetition": "triple repetición",
        # why a move is refused (keys of velhanet.games.chessgame.MOVE_PROBLEMS)
        "wrongGame": "el movimiento es para la partida {given!r}, pero esta partida es {game!r}",
        "empty": "el movimiento está vacío",
        "noSuchPosition": "ningún movimiento legal lleva a la posición {payload!r}",
        "illegal": "{payload} no es legal aquí",
        "noPiece": "{payload} no es legal aquí: no hay ninguna pieza en {square}",
        "notYours": "{payload} no es legal aquí: la pieza de {square} no es de las {side}",
        "stillInCheck": "{payload} no es legal aquí: no sale del jaque",
        "illegalSan": "{payload} no es legal en esta posición",
        "ambiguous": "{payload} es ambiguo: di qué pieza (p. ej. Nbd2) o usa UCI",
        "unreadable": "{payload!r} no es un movimiento en UCI (e2e4), SAN (Nf3) ni FEN",
    },
}


class Texts:
    """The server's words in one language; every method returns the text of one message."""

    def __init__(self, language: str = DEFAULT_LANGUAGE) -> None:
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")
        self.language = language
        self._texts = _TEXTS[language]
        self._english = _TEXTS["en"]

    def __call__(self, key: str, **details: object) -> str:
        return self._texts.get(key, self._english.get(key, key)).format(**details)

    def side(self, colour: chess.Color) -> str:
        return self("White" if colour == chess.WHITE else "Black")

    def refused(self, error: Exception) -> str:
        """Why a move was refused, in this language."""
        if isinstance(error, MoveRefused) and self.language != "en":
            details = dict(error.details)
            if "side" in details:
                details["side"] = self(details["side"])
            return self("moveRefused", reason=self(error.kind, **details))
        return self("moveRefused", reason=str(error))

    def outcome(self, outcome: chess.Outcome) -> str:
        """The end of a game, with its PGN result: ``Black wins by checkmate (0-1)``."""
        reason = self(TERMINATIONS.get(outcome.termination, outcome.termination.name.lower()))
        if outcome.winner is None:
            text = self("drawBy", reason=reason)
        else:
            text = self("wins", side=self.side(outcome.winner), reason=reason)
        return f"{text} ({outcome.result()})"

    def agreed(self) -> str:
        return f"{self('agreed')} (1/2-1/2)"
