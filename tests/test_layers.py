"""The layering rules: games and bots never import Twisted, no import circles, modules that fit in a head."""

from __future__ import annotations

import ast
import graphlib
import subprocess
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

import velhanet
from tests.processes import ENVIRONMENT, python

PACKAGE = Path(velhanet.__file__).parent


def importsOf(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


class LayerTests(SynchronousTestCase):
    def test_pureLayersDoNotImportTwisted(self) -> None:
        checked = 0
        for layer in ("games", "bots"):
            for path in sorted((PACKAGE / layer).rglob("*.py")):
                checked += 1
                twisted = sorted(n for n in importsOf(path) if n == "twisted" or n.startswith("twisted."))
                self.assertEqual(twisted, [], f"{path} imports {twisted}")
        self.assertGreater(checked, 4)

    def test_sandboxNeedsTwistedOnlyForTheReactorsPrograms(self) -> None:
        """Blocking code (the graders) and a plain system Python can use the sandbox: only program.py needs Twisted."""
        modules = sorted((PACKAGE / "sandbox").glob("*.py"))
        self.assertGreater(len(modules), 8)
        for path in modules:
            twisted = sorted(n for n in importsOf(path) if n == "twisted" or n.startswith("twisted."))
            self.assertEqual(bool(twisted), path.name == "program.py", f"{path.name} imports {twisted}")

    def test_theGobangCheckersAgentsStartWithoutTwisted(self) -> None:
        """``velhanet-check gobang`` starts a process per scripted client (the server tells clients apart by
        pid), 169 in one run of the suite: without Twisted each starts in a fraction of the time."""
        script = "import sys, velhanet.checks.gobang.agent; print(sorted({m.split('.')[0] for m in sys.modules}))"
        loaded = subprocess.run(
            python("-c", script), env=ENVIRONMENT, capture_output=True, text=True, timeout=60, check=True
        ).stdout
        self.assertNotIn("'twisted'", loaded)
        self.assertIn("'velhanet'", loaded)

    def test_familiesReachTheSiteOnlyInTheirServiceWiring(self) -> None:
        """Rooms, lobbies and protocols report to the port of velhanet.watching; only the wiring knows the site."""
        wiring = {"service.py", "tap.py", "replayservice.py", "replaytap.py"}
        reaching: dict[str, list[str]] = {}
        for family in ("velha", "gambit", "gobang", "socha"):
            for path in sorted((PACKAGE / family).glob("*.py")):
                web = sorted(n for n in importsOf(path) if n == "velhanet.web" or n.startswith("velhanet.web."))
                if web and path.name not in wiring:
                    reaching[f"{family}/{path.name}"] = web
        self.assertEqual(reaching, {})
        self.assertIn("velhanet.watching", importsOf(PACKAGE / "gambit" / "room.py"))

    def test_noImportCircles(self) -> None:
        """No module of velhanet reaches itself through its imports, a type-only or a function's import included
        (a circle of types is still two modules that cannot be read apart)."""
        modules = {}
        for path in sorted(PACKAGE.rglob("*.py")):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
        graph = {
            name: sorted(n for n in importsOf(path) if n in modules and n != name) for name, path in modules.items()
        }
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as error:
            self.fail("an import circle: " + " -> ".join(error.args[1]))
        self.assertGreater(len(graph), 100)

    def test_modulesFitInAHead(self) -> None:
        """Up to 400 lines, or 700 for a module that holds one automat machine with its inputs and core.

        Split by role, never a machine from its core to fit a number: the
        wider bound is for exactly one machine per module.
        """
        oversized: dict[str, int] = {}
        for path in PACKAGE.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            lines = len(text.splitlines())
            limit = 700 if text.count("TypeMachineBuilder(") == 1 else 400
            if lines > limit:
                oversized[str(path.relative_to(PACKAGE))] = lines
        self.assertEqual(oversized, {})

    def test_theBareNameProtocolIsTwisteds(self) -> None:
        """Typing Protocols are written ``typing.Protocol``: ``Protocol`` alone always means Twisted's."""
        root = PACKAGE.parent
        spelled: list[str] = []
        for path in [*PACKAGE.rglob("*.py"), *(root / "tests").rglob("*.py"), *(root / "benchmarks").rglob("*.py")]:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
            for node in imports:
                if node.module in ("typing", "typing_extensions") and any(a.name == "Protocol" for a in node.names):
                    spelled.append(str(path.relative_to(root)))
        self.assertEqual(spelled, [])
        self.assertIn("typing.Protocol", (PACKAGE / "gambit" / "room.py").read_text(encoding="utf-8"))


START_PROCESS = ("Popen", "spawnProcess", "fork", "forkpty", "posix_spawn", "posix_spawnp")
"""The calls that start a process (``subprocess.Popen``, ``reactor.spawnProcess``, ``os.fork``…), and the
``subprocess`` functions built on Popen."""
LAUNCH_CORE = {"sandbox/processes.py", "sandbox/program.py"}
"""Where velhanet starts a process: the blocking front end's Popen and a tool's run, the reactor's spawn."""


def processStarts(path: Path) -> list[str]:
    """Every call in ``path`` that starts a process, as ``line: name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        owner = function.value if isinstance(function, ast.Attribute) else None
        ownerName = getattr(owner, "id", "")
        if (
            name in START_PROCESS
            or (ownerName == "subprocess" and name in ("run", "call", "check_call", "check_output"))
            or (ownerName == "os" and (name.startswith(("exec", "spawn")) or name in ("system", "popen")))
        ):
            found.append(f"{node.lineno}: {name}")
    return found


class OneLaunchCoreTests(SynchronousTestCase):
    def test_everyProcessIsStartedByTheLaunchCore(self) -> None:
        """velhanet's own helpers (a grading, a league's game, a Gobang checker's client), a student's
        program and a tool (git, Graphviz, bwrap's probe) are all started by the launch core, so that each
        gets the same set-up, output tail and cap, limits and cause when it ends."""
        elsewhere = {}
        for path in sorted(PACKAGE.rglob("*.py")):
            relative = path.relative_to(PACKAGE).as_posix()
            starts = processStarts(path)
            if starts and relative not in LAUNCH_CORE:
                elsewhere[relative] = starts
        self.assertEqual(elsewhere, {})
        names = [start.split(": ")[1] for start in processStarts(PACKAGE / "sandbox" / "processes.py")]
        self.assertEqual(names, ["Popen", "run"])
        self.assertIn("spawnProcess", [s.split(": ")[1] for s in processStarts(PACKAGE / "sandbox" / "program.py")])

    def test_aNewPopenOutsideTheCoreIsFound(self) -> None:
        module = Path(self.mktemp())
        module.write_text("import subprocess, os\nsubprocess.Popen(['x'])\nos.execv('x', [])\nsubprocess.run(['y'])\n")
        self.assertEqual(processStarts(module), ["2: Popen", "3: execv", "4: run"])
