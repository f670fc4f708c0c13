"""Every word of the spectators' site, by the key its templates use: one table of catalog texts, any language.

A page speaks the language of its request (L{requestLanguage}): the
service's ``--language`` when it was given, else the one the browser's
``Accept-Language`` prefers among velhanet's, else the process's (its
environment), else English. The server fills the pages' templates
(L{SiteTexts.page}: ``$key`` in ``static/*.html``) and hands the script its
few words as JSON in the page's ``data-words`` (L{SCRIPT_WORDS}), so
``watch.js`` holds no word of its own. The words are the catalogs'
(L{velhanet.i18n}): the English texts here are their msgids.
"""

from __future__ import annotations

import functools
import html
import json
from string import Template
from typing import Any, Final

from velhanet import i18n
from velhanet.i18n import N_

WORDS: Final = {
    "listTitle": N_("velhanet: games"),
    "listHeading": N_("Games on this server"),
    "connecting": N_("connecting…"),
    "columnGame": N_("Game"),
    "columnPlayers": N_("Players"),
    "columnMoves": N_("Moves"),
    "columnState": N_("State"),
    "columnStarted": N_("Started"),
    "empty": N_("No game yet. This page updates by itself."),
    "gameTitle": N_("velhanet: game"),
    "allGames": N_("← all games"),
    "gameHeading": N_("Game"),
    "board": N_("board"),
    "steps": N_("step through the game"),
    "firstTitle": N_("start position (Home)"),
    "first": N_("start position"),
    "previousTitle": N_("previous move (←)"),
    "previous": N_("previous move"),
    "playTitle": N_("play from here, a move every 0.6 s"),
    "nextTitle": N_("next move (→)"),
    "next": N_("next move"),
    "lastTitle": N_("final position (End)"),
    "last": N_("final position"),
    "movesHeading": N_("Moves"),
    "pgnTitle": N_("the game in PGN, for any chess program"),
    # the script's words (SCRIPT_WORDS)
    "live": N_("live"),
    "reconnecting": N_("reconnecting…"),
    "playing": N_("playing"),
    "over": N_("over"),
    "replay": N_("replay"),
    "play": N_("play"),
    "pause": N_("pause"),
    "moveOf": N_("move {n} of {total}"),
    "notLoaded": N_("board after move {n} not loaded: {error}"),
    "chess": N_("chess"),
    # the plain answers (after "404 Not Found: ", "503 Service Unavailable: ")
    "noSuchPage": N_("no such page"),
    "noSuchGame": N_("no game {game} on this server"),
    "noSuchBoard": N_("no such board"),
    "noSuchFile": N_("no such file"),
    "noPgn": N_("only a chess game has a PGN"),
    "tooManySpectators": N_("too many spectators"),
    "tooManyStreams": N_("too many streams from your address"),
    "tryLater": N_("try again later"),
}
"""Each word of the site by its key; the text is English, the catalogs' msgid."""

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


def requestLanguage(request: Any, fixed: str | None = None) -> str:
    """The language of the answer to ``request``: ``fixed`` (the service's ``--language``), else the browser's
    ``Accept-Language``, else the process's (velhanet's codes: ``pt``, ``es``, ``de``, ``en``)."""
    if fixed:
        return i18n.language(fixed).code
    header = request.getHeader(b"accept-language")
    asked = i18n.fromAcceptLanguage(header.decode("latin-1") if isinstance(header, bytes) else header)
    return asked or i18n.current().code


class SiteTexts:
    """The site's words in one language (L{siteTexts}: one for each language, made once)."""

    def __init__(self, language: str = "en") -> None:
        self.words = i18n.language(language)
        self.language = self.words.code
        self.tag = self.words.tag
        """The page's ``lang`` and ``Content-Language``."""
        self._pages: dict[bytes, bytes] = {}

    def __call__(self, key: str) -> str:
        return self.words.gettext(WORDS[key])

    def page(self, template: bytes) -> bytes:
        """An HTML template (``$key`` for each word, ``$lang``, ``$words`` for the script's) in this language."""
        filled = self._pages.get(template)
        if filled is None:
            words = {key: self(key) for key in WORDS}
            values = {key: html.escape(text) for key, text in words.items()}
            script = {key: words[key] for key in SCRIPT_WORDS}
            values["lang"] = self.tag
            values["words"] = html.escape(json.dumps(script, ensure_ascii=False), quote=True)
            filled = self._pages[template] = Template(template.decode("utf-8")).substitute(values).encode("utf-8")
        return filled


@functools.cache
def siteTexts(language: str) -> SiteTexts:
    """The site's words in ``language`` (a code of L{velhanet.i18n.LANGUAGES}), its pages filled once."""
    return SiteTexts(language)
