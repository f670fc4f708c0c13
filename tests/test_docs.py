"""The state-machine diagrams in docs/ are generated from the machines, and current."""

from __future__ import annotations

import importlib
import io
import pkgutil
import re
import sys
from pathlib import Path
from xml.etree import ElementTree

from automat import TypeMachine
from twisted.trial.unittest import SynchronousTestCase

import velhanet
from velhanet import machinedocs
from velhanet.machinedocs import GraphvizMissing, isCurrent, machines, render, sourceHash, toDot, transitions, write

PACKAGE = Path(velhanet.__file__).parent
DOCS = Path(__file__).resolve().parent.parent / "docs" / "machines"
SVG = "{http://www.w3.org/2000/svg}"


class MachineDiagramTests(SynchronousTestCase):
    def test_everyMachineIsDrawn(self) -> None:
        """Every TypeMachine anywhere in the package has a diagram and a picture, and none is left over."""
        everyMachine: dict[int, object] = {}
        for info in pkgutil.walk_packages(velhanet.__path__, "velhanet."):
            for value in vars(importlib.import_module(info.name)).values():
                if isinstance(value, TypeMachine):
                    everyMachine[id(value)] = value
        drawn = machines()
        self.assertEqual({id(machine) for machine in drawn.values()}, set(everyMachine))
        self.assertGreaterEqual(len(drawn), 6)
        self.assertEqual({path.stem for path in DOCS.glob("*.dot")}, set(drawn))
        self.assertEqual({path.stem for path in DOCS.glob("*.svg")}, set(drawn))

    def test_diagramsAreCurrent(self) -> None:
        found = machines()
        self.assertGreaterEqual(len(found), 3)
        for name, machine in found.items():
            path = DOCS / f"{name}.dot"
            self.assertTrue(path.exists(), f"{path} missing: run python -m velhanet.machinedocs")
            self.assertEqual(
                path.read_text(encoding="utf-8"),
                toDot(name, machine),
                f"{path} is stale: run python -m velhanet.machinedocs",
            )

    def test_picturesAreCurrent(self) -> None:
        """Every SVG was drawn from its machine's current ``.dot`` (the hash it carries; no Graphviz needed)."""
        for name, machine in machines().items():
            path = DOCS / f"{name}.svg"
            self.assertTrue(path.exists(), f"{path} missing: run python -m velhanet.machinedocs")
            svg = path.read_text(encoding="utf-8")
            dot = toDot(name, machine)
            self.assertIn(f"<!-- source-sha256: {sourceHash(dot)} -->", svg, f"{path} is stale")
            self.assertTrue(isCurrent(svg, dot))
            self.assertFalse(isCurrent(svg, dot + "\n"))

    def test_picturesShowEveryTransition(self) -> None:
        """Each SVG is well-formed and its text names every state, input and output of its machine."""
        for name, machine in machines().items():
            texts = [t.text or "" for t in ElementTree.parse(DOCS / f"{name}.svg").iter(f"{SVG}text")]
            words = set(re.split(r"[\s,/]+", " ".join(texts)))
            for old, new, symbol, outputs in transitions(machine):
                for word in [old, new, symbol, *filter(None, outputs.split(", "))]:
                    self.assertIn(word, words, f"{name}: {old} --{symbol}--> {new}")

    def test_everyStateAppears(self) -> None:
        dot = toDot("m", machines()["velha.room.MatchMachine"])
        for state in (
            "waitingForStart",
            "myTurn",
            "theirTurn",
            "theirNewGame",
            "theirDrawStart",
            "judging",
            "finished",
        ):
            self.assertIn(f'"{state}"', dot)

    def test_oneArrowPerPairAndNoLoops(self) -> None:
        """Loops are lines inside their state's box, and transitions between two states share one arrow."""
        machine = machines()["velha.room.MatchMachine"]
        dot = toDot("m", machine)
        arrows = re.findall(r'^  "([^"]+)" -> "([^"]+)"', dot, re.MULTILINE)
        every = transitions(machine)
        self.assertEqual(
            sorted(arrows), sorted({(old, new) for old, new, _, _ in every if old != new} | {("(start)", "connected")})
        )
        self.assertEqual(len(arrows), len(set(arrows)))
        finished = next(line for line in dot.splitlines() if line.startswith('  "finished" ['))
        self.assertIn("<B>supersede</B> / returns(False)", finished)
        self.assertIn("<I>ignores</I> _broken, awaitStart,", finished)

    def test_writeDrawsOnlyStalePictures(self) -> None:
        """Current pictures are kept as they are (no Graphviz needed); stale ones are drawn; leftovers go."""
        directory = Path(self.mktemp())
        directory.mkdir()
        for path in DOCS.glob("*.svg"):
            (directory / path.name).write_bytes(path.read_bytes())
        (directory / "gone.Machine.dot").write_text("digraph {}\n")
        (directory / "gone.Machine.svg").write_text("<svg/>\n")
        (directory / "gambit.room.RoomMachine.svg").write_text("<svg/>\n")
        drawn: list[str] = []

        def fakeRender(dot: str) -> str:
            drawn.append(dot)
            return f"<!-- source-sha256: {sourceHash(dot)} -->\n<svg>drawn</svg>\n"

        self.patch(machinedocs, "render", fakeRender)
        written = write(directory)
        gambit = toDot("gambit.room.RoomMachine", machines()["gambit.room.RoomMachine"])
        self.assertEqual(drawn, [gambit])
        self.assertTrue((directory / "gambit.room.RoomMachine.svg").read_text().endswith("<svg>drawn</svg>\n"))
        self.assertEqual(sorted(p.name for p in written if p.suffix == ".svg"), ["gambit.room.RoomMachine.svg"])
        self.assertEqual(sorted(p.name for p in directory.iterdir()), sorted(p.name for p in DOCS.iterdir()))
        self.assertEqual(
            (directory / "socha.room.RoomMachine.svg").read_bytes(), (DOCS / "socha.room.RoomMachine.svg").read_bytes()
        )

        self.assertEqual(write(directory), [])
        self.assertEqual(len(drawn), 1)

    def test_withoutGraphvizAStalePictureIsAnError(self) -> None:
        """Drawing a picture without Graphviz's ``dot`` fails with a message that says what to install."""
        self.patch(machinedocs, "DOT", str(Path(self.mktemp()) / "no-dot-here"))
        self.assertRaises(GraphvizMissing, render, "digraph {}\n")
        stderr = io.StringIO()
        self.patch(sys, "stderr", stderr)
        self.assertEqual(machinedocs.main([self.mktemp()]), 1)
        self.assertIn("install Graphviz (Debian: apt-get install graphviz)", stderr.getvalue())


class RuleAnchorTests(SynchronousTestCase):
    """Every rule ``velhanet-check`` reports is stated in the repository's own docs, at its anchor."""

    def test_everyRuleHasItsParagraph(self) -> None:
        from velhanet.checks.runner import DOCS, FAMILIES, checksOf, ruleOf

        root = Path(__file__).resolve().parent.parent
        for family in FAMILIES:
            text = (root / DOCS[family]).read_text(encoding="utf-8")
            anchors = [ruleOf(test)[1] for test in checksOf(family)]
            self.assertTrue(anchors)
            self.assertEqual(len(anchors), len(set(anchors)), family)
            for anchor in anchors:
                self.assertTrue(anchor.startswith(family.split("-")[0] + "-"), anchor)
                self.assertIn(f'<a id="{anchor}"></a>', text, f"{DOCS[family]} has no paragraph for {anchor}")

    def test_theDocGroupsTheRulesAsTheChecksAreWritten(self) -> None:
        """The class matrix groups and orders its columns as the checks are written (``# -- group --``); the
        family's doc lists its rules under the same bold group labels, in the same order."""
        from velhanet.checks.runner import DOCS, FAMILIES
        from velhanet.grading.classpage import columnsOf

        root = Path(__file__).resolve().parent.parent
        for family in FAMILIES:
            text = (root / DOCS[family]).read_text(encoding="utf-8")
            section = text[text.index("## Rules that") :]
            section = section[: section.index("\n## ", 5)]
            listed: list[tuple[str, str]] = []
            group = ""
            for line in section.splitlines():
                label = re.fullmatch(r"\*\*(.+)\*\*", line.strip())
                if label:
                    group = label.group(1).lower()
                anchor = re.match(r'- <a id="([^"]+)"', line)
                if anchor and anchor.group(1).startswith(family + "-") and (
                    family == "socha-player" or not anchor.group(1).startswith("socha-player-")
                ):
                    listed.append((group, anchor.group(1)))
            written = [(column.group.lower(), column.anchor) for column in columnsOf(family)]
            self.assertEqual(listed, written, f"{DOCS[family]}: the rules' groups and order")

    def test_noDocumentPointsOutsideTheRepository(self) -> None:
        root = Path(__file__).resolve().parent.parent
        for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
            self.assertNotIn("shared/", path.read_text(encoding="utf-8"), path)


ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
FAMILIES = {"JogoVelha": "velha", "Gambit": "gambit", "Gobang": "gobang", "Software-Challenge": "socha"}


def architectureSection(start: str, end: str) -> str:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return text[text.index(start) : text.index(end)]


class ArchitectureTests(SynchronousTestCase):
    """docs/architecture.md says what anyone can re-check in the code; these tests re-check it."""

    def test_theRoleTableNamesOneFilePerRole(self) -> None:
        """Each role row names the same file for the four families, and that file exists in each."""
        section = architectureSection("## The families, file by file", "What the cells hold")
        rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| role")]
        self.assertGreaterEqual(len(rows), 6)
        for row in rows:
            cells = [cell.strip().strip("`") for cell in row.strip("|").split("|")][1:]
            self.assertEqual(len(cells), 4, row)
            self.assertEqual(len(set(cells)), 1, f"not one name for the role: {row}")
            for package in FAMILIES.values():
                self.assertTrue((PACKAGE / package / cells[0]).exists(), f"{package}/{cells[0]}")

    def test_everyModuleOfAFamilyIsNamed(self) -> None:
        """The table and each family's paragraph name every module the family has, and no module it lacks."""
        table = set(re.findall(r"`([a-z_]+\.py)`", architectureSection("## The families", "What the cells hold")))
        section = architectureSection("What the cells hold", "Everywhere, the bare name")
        for title, package in FAMILIES.items():
            paragraph = section[section.index(f"- **{title}.**") :].split("\n- **")[0]
            named = table | set(re.findall(r"`([a-z_]+\.py)`", paragraph))
            present = {path.name for path in (PACKAGE / package).glob("*.py")} - {"__init__.py"}
            self.assertEqual(named, present, title)

    def test_theWalksNameRealCode(self) -> None:
        """Every ``family.module.name`` of the walks from socket to rule is importable code."""
        section = architectureSection("## One message, socket to rule", "## Testing the layers")
        names = set(re.findall(r"`((?:velha|gambit|gobang|socha|games)\.[a-z_]+\.[A-Za-z_][\w.]*)`", section))
        self.assertGreater(len(names), 40)
        missing = []
        for name in sorted(names):
            family, module, *attributes = name.split(".")
            target: object = importlib.import_module(f"velhanet.{family}.{module}")
            for attribute in attributes:
                if not hasattr(target, attribute):
                    missing.append(name)
                    break
                target = getattr(target, attribute)
        self.assertEqual(missing, [])
