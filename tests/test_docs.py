"""The state-machine diagrams in docs/ are generated from the machines, and current."""

from __future__ import annotations

from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from velhanet.machinedocs import machines, toDot

DOCS = Path(__file__).resolve().parent.parent / "docs" / "machines"


class MachineDiagramTests(SynchronousTestCase):
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
        dot = toDot("m", machines()["match.MatchMachine"])
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
