"""The sentence of the original protocol text each rule of ``velhanet-check`` comes from.

The four texts were written for courses in Brazil (JogoVelha, Portuguese), Spain (Gambit, Spanish)
and Germany (Gobang and the Software-Challenge, German). A student compares their program with the
text they were given, so each rule's report quotes that text's own sentence, in its own language,
beside velhanet's English rule and its paragraph in ``docs/``. Where the text is silent or ambiguous
and the rule is velhanet's reading of it, the quote is the sentence that reading interprets, and
``decision`` names the paragraph of the family's doc that explains the decision.

One TOML file per family here (``velha.toml``, ``gambit.toml``, ``gobang.toml``, ``socha.toml``,
``socha-player.toml``): the spec file's name, its language, and per rule ``original`` (a verbatim
excerpt, whitespace aside) and maybe ``decision`` (an anchor of the family's doc).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

DOCS = {"velha": "velha", "gambit": "gambit", "gobang": "gobang", "socha": "socha", "socha-player": "socha"}
"""The doc of each family (``docs/<name>.md``): socha-player's rules are in socha's."""


@dataclass(frozen=True)
class Original:
    spec: str
    """The original text's file name (``gambit-protocol.es.txt``)."""
    language: str
    """Its language code (``es``)."""
    sentence: str
    decision: str = ""
    """Where the rule is velhanet's decision: the anchor of its explanation in the family's doc."""
    doc: str = ""

    @property
    def decisionReference(self) -> str:
        return f"docs/{self.doc}.md#{self.decision}" if self.decision else ""


@functools.cache
def originalsOf(family: str) -> dict[str, Original]:
    """Every rule of ``family`` with its original sentence, by anchor ({} for a family without a file)."""
    path = HERE / f"{family}.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {
        anchor: Original(data["spec"], data["language"], entry["original"], entry.get("decision", ""), DOCS[family])
        for anchor, entry in data.get("rules", {}).items()
    }


def originalOf(family: str, anchor: str) -> Original | None:
    return originalsOf(family).get(anchor)
