"""The language a person reads velhanet in: one gettext domain, four languages.

English is the source: every text a person reads is written in English in the
code, marked for extraction (``_("…")``, ``ngettext(…)`` for a count, ``N_("…")``
for a text kept in a table and translated where it is shown), and looked up in
the ``velhanet`` catalogs under ``velhanet/locale/`` (``pt_BR``, ``es``, ``de``;
the ``.mo`` files are compiled from the ``.po`` files when the package is built,
see ``hatch_build.py``).

The language is chosen as a user expects: ``--language pt|es|de|en`` on every
command and service, else the environment (``LANGUAGE``, ``LC_ALL``,
``LC_MESSAGES``, ``LANG``, in gettext's order), else English; a language
velhanet has no catalog for is English, silently. A program sets it once
(L{use}); what must speak a language of its own whatever the process speaks
(the Gambit server's words on the wire, a page for one browser's
``Accept-Language``) holds a L{Language} of its own (L{language}).
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import os
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Final

DOMAIN: Final = "velhanet"
LOCALE_DIR: Final = Path(__file__).parent / "locale"

LANGUAGES: Final = ("en", "pt", "es", "de")
"""The languages ``--language`` takes, English (the source) first."""

CATALOGS: Final[Mapping[str, str]] = {"pt": "pt_BR", "es": "es", "de": "de"}
"""The catalog each translated language is read from (Portuguese is Brazil's, where JogoVelha comes from)."""

ENVIRONMENT_VARIABLES: Final = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""Where gettext looks for the language, in its order: the first one set decides."""

TAGS: Final[Mapping[str, str]] = {"pt": "pt-BR"}
"""A language as a page's ``lang`` and ``Content-Language`` name it, where that is not its code (Brazil's)."""

LANGUAGE_HELP: Final = "the language velhanet speaks: pt, es, de or en [default: from LANGUAGE, LC_ALL, LANG]"
"""``--language`` of a twistd plugin, whose usage writes a default as ``[default: X]``."""

LANGUAGE_ARGUMENT_HELP: Final = "the language velhanet speaks: pt, es, de or en (default: from LANGUAGE, LC_ALL, LANG)"
"""``--language`` of a console script, whose help writes a default as ``(default: X)`` like its other options."""


class Language:
    """The texts of one language: ``gettext`` for a text, ``ngettext`` for a text with a count."""

    def __init__(self, code: str, translations: gettext.NullTranslations) -> None:
        self.code = code
        self.tag = TAGS.get(code, code)
        self._translations = translations

    def gettext(self, message: str) -> str:
        return self._translations.gettext(message)

    def ngettext(self, singular: str, plural: str, count: int) -> str:
        return self._translations.ngettext(singular, plural, count)

    def pgettext(self, context: str, message: str) -> str:
        """``message`` as it reads in ``context``: a short word whose translation depends on where it stands."""
        return self._translations.pgettext(context, message)

    def __repr__(self) -> str:
        return f"<Language {self.code}>"


def supported(name: str | None) -> str | None:
    """The code of the language a locale or language name asks for (``pt_BR.UTF-8`` → ``pt``), if velhanet speaks it."""
    if not name:
        return None
    code = name.strip().replace("-", "_").split(".")[0].split("@")[0].split("_")[0].lower()
    return code if code in LANGUAGES else None


def fromEnvironment(environ: Mapping[str, str] | None = None) -> str:
    """The language the environment asks for, as gettext reads it; English when it asks for none velhanet speaks.

    The first variable that is set decides (``LC_ALL=C`` means English even
    with ``LANG=de_DE``); ``LANGUAGE`` is a list of preferences
    (``pt_BR:es``), the first one velhanet speaks wins.
    """
    environ = os.environ if environ is None else environ
    for variable in ENVIRONMENT_VARIABLES:
        value = environ.get(variable)
        if not value:
            continue
        for name in value.split(":"):
            code = supported(name)
            if code is not None:
                return code
        if variable != "LANGUAGE":
            return "en"
    return "en"


def fromAcceptLanguage(header: str | None) -> str | None:
    """The language a browser's ``Accept-Language`` prefers among velhanet's, or None (``de-DE,de;q=0.9,en;q=0.8``)."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        name, _separator, parameters = part.strip().partition(";")
        quality = 1.0
        for parameter in parameters.split(";"):
            key, _equals, value = parameter.strip().partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        code = supported(name)
        if code is not None and quality > 0:
            ranked.append((-quality, position, code))
    return min(ranked)[2] if ranked else None


@functools.cache
def language(code: str) -> Language:
    """The texts of a language (``pt``, ``es``, ``de``, ``en``, or a locale name); English for any other."""
    chosen = supported(code) or "en"
    if chosen == "en":
        return Language("en", gettext.NullTranslations())
    translations = gettext.translation(DOMAIN, LOCALE_DIR, languages=[CATALOGS[chosen]], fallback=True)
    return Language(chosen, translations)


_default: Language | None = None
"""What the process speaks (L{use}); None until it is first asked."""
_spoken: ContextVar[Language | None] = ContextVar("velhanet_spoken", default=None)
"""What L{speaking} says for the duration, in its own context only: a page rendered for one reader on the
reactor's thread, a request's coroutine across its awaits (Twisted runs each in a context of its own), never
a thread's work beside them (a class's reports written in a thread speak the process's language)."""


def use(code: str | None = None) -> Language:
    """Speak ``code`` from now on in this process (None: the environment's language); returns it."""
    global _default
    _default = language(code if code else fromEnvironment())
    return _default


def current() -> Language:
    """The language spoken here: L{speaking}'s, else the process's (the environment's until L{use} says)."""
    spoken = _spoken.get()
    if spoken is not None:
        return spoken
    return _default if _default is not None else use()


def _(message: str) -> str:
    """``message`` in the language this process speaks."""
    return current().gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The singular or plural text for ``count``, as the language's plural forms decide (then ``.format(n=count)``)."""
    return current().ngettext(singular, plural, count)


def pgettext(context: str, message: str) -> str:
    """``message`` in ``context`` (a catalog's ``msgctxt``), in the language this process speaks."""
    return current().pgettext(context, message)


@contextlib.contextmanager
def speaking(code: str) -> Iterator[Language]:
    """Speak ``code`` for the duration, in this context only (this request, this page), then what was spoken
    before; what runs meanwhile in another context or thread is not touched."""
    spoken = language(code)
    token = _spoken.set(spoken)
    try:
        yield spoken
    finally:
        _spoken.reset(token)


def N_(message: str) -> str:
    """Mark a text for the catalogs without translating it now (a table's text, translated where it is shown)."""
    return message


def languageFromArguments(arguments: Sequence[str]) -> str | None:
    """The language ``--language`` asks for in a command line, before it is parsed (so that its errors speak it too).

    None when there is no ``--language``, or one velhanet does not speak (the
    parser's error then says so, in the environment's language).
    """
    for index, argument in enumerate(arguments):
        if argument == "--":
            break
        if argument == "--language" and index + 1 < len(arguments):
            return supported(arguments[index + 1])
        if argument.startswith("--language="):
            return supported(argument.partition("=")[2])
    return None


def checkLanguage(code: str) -> str:
    """A ``--language`` value as one of L{LANGUAGES}, or ValueError naming them."""
    chosen = supported(code)
    if chosen is None:
        raise ValueError(
            _("--language must be one of {languages}, not {given!r}").format(languages=", ".join(LANGUAGES), given=code)
        )
    return chosen
