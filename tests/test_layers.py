"""The layering rule: games and bots never import Twisted."""

from __future__ import annotations

import ast
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

import velhanet

PACKAGE = Path(velhanet.__file__).parent


def importsOf(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


class LayerTests(SynchronousTestCase):
    def test_pureLayersDoNotImportTwisted(self) -> None:
        checked = 0
        for layer in ("games", "bots"):
            for path in sorted((PACKAGE / layer).rglob("*.py")):
                checked += 1
                twisted = sorted(n for n in importsOf(path) if n == "twisted" or n.startswith("twisted."))
                self.assertEqual(twisted, [], f"{path} imports {twisted}")
        self.assertGreater(checked, 4)

    def test_sandboxNeedsTwistedOnlyForTheReactorsPrograms(self) -> None:
        """Blocking code (the graders) and a plain system Python can use the sandbox: only program.py needs Twisted."""
        modules = sorted((PACKAGE / "sandbox").glob("*.py"))
        self.assertGreater(len(modules), 8)
        for path in modules:
            twisted = sorted(n for n in importsOf(path) if n == "twisted" or n.startswith("twisted."))
            self.assertEqual(bool(twisted), path.name == "program.py", f"{path.name} imports {twisted}")

    def test_familiesReachTheSiteOnlyInTheirServiceWiring(self) -> None:
        """Rooms, lobbies and protocols report to the port of velhanet.watching; only the wiring knows the site."""
        wiring = {"service.py", "tap.py", "replayservice.py", "replaytap.py"}
        reaching: dict[str, list[str]] = {}
        for family in ("velha", "gambit", "gobang", "socha"):
            for path in sorted((PACKAGE / family).glob("*.py")):
                web = sorted(n for n in importsOf(path) if n == "velhanet.web" or n.startswith("velhanet.web."))
                if web and path.name not in wiring:
                    reaching[f"{family}/{path.name}"] = web
        self.assertEqual(reaching, {})
        self.assertIn("velhanet.watching", importsOf(PACKAGE / "gambit" / "room.py"))

    def test_noModuleOverFourHundredLines(self) -> None:
        """A module fits in a head: split by role before one grows past 400 lines."""
        sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")}
        self.assertGreater(len(sizes), 40)
        self.assertEqual({str(path.relative_to(PACKAGE)): n for path, n in sizes.items() if n > 400}, {})
