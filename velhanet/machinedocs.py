"""Draw every automat machine of velhanet as a Graphviz ``.dot`` file.

    python -m velhanet.machinedocs [DIR]     # default docs/machines

Every module of the package is walked, and every module-level
``TypeMachine`` it *defines* (assigns, rather than imports) is drawn, named by
its full path without the ``velhanet.`` prefix: ``gambit.room.RoomMachine``
and ``socha.room.RoomMachine`` are two diagrams. The output is deterministic
(sorted), so the committed diagrams can be checked against the machines by a
test; render them with ``dot -Tsvg``. automat's own ``asDigraph`` needs the
graphviz package and orders nodes differently on every run, which is why this
small writer exists.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from typing import Any

from automat import TypeMachine

import velhanet

PREFIX = "velhanet."


def _assignedNames(module: Any) -> set[str]:
    """The names a module's own top-level statements bind (not its imports)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            for named in ast.walk(target):  # ``A = ...`` and ``A, b = ...`` alike
                if isinstance(named, ast.Name):
                    names.add(named.id)
    return names


def machines() -> dict[str, Any]:
    """``{"family.module.Name": machine}`` for every TypeMachine defined in the package."""
    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(velhanet.__path__, PREFIX):
        module = importlib.import_module(info.name)
        own = _assignedNames(module)
        for name, value in vars(module).items():
            if isinstance(value, TypeMachine) and name in own:
                found[f"{info.name.removeprefix(PREFIX)}.{name}"] = value
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
    """Write every diagram, and remove the ones of machines that no longer exist."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, machine in sorted(machines().items()):
        path = directory / f"{name}.dot"
        path.write_text(toDot(name, machine), encoding="utf-8")
        written.append(path)
    for stale in set(directory.glob("*.dot")) - set(written):
        stale.unlink()
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/machines")):
        print(path)
