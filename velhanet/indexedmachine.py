"""automat machines whose transitions are found by a dictionary lookup, not a scan.

automat's C{Automaton.outputForInput} walks every transition of the machine
until it finds the one for the current state and input: O(transitions) per
input, with two tuple comparisons each. Its own comment assumes machines
small enough for that not to matter; a Software-Challenge room has dozens of
transitions and takes three inputs per move, and the scan was 11 % of the
server's CPU per move in-process (cProfile: C{outputForInput} and the state
objects' C{__eq__}).

L{indexed} gives a built machine's automaton a table from (state, input) to
(new state, outputs), made once from its public C{allTransitions()}. A pair
the table does not hold goes to automat's own method, so an unhandled input
behaves exactly as before (C{NoTransition}). The automaton is shared by every
instance of the machine, so this is done once per machine, at import.

The table also lets a machine let go of a state's data when it leaves that
state for one without data. automat keeps the data of the last state that had
some until another state's data replaces it, so a machine that ended in a
state without data (``over``, ``finished``) still held its last timers; a
fired C{DelayedCall} keeps its function, the machine's own input, so each
finished room, handshake and match was a reference cycle, freed only at the
cyclic collector's next full pass (``docs/performance.md``, *a semester's
memory*). A transition into a state without data now first drops the data
(the outputs of that transition still get it, as automat read it before).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from automat import TypeMachine
from automat._typed import DataOutput

Machine = TypeVar("Machine", bound=TypeMachine[Any, Any])


def _letGoOfData(machine: Any, dataAtStart: object, *args: object, **kwargs: object) -> None:
    """The first output of a transition into a state without data: the machine no longer holds the old data."""
    machine.__automat_data__ = None


def indexed(machine: Machine) -> Machine:
    """``machine``, its transitions looked up in a dictionary, letting go of data it no longer needs (see the
    module's docstring)."""
    automaton = machine.__automat_automaton__
    table: dict[tuple[object, object], tuple[object, Sequence[object]]] = {}
    for inState, symbol, outState, outputs in automaton.allTransitions():
        entersDataless = outState != inState and not any(isinstance(output, DataOutput) for output in outputs)
        table[inState, symbol] = (outState, (_letGoOfData, *outputs) if entersDataless else tuple(outputs))
    scan = automaton.outputForInput

    def outputForInput(inState: object, inputSymbol: object) -> tuple[object, Sequence[object]]:
        found = table.get((inState, inputSymbol))
        return found if found is not None else scan(inState, inputSymbol)  # type: ignore[arg-type]

    automaton.outputForInput = outputForInput  # type: ignore[method-assign,assignment]
    return machine
