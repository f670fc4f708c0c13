"""Every machine of the package finds its transitions by lookup, with automat's own answers, and lets go of a
state's data when it moves to a state without data."""

from __future__ import annotations

import gc
import typing
import weakref
from dataclasses import dataclass

from automat import NoTransition, TypeMachineBuilder
from automat._core import Automaton
from automat._typed import DataOutput
from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from velhanet import machinedocs
from velhanet.indexedmachine import _letGoOfData, indexed


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
                self.assertEqual(expected, (outState, list(outputs)), name)
                found, foundOutputs = automaton.outputForInput(inState, symbol)
                self.assertEqual(found, outState, name)
                dataless = outState != inState and not any(isinstance(o, DataOutput) for o in outputs)
                self.assertEqual(foundOutputs, ((_letGoOfData,) if dataless else ()) + tuple(outputs), name)
            states = {t[0] for t in transitions}
            symbols = {t[1] for t in transitions}
            pairs = {(t[0], t[1]) for t in transitions}
            missing = next(((s, i) for s in states for i in symbols if (s, i) not in pairs), None)
            if missing is not None:  # an input a state does not take: automat's NoTransition, as before
                self.assertRaises(NoTransition, automaton.outputForInput, *missing)


class Ticking(typing.Protocol):
    def start(self) -> None: ...

    def _tick(self) -> None: ...

    def stop(self) -> None: ...


@dataclass
class TickingCore:
    clock: Clock


@dataclass
class Timer:
    call: object


def _buildTicking():
    builder = TypeMachineBuilder(Ticking, TickingCore)
    idle = builder.state("idle")
    ticking = builder.state("ticking", lambda inputs, core: Timer(core.clock.callLater(1, inputs._tick)))
    done = builder.state("done")
    idle.upon(Ticking.start).to(ticking).returns(None)
    ticking.upon(Ticking._tick).to(done).returns(None)
    ticking.upon(Ticking.stop).to(done).returns(None)
    return indexed(builder.build())


class LetGoOfDataTests(SynchronousTestCase):
    """A state's timer calls the machine's own input, so a machine that kept the data of a state it left would
    be a reference cycle with its fired timer (a finished room, handshake or match: issue 33)."""

    def test_aFinishedMachineIsFreedWithoutTheCollector(self) -> None:
        gc.disable()
        self.addCleanup(gc.enable)
        clock = Clock()
        machine = _buildTicking()(TickingCore(clock))
        machine.start()
        self.assertIsInstance(machine.__automat_data__, Timer)
        clock.advance(1)  # the timer fires: the machine is done, and holds no timer any more
        self.assertIsNone(machine.__automat_data__)
        gone = weakref.ref(machine)
        del machine
        self.assertIsNone(gone())
