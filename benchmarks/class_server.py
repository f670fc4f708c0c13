"""A class server under a semester's evening: many students handing in over HTTP while pages are read.

    python benchmarks/class_server.py [--students 200] [--minutes 10] [--workers 8] [--sandbox auto]
                                      [--phases paced,burst,grade] [--keep DIR]

It builds a Gambit class of ``--students`` students (``s001`` …), each handing in a folder: velhanet's
own server or the faulty stand-in of ``standins/faulty/gambit_server.py`` with one of its faults
(every kind in turn), and starts ``twistd -n class-server`` on loopback with ``--workers``. Then:

- ``paced``: the load generator (this process: a thread per hand-in, ``urllib``) hands in every
  student's archive once, spread evenly over ``--minutes``, each with its bearer token, while a reader
  asks for pages all along (a student's ``/me`` with its session cookie, the teacher's ``/class``, a
  hand-in's ``/api/hand-ins/ID``) every 0.2 s: the time of each page, p50 and p99 per kind, while the
  grading runs; the server's resident memory (``/proc/PID/status``, the service alone, not its
  gradings) at the start, after the last hand-in is graded, and its peak;
- ``burst``: the same hand-ins again, all at once (a new ``--out``): the seconds until the last is
  graded, the hand-ins per minute;
- ``grade``: ``velhanet-grade gambit CLASS --workers N --again`` on the same folders, the same rate:
  the class server's burst against it is the ratio that matters (goal: at least 0.9).

The machine may be shared: compare the ratio and the percentiles of one run, not absolute times.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import io
import json
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
STAND_IN = ROOT / "standins" / "faulty" / "gambit_server.py"
TWISTD = [PYTHON, "-c", "from twisted.scripts.twistd import run; run()", "-n", "--pidfile="]
OWN = f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l /dev/null"
OWN += " gambit-server --listen tcp:{port}:interface=127.0.0.1"
FAULTS = ["gambit-end", "gambit-join-unknown", "gambit-back-to-back", "gambit-split", "gambit-create", "none"]


def freePort() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def makeClass(root: Path, students: int) -> dict[str, Path]:
    """The class file and every student's folder; {student: folder}."""
    folders = {}
    lines = ['family = "gambit"', 'deadline = "2099-12-31 23:59"', "[teachers.tia]"]
    for number in range(1, students + 1):
        name = f"s{number:03d}"
        lines.append(f"[students.{name}]")
        folder = root / "class" / name
        folder.mkdir(parents=True)
        shutil.copy(STAND_IN, folder)
        fault = FAULTS[number % len(FAULTS)]
        command = OWN if fault == "none" else f"{PYTHON} gambit_server.py {{port}} {fault}"
        (folder / "velhanet-run").write_text(command + "\n")
        folders[name] = folder
    (root / "class.toml").write_text("\n".join(lines) + "\n")
    return folders


def archiveOf(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


class Server:
    """``twistd -n class-server`` on loopback, and the people's secrets."""

    def __init__(self, root: Path, out: Path, workers: int, sandbox: str) -> None:
        self.port = freePort()
        self.base = f"http://127.0.0.1:{self.port}"
        links = [PYTHON, "-m", "velhanet.classroom.command", "links", str(root / "class.toml")]
        made = subprocess.run(
            [*links, "--url", self.base, "--out", str(out)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        self.secrets = {
            name: url.rsplit("/", 1)[1] for name, url in (line.split() for line in made.stdout.splitlines())
        }
        command = [*TWISTD, "-l", str(out / "server.log"), "class-server", "--class", str(root / "class.toml")]
        command += ["--listen", f"tcp:{self.port}:interface=127.0.0.1", "--out", str(out)]
        command += ["--workers", str(workers), "--sandbox", sandbox, "--poll", "0"]
        self.process = subprocess.Popen(command, cwd=ROOT)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise SystemExit("the class server did not start; see its log") from None
                time.sleep(0.1)

    def memory(self) -> int:
        """The service's resident memory in KiB (its gradings are processes of their own)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def peak(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]

    def ask(self, path: str, who: str, data: bytes | None = None) -> Any:
        request = urllib.request.Request(self.base + path, data=data, method="POST" if data is not None else "GET")
        request.add_header("Authorization", f"Bearer {self.secrets[who]}")
        if data is not None:
            request.add_header("Content-Type", "application/gzip")
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read())

    def browser(self, who: str) -> urllib.request.OpenerDirector:
        """A browser of ``who``'s: signed in by their link, its cookie kept."""
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        opener.open(f"{self.base}/sign-in/{self.secrets[who]}", timeout=30).read()
        return opener

    def waitGraded(self, expected: int) -> float:
        """Until ``expected`` hand-ins are settled (graded or refused); when the last was."""
        while True:
            listed = self.ask("/api/hand-ins", "tia")["handIns"]
            settled = [h for h in listed if h["status"] in ("graded", "refused")]
            if len(settled) >= expected:
                return time.monotonic()
            time.sleep(0.5)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


class Reader(threading.Thread):
    """Pages read all along: a student's /me, the teacher's /class, a hand-in's JSON; each one timed."""

    def __init__(self, server: Server, students: list[str]) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.times: dict[str, list[float]] = {"/me": [], "/class": [], "/api/hand-ins/ID": []}
        self.browsers = {name: server.browser(name) for name in (*students[:5], "tia")}
        self.stopping = threading.Event()
        self.failures = 0

    def run(self) -> None:
        students = [name for name in self.browsers if name != "tia"]
        while not self.stopping.wait(0.2):
            student = random.choice(students)
            for kind, opener, path in (
                ("/me", self.browsers[student], "/me"),
                ("/class", self.browsers["tia"], "/class"),
                ("/api/hand-ins/ID", self.browsers[student], "/api/hand-ins"),
            ):
                began = time.monotonic()
                try:
                    opener.open(self.server.base + path, timeout=30).read()
                except (urllib.error.URLError, OSError):
                    self.failures += 1
                    continue
                self.times[kind].append(time.monotonic() - began)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def paced(root: Path, folders: dict[str, Path], minutes: float, workers: int, sandbox: str) -> dict[str, Any]:
    server = Server(root, root / "paced", workers, sandbox)
    try:
        startMemory = server.memory()
        result: dict[str, Any]
        reader = Reader(server, list(folders))
        reader.start()
        archives = {name: archiveOf(folder) for name, folder in folders.items()}
        began = time.monotonic()
        gap = minutes * 60 / len(archives)
        senders = []
        for index, (name, archive) in enumerate(archives.items()):
            delay = began + index * gap - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            sender = threading.Thread(target=server.ask, args=("/api/hand-ins", name, archive))
            sender.start()
            senders.append(sender)
        for sender in senders:
            sender.join()
        sentIn = time.monotonic() - began
        last = server.waitGraded(len(archives))
        reader.stopping.set()
        reader.join()
        result = {
            "sent over s": round(sentIn),
            "last graded after s": round(last - began),
            "memory start KiB": startMemory,
            "memory end KiB": server.memory(),
            "memory peak KiB": server.peak(),
            "page failures": reader.failures,
        }
        for kind, times in reader.times.items():
            result[f"{kind} pages"] = len(times)
            result[f"{kind} p50 ms"] = round(percentile(times, 0.5) * 1000, 1)
            result[f"{kind} p99 ms"] = round(percentile(times, 0.99) * 1000, 1)
        allTimes = [t for times in reader.times.values() for t in times]
        result["all pages p50 ms"] = round(percentile(allTimes, 0.5) * 1000, 1)
        result["all pages p99 ms"] = round(percentile(allTimes, 0.99) * 1000, 1)
        result["all pages mean ms"] = round(statistics.mean(allTimes) * 1000, 1) if allTimes else None
        return result
    finally:
        server.stop()


def burst(root: Path, folders: dict[str, Path], workers: int, sandbox: str) -> dict[str, Any]:
    server = Server(root, root / "burst", workers, sandbox)
    try:
        archives = {name: archiveOf(folder) for name, folder in folders.items()}
        began = time.monotonic()
        senders = [threading.Thread(target=server.ask, args=("/api/hand-ins", name, a)) for name, a in archives.items()]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        last = server.waitGraded(len(archives))
        seconds = last - began
        return {"seconds": round(seconds, 1), "per minute": round(len(archives) * 60 / seconds, 1)}
    finally:
        server.stop()


def grade(root: Path, folders: dict[str, Path], workers: int, sandbox: str) -> dict[str, Any]:
    out = root / "grade-out"
    command = [PYTHON, "-m", "velhanet.grading.command", "gambit", str(root / "class"), "--out", str(out)]
    command += ["--workers", str(workers), "--again", "--sandbox", sandbox]
    began = time.monotonic()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    seconds = time.monotonic() - began
    return {"seconds": round(seconds, 1), "per minute": round(len(folders) * 60 / seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--phases", default="paced,burst,grade")
    parser.add_argument("--keep", default="", help="a folder for the class and the servers' files (default: temporary)")
    arguments = parser.parse_args()
    root = Path(arguments.keep or tempfile.mkdtemp(prefix="velhanet-class-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    folders = makeClass(root, arguments.students)
    results: dict[str, Any] = {"students": arguments.students, "workers": arguments.workers}
    phases = arguments.phases.split(",")
    if "paced" in phases:
        results["paced"] = paced(root, folders, arguments.minutes, arguments.workers, arguments.sandbox)
        print(json.dumps({"paced": results["paced"]}, indent=1), flush=True)
    if "burst" in phases:
        results["burst"] = burst(root, folders, arguments.workers, arguments.sandbox)
        print(json.dumps({"burst": results["burst"]}), flush=True)
    if "grade" in phases:
        results["velhanet-grade"] = grade(root, folders, arguments.workers, arguments.sandbox)
        print(json.dumps({"velhanet-grade": results["velhanet-grade"]}), flush=True)
    if "burst" in results and "velhanet-grade" in results:
        results["ratio"] = round(results["burst"]["per minute"] / results["velhanet-grade"]["per minute"], 2)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
