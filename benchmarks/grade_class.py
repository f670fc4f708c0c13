"""Submissions per minute of ``velhanet-grade velha`` against ``--workers``, and on a running Dask cluster.

    python benchmarks/grade_class.py [--workers-list 1,2,4,8] [--students 40] [--one-students N]
                                     [--only RULE,…] [--scheduler tcp://HOST:8786] [--verdicts FILE]

It builds a class of JogoVelha submissions in a temporary folder, always the
same students in the same order (``s01`` …), three kinds interleaved so that
any first N students hold the three in about the same proportion:

- ``good``: velhanet's own peer (``twistd velha --bot --move-delay 0``),
  the command of ``tests/test_grade_class.py``;
- ``broken``: ``standins/faulty/velha_peer.py`` with one of its ``FAULTS`` each
  (the file is copied into the submission: a sandboxed program sees only its
  own folder, and the file needs nothing of ``tests``);
- ``hostile``: the folders of ``standins/hostile`` as they are (Software-Challenge
  players that misbehave once they play: as velha submissions they find no
  server, end at once and are "cannot test"; they must not slow the others).

With 40 students that is 15 good, 15 broken (one per fault) and 10 hostile.

Then, for each N of ``--workers-list``, it runs ``velhanet-grade velha CLASS
--workers N --again --out OUT-N`` (a fresh output folder each time, and
``--again``, so that nothing is taken from the history) and prints the wall
seconds of the whole command (the LocalCluster's start included), the
submissions graded per minute, that rate against the rate with one worker,
and ``0.9 × N`` beside it. A check of one submission is mostly waiting (the
protocol's timeouts, a series of games), so up to some N the rate should
grow as N. ``--one-students`` grades only the first students with one worker
(a whole class one at a time takes long): compare the rates, not the wall
times, across rows with different class sizes.

Where the processors, not the waits, become the limit: each row also shows
what the machine's cores did during the run (``busy``: the share of all
cores' time not idle, from ``/proc/stat`` before and after, everything on
the machine counted; ``ours``: the share of it that the command and its
processes used, from their rusage, so that ``busy - ours`` is what else ran
on the machine), the processor seconds of the command and its processes
(``cpu s``, per submission; the graders and programs of a ``--scheduler``
run are not its children and are not counted there),
and ``good s``: the mean seconds one grading of a ``good`` submission took,
from its report (``grading`` began/ended): it stays flat while the graders
only wait, and grows once they wait for the cores. Where ``busy`` nears 1
and ``good s`` grows, the cores are the limit; ``cpu s`` per submission says
what each grading costs, so ``cores / (cpu s per submission)`` × 60 is the
rate no N can beat on this machine.

Every run's verdicts (per student: rule id → status, from ``OUT/STUDENT.json``,
and "cannot test" when it could not be tested) must be the same: a line is
printed for each student and rule that differs between two runs.
``--verdicts FILE`` keeps them in FILE (a JSON object, one entry per run) and
compares with the runs already in it: so that a ``--scheduler`` run on a
cluster can be compared with the local runs of an earlier invocation. The
machine may be shared; compare ratios from one run, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "standins" / "faulty" / "velha_peer.py"
HOSTILE = ROOT / "standins" / "hostile"
PYTHON = sys.executable
TWISTD = f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l -"

Verdicts = dict[str, dict[str, str]]
"""Per student: rule id → status ("cannot test" → its reason, when it could not be tested)."""


def faults() -> list[str]:
    """The faults of ``standins/faulty/velha_peer.py``, in its order."""
    sys.path.insert(0, str(ROOT))  # this checkout's velhanet and tests, whatever is installed
    from standins.faulty.velha_peer import FAULTS

    return list(FAULTS)


def kinds(students: int) -> list[tuple[str, str]]:
    """``(kind, what)`` for each student, the kinds interleaved 3 : 3 : 2 (good, broken, hostile)."""
    broken = [("broken", fault) for fault in faults()]
    hostile = [("hostile", path.name) for path in sorted(HOSTILE.iterdir()) if (path / "velhanet-run").exists()]
    pattern = ["good", "broken", "hostile", "good", "broken", "good", "broken", "hostile"]
    made: list[tuple[str, str]] = []
    for index in range(students):
        kind = pattern[index % len(pattern)]
        if kind == "broken" and broken:
            made.append(broken.pop(0))
        elif kind == "hostile" and hostile:
            made.append(hostile.pop(0))
        else:
            made.append(("good", "peer"))
    return made


def makeClass(folder: Path, students: int) -> dict[str, str]:
    """The class folder, one subfolder per student; returns each student's kind ("broken velha-hello")."""
    made = {}
    for index, (kind, what) in enumerate(kinds(students), start=1):
        student = f"s{index:02d}"
        submission = folder / student
        if kind == "hostile":
            shutil.copytree(HOSTILE / what, submission)
        else:
            submission.mkdir(parents=True)
        if kind == "good":
            command = (
                f"{TWISTD} velha --nick Peer{student} --bot --move-delay 0 --interface {{address}} --port {{port}}"
                " --announce {announce} --invite vinvite --log-file -"
            )
            (submission / "velhanet-run").write_text(command + "\n")
        elif kind == "broken":
            shutil.copy(BROKEN, submission)
            (submission / "velhanet-run").write_text(
                f"{PYTHON} velha_peer.py {{address}} {{announce}} {what} {{port}}\n"
            )
        made[student] = f"{kind} {what}"
    return made


def cpuTimes() -> tuple[float, float]:
    """(busy, all) seconds of every core since boot, from ``/proc/stat``."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle and iowait
    total = sum(fields[:8])  # guest time is counted in user already
    return (total - idle) / ticks, total / ticks


def childrenCpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verdictsOf(out: Path, students: list[str]) -> Verdicts:
    found: Verdicts = {}
    for student in students:
        path = out / f"{student}.json"
        if not path.exists():
            found[student] = {"report": "missing"}
            continue
        report = json.loads(path.read_text())
        found[student] = {rule["id"]: rule["status"] for rule in report["rules"]}
        if report["cannotTest"]:
            found[student]["cannot test"] = report["cannotTest"].split(":")[0]
    return found


def goodSeconds(out: Path, classKinds: dict[str, str]) -> float:
    """The mean seconds of one grading of a ``good`` submission, from its report's ``grading``."""
    seconds = []
    for student, kind in classKinds.items():
        path = out / f"{student}.json"
        if kind.startswith("good") and path.exists():
            grading = json.loads(path.read_text()).get("grading") or {}
            if grading.get("ended"):
                seconds.append(grading["ended"] - grading["began"])
    return sum(seconds) / len(seconds) if seconds else float("nan")


def grade(folder: Path, out: Path, where: list[str], only: str) -> tuple[float, float, float, float]:
    """One ``velhanet-grade`` of the class: wall seconds, the share of the cores busy, the CPU seconds of its
    process tree, and the seconds of all cores together during the run."""
    command = [PYTHON, "-m", "velhanet.grading.command", "velha", str(folder), "--out", str(out), "--again"]
    command += [*where, *(["--only", only] if only else [])]
    environment = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    busyBefore, allBefore = cpuTimes()
    cpuBefore = childrenCpu()
    began = time.monotonic()
    with (out.parent / f"{out.name}.txt").open("w") as printed:
        subprocess.run(command, cwd=ROOT, env=environment, stdout=printed, stderr=subprocess.STDOUT, check=False)
    wall = time.monotonic() - began
    busyAfter, allAfter = cpuTimes()
    cores = allAfter - allBefore
    busy = (busyAfter - busyBefore) / cores if cores > 0 else float("nan")
    return wall, busy, childrenCpu() - cpuBefore, cores


def differences(runs: dict[str, Verdicts]) -> list[str]:
    """A line per student and rule whose verdict is not the same in every run that graded the student."""
    lines = []
    labels = list(runs)
    students = sorted({student for verdicts in runs.values() for student in verdicts})
    for student in students:
        graded = [(label, runs[label][student]) for label in labels if student in runs[label]]
        rules = sorted({rule for _, verdicts in graded for rule in verdicts})
        for rule in rules:
            seen = {label: verdicts.get(rule, "absent") for label, verdicts in graded}
            if len(set(seen.values())) > 1:
                told = ", ".join(f"{label}: {status}" for label, status in seen.items())
                lines.append(f"   differs: {student} {rule}: {told}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers-list", default="1,2,4,8", help="--workers to try, in order (default 1,2,4,8)")
    parser.add_argument("--students", type=int, default=40, help="students in the class (default 40)")
    parser.add_argument(
        "--one-students", type=int, default=None, help="students graded with --workers 1 (default: --students)"
    )
    parser.add_argument("--only", default="", help="velhanet-grade's --only: these rules only (default: all)")
    parser.add_argument(
        "--scheduler", default=None, help="grade once on this running Dask cluster instead of the --workers-list"
    )
    parser.add_argument("--verdicts", default=None, type=Path, help="keep every run's verdicts here, and compare")
    parser.add_argument("--keep", default=None, type=Path, help="keep the class and the reports in this folder")
    arguments = parser.parse_args()
    if arguments.scheduler:
        runs = [("cluster", ["--scheduler", arguments.scheduler], arguments.students)]
    else:
        counts = [int(count) for count in arguments.workers_list.split(",")]
        oneStudents = arguments.one_students or arguments.students
        runs = [(f"N={n}", ["--workers", str(n)], oneStudents if n == 1 else arguments.students) for n in counts]
    scratch = Path(tempfile.mkdtemp(prefix="velhanet-grade-bench-", dir=arguments.keep))
    try:
        classKinds = makeClass(scratch / "class", arguments.students)
        counted = {kind.split()[0]: 0 for kind in classKinds.values()}
        for kind in classKinds.values():
            counted[kind.split()[0]] += 1
        print(f"class of {arguments.students}: " + ", ".join(f"{n} {kind}" for kind, n in counted.items()), end="")
        print(f"; rules: {arguments.only or 'all'}; {os.cpu_count()} cores", flush=True)
        print("run      students  wall s  per min  ÷ N=1  0.9×N  busy  ours  cpu s/sub  good s", flush=True)
        everyRun: dict[str, Verdicts] = {}
        if arguments.verdicts and arguments.verdicts.exists():
            everyRun.update(json.loads(arguments.verdicts.read_text()))
        oneRate = None
        for label, where, students in runs:
            folder = scratch / f"class-{students}"
            if not folder.exists():
                folder.mkdir()
                for student in list(classKinds)[:students]:
                    shutil.copytree(scratch / "class" / student, folder / student)
            out = scratch / f"out-{label.replace('=', '')}"
            wall, busy, cpu, cores = grade(folder, out, where, arguments.only)
            rate = students / wall * 60
            if label == "N=1":
                oneRate = rate
            workers = int(where[1]) if where[0] == "--workers" else 0
            ratio = f"{rate / oneRate:5.2f}" if oneRate else "    -"
            compare = f"{0.9 * workers:5.1f}" if workers else "    -"
            print(
                f"{label:<8} {students:>8}  {wall:>6.0f}  {rate:>7.2f}  {ratio}  {compare}  {busy:4.2f}"
                f"  {cpu / cores:4.2f}  {cpu / students:>9.1f}  {goodSeconds(out, classKinds):>6.1f}",
                flush=True,
            )
            everyRun[label] = verdictsOf(out, list(classKinds)[:students])
        found = differences(everyRun)
        print(f"verdicts of {', '.join(everyRun)}: " + ("identical" if not found else f"{len(found)} differ"))
        for line in found:
            print(line)
        if arguments.verdicts:
            arguments.verdicts.write_text(json.dumps(everyRun, indent=1, sort_keys=True) + "\n")
    finally:
        if arguments.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"class and reports in {scratch}")


if __name__ == "__main__":
    main()
