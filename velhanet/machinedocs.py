"""Draw every automat machine of velhanet as a Graphviz ``.dot`` file.

    python -m velhanet.machinedocs [DIR]     # default docs/machines

The output is deterministic (sorted), so the committed diagrams can be
checked against the machines by a test; render them with
``dot -Tsvg docs/machines/X.dot > X.svg`` where Graphviz is installed.
automat's own ``asDigraph`` needs the graphviz package and orders nodes
differently on every run, which is why this small writer exists.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from automat import TypeMachine

MACHINE_MODULES = (
    "velhanet.velha.invite",
    "velhanet.velha.match",
    "velhanet.gambit.room",
    "velhanet.gobang.game",
    "velhanet.socha.room",
)


def machines() -> dict[str, Any]:
    """``{"module.Name": machine}`` for every module-level TypeMachine in MACHINE_MODULES."""
    found: dict[str, Any] = {}
    for moduleName in MACHINE_MODULES:
        module = importlib.import_module(moduleName)
        for name, value in vars(module).items():
            if isinstance(value, TypeMachine):
                found[f"{moduleName.rsplit('.', 1)[-1]}.{name}"] = value
    return found


def toDot(name: str, machine: Any) -> str:
    automaton = machine.__automat_automaton__
    initial = automaton.initialState.name
    lines = [f'digraph "{name}" {{', "  rankdir=LR;", '  node [shape=ellipse, fontname="Helvetica"];']
    lines.append(f'  "{initial}" [style=bold, peripheries=2];')
    edges = sorted(
        (old.name, new.name, str(symbol), ", ".join(o.name for o in outputs if o.name != "returns(None)"))
        for old, symbol, new, outputs in automaton.allTransitions()
    )
    for old, new, symbol, outputs in edges:
        label = symbol if not outputs else f"{symbol}\\n/ {outputs}"
        lines.append(f'  "{old}" -> "{new}" [label="{label}", fontname="Helvetica", fontsize=10];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, machine in sorted(machines().items()):
        path = directory / f"{name}.dot"
        path.write_text(toDot(name, machine), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/machines")):
        print(path)
