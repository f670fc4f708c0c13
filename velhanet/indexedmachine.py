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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from automat import TypeMachine

Machine = TypeVar("Machine", bound=TypeMachine[Any, Any])


def indexed(machine: Machine) -> Machine:
    """``machine``, its transitions looked up in a dictionary (see the module's docstring)."""
    automaton = machine.__automat_automaton__
    table: dict[tuple[object, object], tuple[object, Sequence[object]]] = {
        (inState, symbol): (outState, tuple(outputs))
        for inState, symbol, outState, outputs in automaton.allTransitions()
    }
    scan = automaton.outputForInput

    def outputForInput(inState: object, inputSymbol: object) -> tuple[object, Sequence[object]]:
        found = table.get((inState, inputSymbol))
        return found if found is not None else scan(inState, inputSymbol)  # type: ignore[arg-type]

    automaton.outputForInput = outputForInput  # type: ignore[method-assign,assignment]
    return machine
