"""The hostile players of ``standins/hostile/`` in the real sandbox, by ``velhanet-grade`` and by ``socha-match``.

Each is contained and reported with its cause, the honest player of the
same run wins, and nothing of them is left on the machine: no process, no
control group, no file outside their private copies. ``--sandbox on``
throughout: where bubblewrap does not work these tests fail with its one
line, they never run a fork bomb unsandboxed. The limits are small so that
each misbehaviour meets its limit within a few seconds; the honest player
never comes near them. An ordinary user's path (a user namespace of its own,
``setrlimit`` instead of a cgroup) runs as ``nobody`` when the suite runs as
root, and is the path of every test here when it does not.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.processes import ENVIRONMENT, PYTHON, ROOT
from velhanet.sandbox.cgroups import CGROUP_ROOT

HOSTILE = ROOT / "standins" / "hostile"
LIMITS = [
    *("--sandbox", "on", "--limit-memory", "256M", "--limit-cpu", "2.5"),
    *("--limit-processes", "64", "--limit-disk", "32M", "--limit-output", "64K"),
]
CAUSES = {
    "connector": "fail: killed: connect to 198.18.0.9:80 refused: only the game's server is reachable",
    "diskfiller": "fail: killed: disk limit 32 MiB reached",
    "forkbomb": "fail: killed: more than 64 processes",
    "memoryhog": "fail: killed: memory limit 256 MiB exceeded",
    "spinner": "fail: killed: 2.5 s of CPU used",
    "flooder": "pass (output cut at 64 KiB)",
    "orphaner": "pass (left 1 process running after it exited (killed))",
    "snoop": "pass",
    "writer": "pass",
    "honest": "pass",
}


def velhanetLeftovers(marker: str, runner: int | None = None) -> list[str]:
    """Processes whose command line names ``marker``, and the control groups of the velhanet process
    ``runner`` (named after its pid): nothing may be left."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if marker in command:
                found.append(f"process {entry.name}: {command[:120]}")
    hierarchies = [CGROUP_ROOT, *CGROUP_ROOT.iterdir()] if runner is not None and CGROUP_ROOT.is_dir() else []
    for hierarchy in hierarchies:
        found += [f"cgroup {path}" for path in hierarchy.glob(f"velhanet*/velhanet-{runner}-*")]
    return found


def classFolder(testCase: SynchronousTestCase) -> Path:
    """A copy of the hostile class, as a teacher would have it (and a marker no other test's process has)."""
    folder = Path(tempfile.mkdtemp(prefix="velhanet-hostile-class-"))
    testCase.addCleanup(shutil.rmtree, folder, True)
    shutil.copytree(HOSTILE, folder, dirs_exist_ok=True)
    (folder / "README.md").unlink()
    return folder


class GradeHostileTests(SynchronousTestCase):
    def test_everyHostilePlayerContainedWithItsCause(self) -> None:
        folder = classFolder(self)
        out = folder.parent / f"{folder.name}-grades"
        self.addCleanup(shutil.rmtree, out, True)
        honestRun = (folder / "honest" / "velhanet-run").read_bytes()
        # The graders unpack each submission in a temporary folder: one named after the class, so that a
        # process left running from there is found below.
        scratch = folder.parent / f"{folder.name}-tmp"
        scratch.mkdir()
        self.addCleanup(shutil.rmtree, scratch, True)
        result = run(  # relative paths, as a teacher types them (trial's runner changes directory)
            [PYTHON, "-m", "velhanet.grading.command", "socha-player", folder.name, "--out", out.name, *LIMITS],
            cwd=folder.parent,
            timeout=600,
            environment={"TMPDIR": str(scratch)},
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)  # some students failed
        rows = {
            line.split()[0]: line
            for line in result.stdout.splitlines()
            if line.split()[:1] and line.split()[0] in CAUSES
        }
        for student, verdict in CAUSES.items():
            self.assertTrue(rows[student].endswith(verdict), f"{student}: {rows[student]!r}, not …{verdict!r}")
        self.assertIn("velhanet-grade: bubblewrap sandbox", result.stdout)
        # The reports say it too, for a script or a CI system.
        forkbomb = json.loads((out / "forkbomb.json").read_text())
        self.assertEqual(forkbomb["program"]["cause"], "killed: more than 64 processes")
        self.assertIn("bubblewrap", forkbomb["program"]["enforcement"])
        self.assertEqual(forkbomb["exitStatus"], 1)
        self.assertIn(b'name="sandbox-limits"', (out / "memoryhog.xml").read_bytes())
        self.assertIn(b"killed: memory limit 256 MiB exceeded", (out / "memoryhog.xml").read_bytes())
        # What the snoop and the writer saw, and that nothing outside their copies changed.
        snooped = (out / "snoop.log").read_text()
        for pattern in ("../honest/*", "/home/*/*", "/root/*"):
            self.assertIn(f"snoop: {pattern}: nothing", snooped)
        self.assertNotIn("snoop: read /etc/shadow: '", snooped.replace("snoop: read /etc/shadow: ''", ""))
        written = (out / "writer.log").read_text()
        self.assertIn("writer: cannot write ../honest/velhanet-run", written)
        self.assertIn("Read-only file system", written)
        self.assertEqual((folder / "honest" / "velhanet-run").read_bytes(), honestRun)
        self.assertFalse((ROOT / "velhanet" / "pwned.py").exists())
        self.assertEqual(sorted(p.name for p in (folder / "diskfiller").iterdir()), ["player.py", "velhanet-run"])
        self.assertEqual(velhanetLeftovers(str(folder), result.pid), [])
        # A program the sandbox killed after it joined leaves its game at once, and the reasons speak of
        # the program, never of the checker's own reactor (a killed connector once read "Reactor was unclean").
        for student in CAUSES:
            reasons = [str(rule["reason"]) for rule in json.loads((out / f"{student}.json").read_text())["rules"]]
            self.assertFalse([r for r in reasons if "Reactor was unclean" in r or "Traceback" in r], student)
        # The connector tried 198.18.0.9 before it joined: it is stopped at that step every time, never let
        # into the game some runs and not others (the checker's server looks at it before it takes a
        # connection of its; benchmarks/same_verdicts.py once found its verdicts differing between runs).
        connector = {rule["id"]: rule for rule in json.loads((out / "connector.json").read_text())["rules"]}
        self.assertEqual(connector["socha-player-join"]["status"], "FAIL")
        self.assertIn(
            "ended before it joined (killed: connect to 198.18.0.9:80", connector["socha-player-join"]["reason"]
        )


def run(command: list[str], cwd: Path, timeout: float, environment: dict[str, str] | None = None) -> Ran:
    """``subprocess.run``, keeping the pid (the control groups of a run are named after it)."""
    with subprocess.Popen(
        command,
        cwd=cwd,
        env={**ENVIRONMENT, **(environment or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        stdout, stderr = child.communicate(timeout=timeout)
    return Ran(child.pid, child.returncode, stdout, stderr)


@dataclass
class Ran:
    pid: int
    returncode: int
    stdout: str
    stderr: str


def playHostile(testCase: SynchronousTestCase, name: str, games: int = 2) -> tuple[str, dict[str, Any]]:
    """``socha-match`` of the hostile player ``name`` (p1) against the honest one (p2)."""
    folder = classFolder(testCase)
    logs = Path(testCase.mktemp()).resolve()
    template = "python3 {player} --host {{host}} --port {{port}} --reservation {{reservation}}"
    hostile, honest = (template.format(player=folder / who / "player.py") for who in (name, "honest"))
    result = run(
        [PYTHON, "-m", "velhanet.socha.match", hostile, honest, "--games", str(games), "--log-dir", str(logs), *LIMITS],
        cwd=ROOT,
        timeout=300,
    )
    testCase.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    testCase.assertEqual(velhanetLeftovers(str(folder), result.pid), [])
    return result.stdout, json.loads((logs / "summary.json").read_text())


class MatchHostileTests(SynchronousTestCase):
    """Each hostile player loses every game to the honest one, with its cause in the summary."""

    def assertLosesWith(self, name: str, cause: str) -> dict[str, Any]:
        output, data = playHostile(self, name)
        self.assertEqual(data["sandbox"], "bubblewrap sandbox")
        self.assertEqual((data["stats_player1"]["wins"], data["stats_player1"]["losses"]), (0, 2), output)
        reasons = data["players"][0]["loss_reasons"]
        if cause:
            self.assertEqual(data["players"][0]["irregular_losses"], {"limit": 2}, output)
            self.assertTrue(all(reason.startswith(f"p1 killed: {cause} (move ") for reason in reasons), reasons)
            self.assertIn(f"reason: p1 killed: {cause} (move ", output)
        self.assertEqual(data["players"][1]["irregular_losses"], {}, output)  # the honest player never
        return data

    def test_forkBomb(self) -> None:
        self.assertLosesWith("forkbomb", "more than 64 processes")

    def test_memoryHog(self) -> None:
        self.assertLosesWith("memoryhog", "memory limit 256 MiB exceeded")

    def test_diskFiller(self) -> None:
        self.assertLosesWith("diskfiller", "disk limit 32 MiB reached")

    def test_connector(self) -> None:
        self.assertLosesWith("connector", "connect to 198.18.0.9:80 refused: only the game's server is reachable")

    def test_spinner(self) -> None:
        self.assertLosesWith("spinner", "2.5 s of CPU used")

    def test_playersThatOnlyMisbehaveAreToldAndLoseAtPlay(self) -> None:
        for name, note in (("flooder", "output cut at 64 KiB"), ("orphaner", "left 1 process running"), ("snoop", "")):
            data = self.assertLosesWith(name, "")
            notes = data["players"][0]["sandbox_notes"]
            self.assertTrue(any(note in text for text in notes) if note else notes == [], (name, notes))


class OrdinaryUserTests(SynchronousTestCase):
    """The unprivileged path: a user namespace of its own, setrlimit; as ``nobody`` when we are root."""

    def test_limitsHoldWithoutRoot(self) -> None:
        # A copy anyone can read (the checkout may be in a private home): the package and the probe.
        copy = Path(tempfile.mkdtemp(prefix="velhanet-unprivileged-"))
        self.addCleanup(shutil.rmtree, copy, True)
        shutil.copytree(ROOT / "velhanet" / "sandbox", copy / "velhanet" / "sandbox")
        shutil.copy(ROOT / "velhanet" / "__init__.py", copy / "velhanet")
        shutil.copy(ROOT / "velhanet" / "i18n.py", copy / "velhanet")  # the sandbox's causes are translated
        (copy / "tests").mkdir()
        shutil.copy(ROOT / "tests" / "sandbox_probe.py", copy / "tests")
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        command = ["/usr/bin/python3" if os.geteuid() == 0 else PYTHON, str(copy / "tests" / "sandbox_probe.py")]
        nobody = 65534 if os.geteuid() == 0 else None
        result = subprocess.run(
            command,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=180,
            env={"PATH": "/usr/bin:/bin"},
            user=nobody,
            group=nobody,
            extra_groups=[] if nobody is not None else None,
        )
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        verdicts = {v["name"]: v for v in map(json.loads, result.stdout.splitlines()) if v.get("name")}
        self.assertTrue(all(v["uid"] != 0 for v in verdicts.values()), verdicts)
        self.assertTrue(all("setrlimit" in v["enforcement"] for v in verdicts.values()), verdicts)
        self.assertEqual(verdicts["honest"]["status"], 0)
        self.assertIsNone(verdicts["honest"]["cause"])
        self.assertEqual(verdicts["forkbomb"]["cause"], "killed: more than 32 processes")
        self.assertEqual(verdicts["memoryhog"]["cause"], "memory limit 256 MiB reached: an allocation was refused")
        self.assertEqual(
            verdicts["connector"]["cause"],
            "killed: connect to 198.18.0.9:80 refused: only the game's server is reachable",
        )
        self.assertEqual(verdicts["orphaner"]["leftovers"], 1)
        self.assertEqual(velhanetLeftovers("velhanet-probe-"), [])
