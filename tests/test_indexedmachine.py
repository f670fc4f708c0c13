"""Every machine of the package finds its transitions by lookup, with automat's own answers."""

from __future__ import annotations

from automat import NoTransition
from automat._core import Automaton
from twisted.trial.unittest import SynchronousTestCase

from velhanet import machinedocs


class IndexedMachineTests(SynchronousTestCase):
    def test_everyMachineIsIndexedAndAnswersAsAutomat(self) -> None:
        machines = machinedocs.machines()
        self.assertGreaterEqual(len(machines), 7)
        for name, machine in machines.items():
            automaton = machine.__automat_automaton__
            self.assertIn("outputForInput", vars(automaton), f"{name} is not indexed")
            transitions = automaton.allTransitions()
            for inState, symbol, outState, outputs in transitions:
                expected = Automaton.outputForInput(automaton, inState, symbol)  # automat's own scan
                self.assertEqual(automaton.outputForInput(inState, symbol), (outState, tuple(outputs)), name)
                self.assertEqual(expected, (outState, list(outputs)), name)
            states = {t[0] for t in transitions}
            symbols = {t[1] for t in transitions}
            pairs = {(t[0], t[1]) for t in transitions}
            missing = next(((s, i) for s in states for i in symbols if (s, i) not in pairs), None)
            if missing is not None:  # an input a state does not take: automat's NoTransition, as before
                self.assertRaises(NoTransition, automaton.outputForInput, *missing)
