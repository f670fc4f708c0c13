"""The class server in a real headless Chromium: a student's semester evening, the teacher's view, and XSS.

A real ``twistd -n class-server`` on loopback; each person in a browser of their own, signed in by their
personal link. ana hands in a folder whose server drops END, watches the queue, reads the FAIL with its
exchange, hands in the fix and sees ``fixed: gambit-end``; tia sees the class and ana's two versions.
bo's program puts ``<script>`` and ``<img onerror>`` into everything it can reach (what it prints, the
names on the wire, an archive's file name): nothing of it runs or becomes an element, in any page.
``VELHANET_SCREENSHOTS=DIR`` keeps the screenshots (``docs/screenshots/class-*.png`` are these).
"""

from __future__ import annotations

import os
import subprocess
import urllib.request
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from tests.chromium import CHROMIUM, NO_CHROMIUM, Chromium, Page
from tests.classroom_harness import CLASS_FILE, folderOf, tarGz, zipOf
from tests.processes import ENVIRONMENT, PYTHON, Child, freePort, twistd

PAYLOAD = "<script>window.__xss=1</script><img src=x onerror=window.__xss=2>"
XSS_SERVER = f'''
import json, socket, sys, threading
print({PAYLOAD!r}, flush=True)
print({PAYLOAD!r}, file=sys.stderr, flush=True)
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
def serve(connection):
    with connection:
        while connection.recv(4096):
            answer = {{"Cmd": 1, "User": {PAYLOAD!r}, "Args": {PAYLOAD!r}}}
            connection.sendall(json.dumps(answer).encode() + b"\\n" + {PAYLOAD!r}.encode() + b"\\n")
while True:
    threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start()
'''
NOTHING_RAN = (
    "window.__xss === undefined && document.querySelectorAll('img').length === 0"
    " && [...document.scripts].every(s => s.src.endsWith('/static/classroom.js'))"
)
STATUS = "document.querySelector('tr[data-hand-in=\"{id}\"] .status').textContent"


class ClassInABrowserTests(SynchronousTestCase):
    timeout = 400

    def setUp(self) -> None:
        if CHROMIUM is None:
            self.skipTest(NO_CHROMIUM)
        self.root = Path(self.mktemp()).resolve()
        self.root.mkdir()
        self.pictures = Path(os.environ.get("VELHANET_SCREENSHOTS") or self.root)
        (self.root / "class.toml").write_text(CLASS_FILE.format(deadline="2099-12-20 23:59"))
        self.port = freePort()
        self.base = f"http://127.0.0.1:{self.port}"
        links = [PYTHON, "-m", "velhanet.classroom.command", "links", str(self.root / "class.toml")]
        made = subprocess.run(
            [*links, "--url", self.base, "--out", str(self.root / "state")],
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            check=True,
        )
        self.links = dict(line.split(" ", 1) for line in made.stdout.splitlines())
        command = twistd(
            "class-server",
            "--class",
            str(self.root / "class.toml"),
            "--listen",
            f"tcp:{self.port}:interface=127.0.0.1",
            "--out",
            str(self.root / "state"),
            "--workers",
            "1",
            log=self.root / "server.log",
        )
        Child(self, command).waitForPort(self.port)

    def signedIn(self, name: str) -> Page:
        """A browser of ``name``'s own (its own cookies), on the page their link leads to."""
        return Chromium(self).open(self.links[name])

    def handIn(self, page: Page, archive: bytes, name: str) -> int:
        """Choose the archive in the form and send it; the new hand-in's number."""
        path = self.root / name
        path.write_bytes(archive)
        page.chooseFile("#archive", str(path))
        page.clickAndLoad("#send")
        return int(page.evaluate("document.querySelector('tr[data-hand-in]').dataset.handIn"))

    def byApi(self, name: str, archive: bytes) -> None:
        """A hand-in of ``name``'s sent as a script does: the archive as the body, the secret as a bearer."""
        request = urllib.request.Request(f"{self.base}/api/hand-ins", data=archive, method="POST")
        request.add_header("Authorization", "Bearer " + self.links[name].rsplit("/", 1)[1])
        request.add_header("Content-Type", "application/gzip")
        with urllib.request.urlopen(request, timeout=30) as answer:
            self.assertEqual(answer.status, 202)

    def shot(self, page: Page, name: str) -> None:
        picture = self.pictures / f"class-{name}.png"
        page.screenshot(str(picture))
        self.assertEqual(picture.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    def test_aStudentHandsInReadsTheFailAndFixesIt(self) -> None:
        ana = self.signedIn("ana")
        self.assertIn("ana", ana.evaluate("document.querySelector('header .who').textContent"))
        self.byApi("bo", tarGz(folderOf(self.root / "bo", "gambit-split")))  # the one grader is busy with bo's
        first = self.handIn(ana, tarGz(folderOf(self.root / "ana-1", "gambit-end")), "ana-1.tar.gz")
        status = STATUS.format(id=first)
        waiting = ana.evaluate(status)
        self.assertTrue(waiting.startswith("queued: number 1, about "), waiting)
        self.shot(ana, "student-queue")
        verdict = ana.waitThroughReloads(f"{status} === 'fail'", status, 120)
        self.assertEqual(verdict, "fail")
        self.shot(ana, "student-fail")
        ana.clickAndLoad(f'tr[data-hand-in="{first}"] a')
        failed = "[...document.querySelectorAll('section.rule.fail')].map(s => s.id)"
        self.assertEqual(ana.evaluate(failed), ["gambit-end"])
        exchange = "document.querySelector('#gambit-end table').textContent"
        self.assertIn("END", ana.evaluate(exchange))
        again = "velhanet-check gambit --target 127.0.0.1:22022 --only gambit-end"
        self.assertIn(again, ana.evaluate("document.body.textContent"), "the command to run at home")
        self.shot(ana, "student-report")
        ana.go(f"{self.base}/me")
        second = self.handIn(ana, tarGz(folderOf(self.root / "ana-2", "none")), "ana-2.tar.gz")
        status = STATUS.format(id=second)
        self.assertEqual(ana.waitThroughReloads(f"{status} === 'pass'", status, 120), "pass")
        change = f"document.querySelector('tr[data-hand-in=\"{second}\"] td:last-child').textContent"
        self.assertIn("fixed: gambit-end", ana.evaluate(change))
        self.shot(ana, "student-fixed")
        tia = self.signedIn("tia")
        self.assertTrue(tia.evaluate("location.pathname === '/class'"))
        cell = "document.querySelector('table.matrix tbody tr td.cell a').getAttribute('href')"
        self.assertTrue(tia.evaluate(cell).startswith(f"/hand-ins/{second}#gambit-"), "each cell links to its rule")
        rowOf = "[...document.querySelectorAll('table.matrix tbody tr')].find(r => r.textContent.startsWith('{}'))"
        self.assertEqual(tia.evaluate(rowOf.format("ana") + ".querySelectorAll('td.fail').length"), 0, "ana's fix")
        self.assertEqual(tia.evaluate(rowOf.format("bo") + ".querySelectorAll('td.fail').length"), 1, "bo's fault")
        self.shot(tia, "teacher-matrix")
        tia.go(f"{self.base}/students/ana")
        rows = "[...document.querySelectorAll('tr[data-hand-in]')]"
        rows += ".map(row => row.dataset.handIn + ' ' + row.querySelector('.status').textContent)"
        self.assertEqual(tia.evaluate(rows), [f"{second} pass", f"{first} fail"])
        self.shot(tia, "teacher-history")

    def test_aProgramsScriptChangesNothing(self) -> None:
        bo = self.signedIn("bo")
        folder = self.root / "bo"
        folder.mkdir()
        (folder / "xss.py").write_text(XSS_SERVER)
        (folder / "velhanet-run").write_text(f"{PYTHON} xss.py {{port}}\n")
        (folder / "<img src=x onerror=window.__xss=3>.txt").write_text(PAYLOAD)
        number = self.handIn(bo, tarGz(folder), "bo.tar.gz")
        status = STATUS.format(id=number)
        bo.waitThroughReloads(f"{status} === 'fail'", status, 120)
        refused = self.handIn(bo, zipOf({"velhanet-run": b"true", f"../{PAYLOAD}": b"x"}), "bad.zip")
        self.assertIn(f"../{PAYLOAD}: a path that leaves the folder", bo.evaluate(STATUS.format(id=refused)))
        self.assertTrue(bo.evaluate(NOTHING_RAN), "the student's page")
        bo.go(f"{self.base}/hand-ins/{number}")
        text = bo.evaluate("document.body.textContent")
        self.assertIn(PAYLOAD, text, "shown as text: in what it printed and on the wire")
        self.assertTrue(bo.evaluate(NOTHING_RAN), "the report")
        self.assertEqual(bo.evaluate("document.scripts.length"), 0, "a report page has no script at all")
        tia = self.signedIn("tia")
        for path in ("/class", "/students/bo", f"/hand-ins/{number}"):
            tia.go(self.base + path)
            self.assertTrue(tia.evaluate(NOTHING_RAN), path)
        self.shot(tia, "xss-report")
