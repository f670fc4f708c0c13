"""Every word of the spectators' site, in English and in Spanish: one table, one language per site.

A page speaks the game server's language, whole: the Gambit server's results
come in its ``--language`` (Spanish by default, as the original server), so
its site does too; the other families speak English (``webSite``). The
server fills the pages' templates (L{page}: ``$key`` in ``static/*.html``)
and hands the script its few words as JSON in the page's ``data-words``
(L{SCRIPT_WORDS}), so ``watch.js`` holds no word of its own.
"""

from __future__ import annotations

import html
import json
from string import Template
from typing import Final

LANGUAGES: Final = ("en", "es")
DEFAULT: Final = "en"

TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "listTitle": "velhanet: games",
        "listHeading": "Games on this server",
        "connecting": "connecting…",
        "columnGame": "Game",
        "columnPlayers": "Players",
        "columnMoves": "Moves",
        "columnState": "State",
        "columnStarted": "Started",
        "empty": "No game yet. This page updates by itself.",
        "gameTitle": "velhanet: game",
        "allGames": "← all games",
        "gameHeading": "Game",
        "board": "board",
        "steps": "step through the game",
        "firstTitle": "start position (Home)",
        "first": "start position",
        "previousTitle": "previous move (←)",
        "previous": "previous move",
        "playTitle": "play from here, a move every 0.6 s",
        "nextTitle": "next move (→)",
        "next": "next move",
        "lastTitle": "final position (End)",
        "last": "final position",
        "movesHeading": "Moves",
        "pgnTitle": "the game in PGN, for any chess program",
        # the script's words (SCRIPT_WORDS)
        "live": "live",
        "reconnecting": "reconnecting…",
        "playing": "playing",
        "over": "over",
        "replay": "replay",
        "play": "play",
        "pause": "pause",
        "moveOf": "move {n} of {total}",
        "notLoaded": "board after move {n} not loaded: {error}",
        "chess": "chess",
        # the plain answers (after "404 Not Found: ", "503 Service Unavailable: ")
        "noSuchPage": "no such page",
        "noSuchGame": "no game {game} on this server",
        "noSuchBoard": "no such board",
        "noSuchFile": "no such file",
        "noPgn": "only a chess game has a PGN",
        "tooManySpectators": "too many spectators",
        "tooManyStreams": "too many streams from your address",
        "tryLater": "try again later",
    },
    "es": {
        "listTitle": "velhanet: partidas",
        "listHeading": "Partidas en este servidor",
        "connecting": "conectando…",
        "columnGame": "Partida",
        "columnPlayers": "Jugadores",
        "columnMoves": "Jugadas",
        "columnState": "Estado",
        "columnStarted": "Inicio",
        "empty": "Aún no hay ninguna partida. Esta página se actualiza sola.",
        "gameTitle": "velhanet: partida",
        "allGames": "← todas las partidas",
        "gameHeading": "Partida",
        "board": "tablero",
        "steps": "recorrer la partida",
        "firstTitle": "posición inicial (Inicio)",
        "first": "posición inicial",
        "previousTitle": "jugada anterior (←)",
        "previous": "jugada anterior",
        "playTitle": "reproducir desde aquí, una jugada cada 0,6 s",
        "nextTitle": "jugada siguiente (→)",
        "next": "jugada siguiente",
        "lastTitle": "posición final (Fin)",
        "last": "posición final",
        "movesHeading": "Jugadas",
        "pgnTitle": "la partida en PGN, para cualquier programa de ajedrez",
        "live": "en directo",
        "reconnecting": "reconectando…",
        "playing": "en juego",
        "over": "terminada",
        "replay": "repetición",
        "play": "reproducir",
        "pause": "pausa",
        "moveOf": "jugada {n} de {total}",
        "notLoaded": "no se pudo cargar el tablero tras la jugada {n}: {error}",
        "chess": "ajedrez",
        "noSuchPage": "no existe esa página",
        "noSuchGame": "no hay ninguna partida {game} en este servidor",
        "noSuchBoard": "no existe ese tablero",
        "noSuchFile": "no existe ese fichero",
        "noPgn": "solo una partida de ajedrez tiene PGN",
        "tooManySpectators": "demasiados espectadores",
        "tooManyStreams": "demasiadas conexiones desde tu dirección",
        "tryLater": "inténtalo más tarde",
    },
}

SCRIPT_WORDS: Final = (
    "connecting",
    "live",
    "reconnecting",
    "playing",
    "over",
    "replay",
    "play",
    "pause",
    "moveOf",
    "notLoaded",
    "chess",
)
"""The words ``watch.js`` shows, given to it in the page (``chess``: the Gambit game type's name)."""


class SiteTexts:
    """The site's words in one language."""

    def __init__(self, language: str = DEFAULT) -> None:
        if language not in LANGUAGES:
            raise ValueError(f"the site speaks {', '.join(LANGUAGES)}, not {language!r}")
        self.language = language
        self.words = TEXTS[language]

    def __call__(self, key: str) -> str:
        return self.words[key]

    def page(self, template: bytes) -> bytes:
        """An HTML template (``$key`` for each word, ``$lang``, ``$words`` for the script's) in this language."""
        values = {key: html.escape(text) for key, text in self.words.items()}
        script = {key: self.words[key] for key in SCRIPT_WORDS}
        values["lang"] = self.language
        values["words"] = html.escape(json.dumps(script, ensure_ascii=False), quote=True)
        return Template(template.decode("utf-8")).substitute(values).encode("utf-8")
