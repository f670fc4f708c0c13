"""The catalogs and the choice of a language (velhanet.i18n).

The completeness test extracts the texts as ``pybabel extract`` does (with
``babel.cfg``), so a text added to the code without its translations fails
here, naming the text and the language.
"""

from __future__ import annotations

import functools
import io
import re
import subprocess
import sys
import threading
from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from twisted.internet.defer import Deferred
from twisted.trial import unittest

from tests.languages import environment, speaking
from velhanet import i18n
from velhanet.i18n import _, ngettext

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_PLURAL_FORMS = {
    "pt_BR": "nplurals=2; plural=(n > 1);",
    "es": "nplurals=2; plural=(n != 1);",
    "de": "nplurals=2; plural=(n != 1);",
}


Text = tuple[str | tuple[str, str], str | None]
"""A text of the code: its message (a plural's two), and its context (``pgettext``) or None."""


@functools.cache
def extracted() -> dict[Text, str]:
    """Every text marked in velhanet's code, with where it is, as ``pybabel extract -F babel.cfg`` finds them.

    Seconds of CPU: done once in the process that runs a test needing it, never when the module is imported
    (every trial worker imports it, and it was 3 s of each one's start)."""
    with (ROOT / "babel.cfg").open() as config:
        methodMap, optionsMap = parse_mapping_cfg(config)
    texts: dict[Text, str] = {}
    keywords = {"_": None, "ngettext": (1, 2), "N_": None, "pgettext": ((1, "c"), 2)}
    for filename, line, message, _comments, context in extract_from_dir(str(ROOT), methodMap, optionsMap, keywords):
        key = message if isinstance(message, str) else (message[0], message[1])
        texts.setdefault((key, context), f"{filename}:{line}")
    return texts


def placeholders(text: str) -> list[str]:
    return sorted(re.findall(r"\{[^{}]*\}", text))


def catalogPath(locale: str) -> Path:
    return ROOT / "velhanet" / "locale" / locale / "LC_MESSAGES" / "velhanet.po"


class CatalogTests(unittest.TestCase):
    """Every catalog translates every text of the code, completely and with the same placeholders."""

    @property
    def texts(self) -> dict[Text, str]:
        return extracted()

    def test_theCodeHasTextsToTranslate(self) -> None:
        self.assertGreater(len(self.texts), 100)
        self.assertIn(("{program}: not started: {reason}; the log is {where}", None), self.texts)
        self.assertIn(("discovery", "rule group"), self.texts, "the checks' sections, for the class page")

    def test_everyCatalogIsComplete(self) -> None:
        problems = []
        for locale in i18n.CATALOGS.values():
            with catalogPath(locale).open("rb") as source:
                catalog = read_po(source, locale=locale)
            for (key, context), where in self.texts.items():
                message = catalog.get(key[0] if isinstance(key, tuple) else key, context=context)
                if message is None or not message.string or not all(message.string):
                    problems.append(f"{locale}: untranslated {key!r} ({where})")
                    continue
                if message.fuzzy:
                    problems.append(f"{locale}: fuzzy {key!r} ({where})")
                translations = message.string if isinstance(message.string, tuple) else (message.string,)
                english = placeholders(str(key[0] if isinstance(key, tuple) else key))
                for translation in translations:
                    if placeholders(str(translation)) != english:
                        found = placeholders(str(translation))
                        problems.append(f"{locale}: {translation!r} has {found}, not {english}")
        self.assertEqual(problems, [], "\n".join(problems[:40]))

    def test_pluralFormsAreTheLanguages(self) -> None:
        for locale, forms in EXPECTED_PLURAL_FORMS.items():
            with catalogPath(locale).open("rb") as source:
                catalog = read_po(source, locale=locale)
            self.assertEqual(catalog.plural_forms, forms, locale)

    def test_theCompiledCatalogsAreTheSources(self) -> None:
        """The .mo gettext reads is the .po compiled.

        After editing a .po: ``pybabel compile -d velhanet/locale -D velhanet``.
        """
        for locale in i18n.CATALOGS.values():
            with catalogPath(locale).open("rb") as source:
                catalog = read_po(source, locale=locale)
            compiled = io.BytesIO()
            write_mo(compiled, catalog, use_fuzzy=False)
            installed = i18n.LOCALE_DIR / locale / "LC_MESSAGES" / "velhanet.mo"
            self.assertTrue(installed.exists(), f"{installed} is missing: the package was built without its catalogs")
            self.assertEqual(installed.read_bytes(), compiled.getvalue(), f"{installed} is older than its .po")


class ChoiceTests(unittest.TestCase):
    """The language is the one a user asked for, in gettext's order, English otherwise."""

    def test_theEnvironmentInGettextsOrder(self) -> None:
        self.assertEqual(i18n.fromEnvironment({"LANG": "pt_BR.UTF-8"}), "pt")
        self.assertEqual(i18n.fromEnvironment({"LANG": "de_DE.UTF-8", "LC_MESSAGES": "es_ES.UTF-8"}), "es")
        self.assertEqual(i18n.fromEnvironment({"LANG": "de_DE.UTF-8", "LC_ALL": "C"}), "en")
        self.assertEqual(i18n.fromEnvironment({"LANGUAGE": "fr:es", "LANG": "de_DE.UTF-8"}), "es")
        self.assertEqual(i18n.fromEnvironment({"LANGUAGE": "fr", "LANG": "de_DE.UTF-8"}), "de")
        self.assertEqual(i18n.fromEnvironment({}), "en")

    def test_anUnknownLocaleIsEnglishSilently(self) -> None:
        self.assertEqual(i18n.fromEnvironment({"LANG": "xx_YY.UTF-8"}), "en")
        self.assertEqual(i18n.language("xx").code, "en")
        text = "{program}: not started: {reason}; the log is {where}"
        self.assertEqual(i18n.language("fr_FR").gettext(text), text)

    def test_acceptLanguage(self) -> None:
        self.assertEqual(i18n.fromAcceptLanguage("de-DE,de;q=0.9,en;q=0.8"), "de")
        self.assertEqual(i18n.fromAcceptLanguage("fr-FR, es;q=0.5, pt-BR;q=0.7"), "pt")
        self.assertEqual(i18n.fromAcceptLanguage("fr, de;q=0"), None)
        self.assertEqual(i18n.fromAcceptLanguage(None), None)

    def test_theCommandLineBeforeItIsParsed(self) -> None:
        self.assertEqual(i18n.languageFromArguments(["--nick", "Bo", "--language", "de"]), "de")
        self.assertEqual(i18n.languageFromArguments(["--language=es"]), "es")
        self.assertIsNone(i18n.languageFromArguments(["--", "--language", "de"]))
        self.assertIsNone(i18n.languageFromArguments(["--language", "fr"]))
        self.assertRaises(ValueError, i18n.checkLanguage, "fr")

    def test_theProcessSpeaksWhatItIsTold(self) -> None:
        speaking(self, "de")
        self.assertEqual(_("standard output"), "Standardausgabe")
        speaking(self, "es")
        self.assertEqual(_("standard output"), "la salida estándar")

    def test_twoReadersAcrossTheirAwaitsAndAThreadBeside(self) -> None:
        """A request speaks its reader's language across its awaits while another request, answered meanwhile,
        speaks another; a thread's work beside them speaks the process's; and the process speaks its own after."""
        speaking(self, "es")
        gates: dict[str, Deferred[None]] = {"pt": Deferred(), "de": Deferred()}
        heard: list[tuple[str, str]] = []

        async def request(code: str) -> None:
            with i18n.speaking(code):
                heard.append((code, _("standard output")))
                await gates[code]
                heard.append((code, _("standard output")))

        first, second = Deferred.fromCoroutine(request("pt")), Deferred.fromCoroutine(request("de"))
        beside: list[str] = []
        thread = threading.Thread(target=lambda: beside.append(_("standard output")))
        thread.start()
        thread.join()
        gates["pt"].callback(None)  # the first request ends inside the second's speaking
        gates["de"].callback(None)
        self.successResultOf(first), self.successResultOf(second)
        pt, de, es = (i18n.language(code).gettext("standard output") for code in ("pt", "de", "es"))
        self.assertEqual(heard, [("pt", pt), ("de", de), ("pt", pt), ("de", de)])
        self.assertEqual(beside, [es])
        self.assertEqual(_("standard output"), es)

    def test_pluralForms(self) -> None:
        """Brazilian Portuguese says 0 in the singular, German in the plural."""
        singular, plural = "{n} game", "{n} games"
        self.assertIn(((singular, plural), None), extracted(), "the code counts games")
        counts = {}
        for code in ("pt", "de", "en"):
            speaking(self, code)
            counts[code] = [ngettext(singular, plural, n).format(n=n) for n in (0, 1, 2)]
        self.assertEqual(counts["en"], ["0 games", "1 game", "2 games"])
        pt = i18n.language("pt")
        self.assertEqual(counts["pt"][0], pt.ngettext(singular, plural, 1).format(n=0))
        self.assertNotEqual(counts["pt"][2], pt.ngettext(singular, plural, 1).format(n=2))
        de = i18n.language("de")
        self.assertEqual(counts["de"][0], de.ngettext(singular, plural, 2).format(n=0))


class CommandLineTests(unittest.TestCase):
    """A command speaks the language of its environment, and ``--language`` overrides it, usage errors included."""

    def client(self, *arguments: str, code: str) -> str:
        """What ``gambit-client ARGUMENTS`` says on standard error, started with a locale asking for ``code``."""
        done = subprocess.run(
            [sys.executable, "-c", "from velhanet.gambit.client import main; main()", *arguments],
            env=environment(code),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.stderr

    def test_usageErrorsSpeakTheLocale(self) -> None:
        self.assertIn("'gambit-client --help' zeigt die Optionen.", self.client("--no-such-option", code="de"))
        self.assertIn(
            "Try 'gambit-client --help' for the options.", self.client("--no-such-option", code="xx_YY.UTF-8")
        )

    def test_theOptionOverridesTheLocale(self) -> None:
        said = self.client("--language", "es", "--no-such-option", code="de")
        self.assertIn("Prueba 'gambit-client --help' para ver las opciones.", said)
        said = self.client("--language", "fr", code="de")
        self.assertIn("--language muss eines von en, pt, es, de sein, nicht 'fr'", said)


class MarkedWhereExtractedTests(unittest.TestCase):
    def test_noTextIsMarkedInsideAnFString(self) -> None:
        """Babel's extractor reads an f-string as one string token: a ``_("…")`` inside one is never extracted,
        so never translated. A text is marked outside, and its translation put in the f-string."""
        import ast

        marks = {"_", "ngettext", "N_", "pgettext"}
        inside = []
        for path in sorted((ROOT / "velhanet").rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.JoinedStr):
                    continue
                for call in ast.walk(node):
                    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Constant):
                        continue
                    if getattr(call.func, "id", "") in marks:
                        inside.append(f"{path.relative_to(ROOT)}:{call.lineno}")
        self.assertEqual(inside, [])
