"""Tests in a language other than English: the process speaks it for one test, then English again."""

from __future__ import annotations

from typing import Any

from velhanet import i18n


def speaking(case: Any, code: str) -> i18n.Language:
    """Make this process speak ``code`` until ``case`` (a trial TestCase) ends."""
    case.addCleanup(i18n.use, None)
    return i18n.use(code)


def environment(code: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for a program a test starts that asks for ``code`` through the locale, as a user's would.

    ``LANGUAGE`` (which the suite sets to English) is left out, so ``LANG`` decides.
    """
    import os

    environ = dict(os.environ if base is None else base)
    for variable in i18n.ENVIRONMENT_VARIABLES:
        environ.pop(variable, None)
    environ["LANG"] = {"pt": "pt_BR.UTF-8", "es": "es_ES.UTF-8", "de": "de_DE.UTF-8"}.get(code, code)
    return environ
