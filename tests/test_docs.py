"""The state-machine diagrams in docs/ are generated from the machines, and current."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from automat import TypeMachine
from twisted.trial.unittest import SynchronousTestCase

import velhanet
from velhanet.machinedocs import machines, toDot

DOCS = Path(__file__).resolve().parent.parent / "docs" / "machines"


class MachineDiagramTests(SynchronousTestCase):
    def test_everyMachineIsDrawn(self) -> None:
        """Every TypeMachine anywhere in the package has a diagram, and no diagram is left over."""
        everyMachine: dict[int, object] = {}
        for info in pkgutil.walk_packages(velhanet.__path__, "velhanet."):
            for value in vars(importlib.import_module(info.name)).values():
                if isinstance(value, TypeMachine):
                    everyMachine[id(value)] = value
        drawn = machines()
        self.assertEqual({id(machine) for machine in drawn.values()}, set(everyMachine))
        self.assertGreaterEqual(len(drawn), 6)
        self.assertEqual({path.stem for path in DOCS.glob("*.dot")}, set(drawn))

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


class RuleAnchorTests(SynchronousTestCase):
    """Every rule ``velhanet-check`` reports is stated in the repository's own docs, at its anchor."""

    def test_everyRuleHasItsParagraph(self) -> None:
        from velhanet.conformance.runner import DOCS, FAMILIES, checksOf, ruleOf

        root = Path(__file__).resolve().parent.parent
        for family in FAMILIES:
            text = (root / DOCS[family]).read_text(encoding="utf-8")
            anchors = [ruleOf(test)[1] for test in checksOf(family)]
            self.assertTrue(anchors)
            self.assertEqual(len(anchors), len(set(anchors)), family)
            for anchor in anchors:
                self.assertTrue(anchor.startswith(family.split("-")[0] + "-"), anchor)
                self.assertIn(f'<a id="{anchor}"></a>', text, f"{DOCS[family]} has no paragraph for {anchor}")

    def test_noDocumentPointsOutsideTheRepository(self) -> None:
        root = Path(__file__).resolve().parent.parent
        for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
            self.assertNotIn("shared/", path.read_text(encoding="utf-8"), path)
