"""Nothing handed in is lost: a class server killed with SIGKILL mid-grading grades it again, once.

Real processes: ``velhanet-class links`` makes the people's links, ``twistd -n class-server`` serves, a
hand-in is sent over HTTP; while it is being graded (another one waiting behind it) the server is killed
with SIGKILL — its grading process and the student's program die with it — and started again on the same
``--out``. Both hand-ins are then graded, and ``grades.db`` holds exactly one grading of each.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.classroom_harness import CLASS_FILE, folderOf, tarGz
from tests.processes import ENVIRONMENT, PYTHON, Child, freePort, twistd


def ask(url: str, secret: str, data: bytes | None = None) -> dict[str, Any]:
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    request.add_header("Authorization", f"Bearer {secret}")
    if data is not None:
        request.add_header("Content-Type", "application/gzip")
    with urllib.request.urlopen(request, timeout=30) as answer:
        found: dict[str, Any] = json.loads(answer.read())
        return found


class KilledMidGradingTests(SynchronousTestCase):
    timeout = 300

    def serve(self, root: Path, port: int) -> Child:
        command = twistd(
            "class-server",
            "--class",
            str(root / "class.toml"),
            "--listen",
            f"tcp:{port}:interface=127.0.0.1",
            "--out",
            str(root / "state"),
            "--sandbox",
            "on",  # as a class runs: the student's program dies with its grading process (without it, it would
            # be left running, an orphan, when the server is killed)
            "--workers",
            "1",
            "--only",
            "gambit-end,gambit-create",
            log=root / "server.log",
        )
        server = Child(self, command)
        server.waitForPort(port)
        return server

    def waitFor(self, url: str, secret: str, statuses: tuple[str, ...], seconds: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            found = ask(url, secret)
            if found["status"] in statuses or time.monotonic() > deadline:
                return found
            time.sleep(0.1)  # another process's state: polled, no event to wait for

    def test_aServerKilledMidGradingGradesItAgainOnce(self) -> None:
        root = Path(self.mktemp()).resolve()
        root.mkdir()
        (root / "class.toml").write_text(CLASS_FILE.format(deadline="2099-12-20 23:59"))
        port = freePort()
        classCommand = [PYTHON, "-m", "velhanet.classroom.command", "links", str(root / "class.toml")]
        made = subprocess.run(
            [*classCommand, "--url", f"http://127.0.0.1:{port}", "--out", str(root / "state")],
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            check=True,
        )
        links = dict(line.split(" ", 1) for line in made.stdout.splitlines())
        self.assertEqual(sorted(links), ["ana", "bo", "cy", "tia"])
        secret = {name: url.rsplit("/", 1)[1] for name, url in links.items()}
        again = subprocess.run(
            [*classCommand, "--url", "x", "--out", str(root / "state")],
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            check=True,
        )
        self.assertEqual(again.stdout, "", "a link is made once; only its hash is kept")
        self.assertIn("velhanet-class revoke", again.stderr)
        server = self.serve(root, port)
        api = f"http://127.0.0.1:{port}/api/hand-ins"
        first = ask(api, secret["ana"], tarGz(folderOf(root / "ana", "gambit-end")))
        second = ask(api, secret["bo"], tarGz(folderOf(root / "bo", "gambit-create")))
        self.assertEqual((first["status"], second["status"], second["position"]), ("queued", "queued", 1))
        grading = self.waitFor(f"{api}/{first['id']}", secret["ana"], ("grading", "graded"))
        self.assertEqual(grading["status"], "grading")
        time.sleep(1.0)  # well into its checks
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(10)
        server = self.serve(root, port)
        graded = [
            self.waitFor(f"{api}/{handIn['id']}", secret[name], ("graded", "refused"))
            for name, handIn in (("ana", first), ("bo", second))
        ]
        self.assertEqual([handIn["status"] for handIn in graded], ["graded", "graded"])
        failed = [[r["id"] for r in handIn["report"]["rules"] if r["status"] != "PASS"] for handIn in graded]
        self.assertEqual(failed, [["gambit-end"], ["gambit-create"]])
        database = sqlite3.connect(root / "state" / "grades.db")
        self.addCleanup(database.close)
        counts = database.execute("SELECT student, COUNT(*) FROM gradings GROUP BY student ORDER BY student")
        self.assertEqual(counts.fetchall(), [("ana", 1), ("bo", 1)])
        rows = database.execute("SELECT status, grading IS NOT NULL FROM handins ORDER BY id").fetchall()
        self.assertEqual(rows, [("graded", 1), ("graded", 1)])
        log = (root / "server.log").read_text()
        self.assertNotIn("Traceback", log)
