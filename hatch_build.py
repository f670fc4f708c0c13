"""Compiles velhanet's message catalogs when the package is built (``pip install .`` and ``pip install -e .``).

The ``.po`` files under ``velhanet/locale/`` are the sources translators edit;
the ``.mo`` files Python's gettext reads are made from them here, with Babel,
so that an installed velhanet speaks every language without a compile step of
its own. They are not in git (``.gitignore``); the wheel carries them as
artifacts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileCatalogs(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        root = Path(self.root)
        for source in sorted((root / "velhanet" / "locale").glob("*/LC_MESSAGES/velhanet.po")):
            locale = source.parent.parent.name
            with source.open("rb") as poFile:
                catalog = read_po(poFile, locale=locale, domain="velhanet")
            compiled = source.with_suffix(".mo")
            with compiled.open("wb") as moFile:
                write_mo(moFile, catalog, use_fuzzy=False)
            build_data["artifacts"].append(compiled.relative_to(root).as_posix())
