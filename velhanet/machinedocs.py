"""Draw every automat machine of velhanet: a Graphviz ``.dot`` source and its SVG picture.

    python -m velhanet.machinedocs [DIR]     # default docs/machines

Every module of the package is walked, and every module-level
``TypeMachine`` it *defines* (assigns, rather than imports) is drawn, named by
its full path without the ``velhanet.`` prefix: ``gambit.room.RoomMachine``
and ``socha.room.RoomMachine`` are two diagrams, each a ``.dot`` and an
``.svg``. The ``.dot`` text is deterministic (sorted), so a test can check it
against the machines; automat's own ``asDigraph`` needs the graphviz Python
package and orders nodes differently on every run, which is why this small
writer exists.

How a machine is drawn, so that every label can be read:

- a state is a rounded box with its name on top; a transition that stays in
  the state (a loop) is a line inside the box, ``input / outputs``, rather
  than an arrow looping back, and the loops that do nothing share one
  ``ignores …`` line;
- all transitions from one state to another share one arrow, one line each;
- ``data:name`` is the data factory of a state that carries data, and a dot
  with an arrow marks the initial state.

The SVGs are rendered by Graphviz's ``dot`` program, and only when their
``.dot`` changed: each SVG carries the SHA-256 of the ``.dot`` text it was
drawn from, in a ``<!-- source-sha256: … -->`` comment, so checking that the
pictures are current needs no Graphviz, and neither does running this module
while no machine changed.
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from html import escape
from itertools import groupby
from pathlib import Path
from typing import Any

from automat import TypeMachine

import velhanet
from velhanet.sandbox.processes import ToolFailed, runTool

PREFIX = "velhanet."
DOT = "dot"  # Graphviz's layout program (Debian package ``graphviz``)
DOT_TIMEOUT = 120.0
"""Seconds Graphviz may take to draw one machine."""
FONT = "Helvetica"
IGNORED_WIDTH = 48  # characters per line of a state's ``ignores`` list
SPLIT_WIDTH = 30  # an arrow's ``input / outputs`` longer than this puts the outputs on a line of their own
BR = '<BR ALIGN="LEFT"/>'
HASH = re.compile(r"<!-- source-sha256: ([0-9a-f]{64}) -->")


class GraphvizMissing(Exception):
    """An SVG has to be drawn, and Graphviz's ``dot`` program is not installed."""


@functools.cache
def _assignedNames(module: Any) -> frozenset[str]:
    """The names a module's own top-level statements bind (not its imports); parsed once per module."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return frozenset()
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            for named in ast.walk(target):  # ``A = ...`` and ``A, b = ...`` alike
                if isinstance(named, ast.Name):
                    names.add(named.id)
    return frozenset(names)


def machines() -> dict[str, Any]:
    """``{"family.module.Name": machine}`` for every TypeMachine defined in the package."""
    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(velhanet.__path__, PREFIX):
        module = importlib.import_module(info.name)
        held = {name: value for name, value in vars(module).items() if isinstance(value, TypeMachine)}
        if not held:
            continue  # most modules hold none: no need to parse their source
        own = _assignedNames(module)
        for name, value in held.items():
            if name in own:
                found[f"{info.name.removeprefix(PREFIX)}.{name}"] = value
    return found


def transitions(machine: Any) -> list[tuple[str, str, str, str]]:
    """``(state, next state, input, outputs)`` for every transition, sorted; ``outputs`` may be empty."""
    return sorted(
        (old.name, new.name, str(symbol), ", ".join(o.name for o in outputs if o.name != "returns(None)"))
        for old, symbol, new, outputs in machine.__automat_automaton__.allTransitions()
    )


def _wrapped(names: list[str], width: int) -> list[str]:
    """``names`` joined by commas, in lines of about ``width`` characters."""
    lines = [names[0]]
    for name in names[1:]:
        if len(lines[-1]) + 2 + len(name) > width:
            lines[-1] += ","
            lines.append(name)
        else:
            lines[-1] += f", {name}"
    return lines


def _line(symbol: str, outputs: str, split: bool) -> str:
    """One transition as an HTML-like label: the input in bold, then its outputs."""
    text = f"<B>{escape(symbol)}</B>"
    if not outputs:
        return text
    if split and len(symbol) + 3 + len(outputs) > SPLIT_WIDTH:
        return f"{text}{BR}    / {escape(outputs)}"
    return f"{text} / {escape(outputs)}"


def _rows(lines: list[str]) -> str:
    return "".join(f'<TR><TD ALIGN="LEFT" BALIGN="LEFT">{line}</TD></TR>' for line in lines)


def toDot(name: str, machine: Any) -> str:
    initial = machine.__automat_automaton__.initialState.name
    every = transitions(machine)
    lines = [
        f'digraph "{name}" {{',
        "  nodesep=0.2;",
        "  ranksep=0.5;",
        f'  node [shape=plain, fontname="{FONT}", fontsize=12];',
        f'  edge [fontname="{FONT}", fontsize=11];',
        '  "(start)" [shape=point, width=0.15];',
        f'  "(start)" -> "{initial}";',
    ]
    for state in sorted({t[0] for t in every} | {t[1] for t in every} | {initial}):
        loops = [(symbol, outputs) for old, new, symbol, outputs in every if old == new == state]
        inside = [_line(symbol, outputs, split=False) for symbol, outputs in loops if outputs]
        ignored = [symbol for symbol, outputs in loops if not outputs]
        if ignored:
            inside.append("<I>ignores</I> " + BR.join(escape(line) for line in _wrapped(ignored, IGNORED_WIDTH)))
        lines.append(
            f'  "{state}" [label=<<TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="4" STYLE="ROUNDED">'
            f"<TR><TD><B>{escape(state)}</B></TD></TR>{'<HR/>' if inside else ''}{_rows(inside)}</TABLE>>];"
        )
    moves = [t for t in every if t[0] != t[1]]
    for (old, new), group in groupby(moves, key=lambda t: (t[0], t[1])):
        label = _rows([_line(symbol, outputs, split=True) for _, _, symbol, outputs in group])
        lines.append(
            f'  "{old}" -> "{new}" [label=<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">{label}</TABLE>>];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def sourceHash(dot: str) -> str:
    return hashlib.sha256(dot.encode("utf-8")).hexdigest()


def isCurrent(svg: str, dot: str) -> bool:
    """Whether ``svg`` was drawn from exactly this ``.dot`` text."""
    found = HASH.search(svg)
    return found is not None and found.group(1) == sourceHash(dot)


def render(dot: str) -> str:
    """The SVG picture of ``dot``, with the source's hash as a comment after the XML declaration."""
    try:
        done = runTool([DOT, "-Tsvg"], input=dot.encode("utf-8"), timeout=DOT_TIMEOUT)
    except ToolFailed:
        raise GraphvizMissing(
            f"{DOT!r} not found: install Graphviz (Debian: apt-get install graphviz) to draw the SVGs"
        ) from None
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, [DOT, "-Tsvg"], done.stdout, done.stderr)
    declaration, rest = done.stdout.decode("utf-8").split("\n", 1)
    return f"{declaration}\n<!-- source-sha256: {sourceHash(dot)} -->\n{rest}"


def write(directory: Path) -> list[Path]:
    """Write every diagram and its picture, and remove the ones of machines that no longer exist.

    A picture is drawn again only when its ``.dot`` changed. Returns the files written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    kept: set[Path] = set()
    written = []
    for name, machine in sorted(machines().items()):
        dot = toDot(name, machine)
        source, picture = directory / f"{name}.dot", directory / f"{name}.svg"
        kept |= {source, picture}
        if not source.exists() or source.read_text(encoding="utf-8") != dot:
            source.write_text(dot, encoding="utf-8")
            written.append(source)
        if not picture.exists() or not isCurrent(picture.read_text(encoding="utf-8"), dot):
            picture.write_text(render(dot), encoding="utf-8")
            written.append(picture)
    for stale in {*directory.glob("*.dot"), *directory.glob("*.svg")} - kept:
        stale.unlink()
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m velhanet.machinedocs",
        description="Draw every automat machine of velhanet: a Graphviz .dot source and an SVG picture "
        "(SVGs are redrawn only when their source changed; that needs Graphviz's dot).",
    )
    parser.add_argument(
        "directory", nargs="?", default="docs/machines", help="where to write them (default: %(default)s)"
    )
    directory = Path(parser.parse_args(argv).directory)
    try:
        written = write(directory)
    except GraphvizMissing as missing:
        print(f"machinedocs: {missing}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    print(f"machinedocs: {len(written)} file(s) written, every diagram in {directory} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
