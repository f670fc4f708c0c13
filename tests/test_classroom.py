"""The class server over real HTTP on loopback: who may see what, forms and tokens, hand-ins and their records.

Every test starts a class server as twistd does (its ``tap`` and ``makeService``) with a class of one
teacher (tia) and three students (ana, bo, cy), and speaks to it over ``twisted.web.client``: a browser of its own per
person, cookies kept. Gradings are real (the faulty Gambit stand-in, without the sandbox here: the
sandbox's own tests are elsewhere).
"""

from __future__ import annotations

import io
import sqlite3
import subprocess
import tarfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import ILogObserver, formatEvent, globalLogPublisher
from twisted.trial.unittest import TestCase
from zope.interface import provider

from tests.classroom_harness import ClassServer, folderOf, headers, sleep, tarGz, upload, zipOf
from tests.processes import ENVIRONMENT, PYTHON
from velhanet.classroom import api
from velhanet.classroom.archives import UploadLimits
from velhanet.classroom.links import makeLink
from velhanet.sandbox.limits import MIB

FUTURE = "2099-12-20 23:59"
ONLY = ("--only", "gambit-end,gambit-create")
"""The rules these tests need graded (every rule is graded in the browser's tests): a grading in seconds."""


def run(test: Any) -> Deferred[None]:
    return Deferred.fromCoroutine(test)


class SignInTests(TestCase):
    timeout = 60

    def test_aLinkSignsInWithASafeCookie(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            browser = server.client()
            answer = await browser.get(server.url(f"/sign-in/{server.secrets['ana']}"), allow_redirects=False)
            self.assertEqual((answer.code, answer.headers.getRawHeaders(b"location")), (303, [b"/"]))
            cookie = answer.headers.getRawHeaders(b"set-cookie")[0].decode()
            for attribute in ("HttpOnly", "SameSite=Lax", "Path=/"):
                self.assertIn(attribute, cookie)
            self.assertEqual(answer.headers.getRawHeaders(b"referrer-policy"), [b"no-referrer"])
            home = await browser.get(server.url("/"), allow_redirects=False)
            self.assertEqual(home.headers.getRawHeaders(b"location"), [b"/me"])
            page = await browser.get(server.url("/me"))
            text = await page.text()
            self.assertEqual(page.code, 200)
            self.assertIn("ana", text)
            csp = page.headers.getRawHeaders(b"content-security-policy")[0]
            self.assertIn(b"script-src 'self'", csp)
            self.assertNotIn(b"unsafe-inline'; form", csp.split(b"script-src")[1][:30])
            teacher = await server.signedIn("tia")
            self.assertEqual(
                (await teacher.get(server.url("/"), allow_redirects=False)).headers.getRawHeaders(b"location"),
                [b"/class"],
            )

        return run(test())

    def test_noSecretInTheLog(self) -> Deferred[None]:
        """A sign-in link's secret, a bearer token and a session cookie never reach the log."""
        lines: list[str] = []

        @provider(ILogObserver)
        def observe(event: dict[str, Any]) -> None:
            lines.append(formatEvent(event))

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)

        async def test() -> None:
            server = ClassServer(self, "2099-12-20 23:59", "--trace")
            await server.start()
            browser = await server.signedIn("ana")
            await (await browser.get(server.url("/me"))).text()
            await (await server.http.get(server.url("/api/hand-ins"), headers=server.bearer("bo"))).text()
            await sleep(0.1)  # the access log is written once each request is over
            logged = "\n".join(lines)
            self.assertIn("/sign-in/...", logged)
            self.assertIn("GET /me", logged)
            for secret in server.secrets.values():
                self.assertNotIn(secret, logged)

        return run(test())

    def test_aTokenSignsInTheApi(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            answer = await server.http.get(server.url("/api/hand-ins"), headers=server.bearer("bo"))
            self.assertEqual((answer.code, await answer.json()), (200, {"handIns": []}))
            wrong = await server.http.get(server.url("/api/hand-ins"), headers=headers(authorization=b"Bearer nope"))
            self.assertEqual(wrong.code, 401)
            self.assertIn("not signed in", (await wrong.json())["error"])

        return run(test())

    def test_wrongAndRevokedLinksAreRefused(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            wrong = await server.http.get(server.url("/sign-in/not-a-secret"), allow_redirects=False)
            self.assertEqual(wrong.code, 403)
            self.assertIn("signs nobody in", await wrong.text())
            browser = await server.signedIn("ana")
            old = server.secrets["ana"]
            assert server.service is not None
            server.secrets["ana"] = makeLink(server.service.site.store, "ana", datetime.now().astimezone())
            again = await server.http.get(server.url(f"/sign-in/{old}"), allow_redirects=False)
            self.assertEqual(again.code, 403, "the revoked link")
            self.assertEqual((await browser.get(server.url("/me"))).code, 401, "its session ended too")
            oldToken = await server.http.get(server.url("/api/hand-ins"), headers=headers(f"Bearer {old}".encode()))
            self.assertEqual(oldToken.code, 401)
            await server.signedIn("ana")  # the new one works

        return run(test())

    def test_signInAttemptsAreLimitedPerAddress(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            codes = []
            for attempt in range(21):
                answer = await server.http.get(server.url(f"/sign-in/guess-{attempt}"), allow_redirects=False)
                await answer.content()
                codes.append(answer.code)
            self.assertEqual(codes, [403] * 20 + [429])
            self.assertTrue(answer.headers.getRawHeaders(b"retry-after"))

        return run(test())


TEACHER_PAGES = ["/class", "/class.csv", "/api/class", "/students/ana", "/class/league"]
TEACHER_POSTS = ["/class/regrade", "/class/league"]


class WhoMaySeeWhatTests(TestCase):
    timeout = 120

    def test_aStudentIsDeniedAnotherStudentsUrlsAndEveryTeacherUrl(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self, FUTURE, *ONLY)
            await server.start()
            code, answer = await server.handIn("ana", tarGz(folderOf(Path(self.mktemp()), "gambit-end")))
            self.assertEqual(code, 202, answer)
            graded = await server.waitFor("ana", answer["id"], ("graded",))
            self.assertEqual(graded["status"], "graded")
            number = answer["id"]
            ana, bo = await server.signedIn("ana"), await server.signedIn("bo")
            theirs = [f"/hand-ins/{number}", f"/hand-ins/{number}.json", f"/hand-ins/{number}/log"]
            for path in theirs:
                self.assertEqual((await ana.get(server.url(path))).code, 200, path)
                self.assertEqual((await bo.get(server.url(path))).code, 404, path)
            other = await server.http.get(server.url(f"/api/hand-ins/{number}"), headers=server.bearer("bo"))
            self.assertEqual(other.code, 404)
            listed = await (await server.http.get(server.url("/api/hand-ins"), headers=server.bearer("bo"))).json()
            self.assertEqual(listed, {"handIns": []}, "bo's list holds none of ana's")
            self.assertEqual((await bo.get(server.url("/hand-ins/999"))).code, 404, "one that does not exist")
            csrf = await server.csrfOf(bo)
            for path in TEACHER_PAGES:
                self.assertEqual((await bo.get(server.url(path))).code, 403, path)
                bearer = await server.http.get(server.url(path), headers=server.bearer("bo"))
                self.assertEqual(bearer.code, 403, path)
            for path in TEACHER_POSTS:
                self.assertEqual((await bo.post(server.url(path), data={"csrf": csrf})).code, 403, path)
            nobody = server.client()
            for path in ["/me", f"/hand-ins/{number}", "/events", *TEACHER_PAGES]:
                self.assertEqual((await nobody.get(server.url(path))).code, 401, path)
            teacher = await server.signedIn("tia")
            for path in [*theirs, "/class", "/class.csv", "/api/class", "/students/ana"]:
                self.assertEqual((await teacher.get(server.url(path))).code, 200, path)
            matrix = await (await teacher.get(server.url("/api/class"))).json()
            self.assertEqual(matrix["students"]["ana"]["rules"]["gambit-end"], "FAIL")
            self.assertIsNone(matrix["students"]["bo"])

        return run(test())

    def test_aPostWithTheCookieAndNoCsrfTokenIsRefused(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            ana = await server.signedIn("ana")
            archive = tarGz(folderOf(Path(self.mktemp())))
            form = await ana.post(server.url("/hand-ins"), files=upload(archive))
            self.assertEqual(form.code, 403)
            self.assertIn("token", await form.text())
            apiPost = await ana.post(
                server.url("/api/hand-ins"), data=archive, headers=headers(kind=b"application/gzip")
            )
            self.assertEqual(apiPost.code, 403)
            wrongToken = await ana.post(
                server.url("/api/hand-ins"),
                data=archive,
                headers=headers(kind=b"application/gzip", csrf=b"forged"),
            )
            self.assertEqual(wrongToken.code, 403)
            teacher = await server.signedIn("tia")
            self.assertEqual((await teacher.post(server.url("/class/regrade"))).code, 403)
            self.assertEqual((await ana.get(server.url("/me"))).code, 200, "a sign-out without the token did nothing")
            await ana.post(server.url("/sign-out"))
            self.assertEqual((await ana.get(server.url("/me"))).code, 200)
            listed = await (await server.http.get(server.url("/api/hand-ins"), headers=server.bearer("ana"))).json()
            self.assertEqual(listed["handIns"], [], "nothing was handed in")
            csrf = await server.csrfOf(ana)
            good = await ana.post(
                server.url("/hand-ins"),
                data={"csrf": csrf},
                files=upload(archive),
                allow_redirects=False,
            )
            self.assertEqual((good.code, good.headers.getRawHeaders(b"location")), (303, [b"/me"]))
            out = await ana.post(server.url("/sign-out"), data={"csrf": csrf}, allow_redirects=False)
            self.assertEqual(out.code, 303)
            self.assertEqual((await ana.get(server.url("/me"))).code, 401, "signed out")

        return run(test())


def tarWith(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        run = tarfile.TarInfo("velhanet-run")
        command = b"true\n"
        run.size = len(command)
        archive.addfile(run, io.BytesIO(command))
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def member(
    name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    return info, data


class BadArchiveTests(TestCase):
    """Each kind of bad archive is refused, with the limit or the rule it broke and its value."""

    timeout = 60

    def test_eachBadArchiveIsRefusedWithItsReason(self) -> Deferred[None]:
        limits = UploadLimits()
        bomb = zipOf({"velhanet-run": b"true\n", "zeros": b"\0" * (limits.expanded + 1)})
        cases = {
            "not an archive": (b"hello, this is not an archive", "neither a .zip nor a .tar.gz archive"),
            "damaged": (b"PK\x03\x04" + b"\0" * 40, "the archive is damaged"),
            "zip bomb": (bomb, "expands to more than the limit of 64 MiB: refused while it expanded"),
            "too many files": (
                zipOf({"velhanet-run": b"true\n", **{f"f{n}": b"" for n in range(limits.files)}}),
                "holds more than 2000 files",
            ),
            "dot-dot": (zipOf({"velhanet-run": b"x", "../escape": b"x"}), "../escape: a path that leaves the folder"),
            "absolute": (tarWith(member("/etc/evil", data=b"x")), "/etc/evil: a path that leaves the folder"),
            "symlink out": (
                tarWith(member("out", tarfile.SYMTYPE, "../../etc/passwd")),
                "out: a link out of the folder",
            ),
            "hard link out": (tarWith(member("hard", tarfile.LNKTYPE, "/etc/passwd")), "a path that leaves the folder"),
            "device": (tarWith(member("tty", tarfile.CHRTYPE)), "tty: a device file or FIFO is refused"),
            "fifo": (tarWith(member("pipe", tarfile.FIFOTYPE)), "pipe: a device file or FIFO is refused"),
            "no velhanet-run": (zipOf({"main.py": b"print(1)"}), "no velhanet-run at the top of the folder"),
        }

        async def test() -> None:
            server = ClassServer(self)
            await server.start()
            for case, (archive, reason) in cases.items():
                code, answer = await server.handIn("ana", archive)
                self.assertEqual((code, answer["status"]), (422, "refused"), case)
                self.assertIn(reason, answer["reason"], case)
            big = await server.http.post(
                server.url("/api/hand-ins"),
                data=b"\x1f\x8b" + b"\0" * (16 * MIB + 70_000),
                headers=server.bearer("ana", b"application/gzip"),
            )
            self.assertEqual(big.code, 413)
            self.assertEqual((await big.json())["error"], "the archive is larger than the limit of 16 MiB")
            listed = await (await server.http.get(server.url("/api/hand-ins"), headers=server.bearer("ana"))).json()
            self.assertEqual({h["status"] for h in listed["handIns"]}, {"refused"})
            self.assertEqual(len(listed["handIns"]), len(cases), "each refused one is recorded, the too large is not")
            assert server.service is not None
            left = sorted(p.name for p in (server.root / "state" / "hand-ins").iterdir() if (p / "folder").exists())
            self.assertEqual(left, [], "a refused archive leaves no files behind")
            wrongType = await server.http.post(
                server.url("/api/hand-ins"),
                data=b"x",
                headers=server.bearer("ana", b"text/plain"),
            )
            self.assertEqual(wrongType.code, 415)

        return run(test())


class RecordTests(TestCase):
    timeout = 180

    def test_aHandInIsRecordedBeforeItIsAcknowledged(self) -> Deferred[None]:
        """When the answer is made, another connection to the database already sees the hand-in, and its
        archive is on disk under its hash."""
        seen: list[tuple[Any, ...]] = []
        server = ClassServer(self, FUTURE, *ONLY)
        realAsJson = api.asJson

        def spy(request: Any, data: Any, code: int = 200) -> bytes:
            if code == 202:
                other = sqlite3.connect(server.root / "state" / "grades.db")
                row = other.execute("SELECT id, student, status, archive FROM handins WHERE id = ?", (data["id"],))
                found = row.fetchone()
                other.close()
                archive = server.root / "state" / "archives" / found[3][:2] / found[3]
                seen.append((*found, archive.exists()))
            return realAsJson(request, data, code)

        self.patch(api, "asJson", spy)

        async def test() -> None:
            await server.start()
            code, answer = await server.handIn("ana", tarGz(folderOf(Path(self.mktemp()))))
            self.assertEqual((code, answer["status"], answer["position"]), (202, "queued", 1))
            self.assertEqual(len(seen), 1)
            number, student, _status, _archive, stored = seen[0]
            self.assertEqual((number, student, stored), (answer["id"], "ana", True))
            await server.waitFor("ana", answer["id"], ("graded",))

        return run(test())

    def test_aLateHandInIsMarkedLateAndLeftOutOfTheExport(self) -> Deferred[None]:
        async def test() -> None:
            deadline = datetime.now().astimezone() + timedelta(days=1)
            server = ClassServer(self, deadline.isoformat(" ", "minutes"), *ONLY)
            await server.start()
            assert server.service is not None
            first = folderOf(Path(self.mktemp()), "gambit-end")
            code, onTime = await server.handIn("ana", tarGz(first))
            graded = await server.waitFor("ana", onTime["id"], ("graded",))
            self.assertFalse(graded["late"])
            server.service.site.desk.now = lambda: deadline + timedelta(minutes=5)
            fixed = folderOf(Path(self.mktemp()), "none")
            code, late = await server.handIn("ana", tarGz(fixed))
            self.assertTrue(late["late"])
            graded = await server.waitFor("ana", late["id"], ("graded",))
            self.assertEqual((graded["status"], graded["late"]), ("graded", True))
            self.assertEqual(graded["report"]["counts"]["FAIL"], 0, "it is graded all the same")
            self.assertIn("fixed: gambit-end", graded["change"])
            teacher = await server.signedIn("tia")
            sheet = await (await teacher.get(server.url("/class.csv"))).text()
            rows = {line.split(",")[0]: line for line in sheet.splitlines()[1:]}
            self.assertIn(onTime["version"], rows["ana"])
            self.assertNotIn(late["version"], rows["ana"])
            self.assertIn("gambit-end", rows["ana"], "the failed rule of the hand-in before the deadline")
            self.assertIn("nothing graded before the deadline", rows["bo"])
            page = await (await teacher.get(server.url("/class"))).text()
            self.assertIn("late", page)

        return run(test())

    def test_aNewerHandInReplacesTheWaitingOne(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self, FUTURE, *ONLY)
            await server.start()
            folder = folderOf(Path(self.mktemp()), "gambit-end")
            numbers = []
            for fault in ("gambit-end", "gambit-create", "gambit-split"):
                (folder / "velhanet-run").write_text(f"{PYTHON} gambit_server.py {{port}} {fault}\n")
                code, answer = await server.handIn("ana", tarGz(folder))
                numbers.append(answer["id"])
            first, second, third = [await server.status("ana", number) for number in numbers]
            self.assertEqual(first["status"], "grading", "one grading per student at a time")
            self.assertEqual(second["status"], "replaced")
            self.assertIn(f"#{numbers[2]}", second["reason"])
            self.assertEqual((third["status"], third["position"]), ("queued", 1))
            code, bos = await server.handIn("bo", tarGz(folderOf(Path(self.mktemp()), "gambit-end")))
            self.assertEqual((bos["status"], bos["position"]), ("queued", 2), "behind ana's waiting one")
            bo = await server.status("bo", bos["id"])
            self.assertEqual(bo["status"], "grading", "but ana is graded already: bo goes first")
            await server.waitFor("ana", numbers[2], ("graded",))

        return run(test())


class StartTests(TestCase):
    def test_withoutBubblewrapTheServerRefusesToStartUnlessSandboxOff(self) -> None:
        from velhanet.sandbox import availability
        from velhanet.sandbox.availability import Availability
        from velhanet.startup import CannotStart

        missing = Availability(False, "bwrap is not installed: install bubblewrap")
        self.patch(availability, "probeBubblewrap", lambda: missing)
        from velhanet.sandbox import sandbox

        self.patch(sandbox, "probeBubblewrap", lambda: missing)
        server = ClassServer(self)
        server.more = []
        options = server.options()
        options["sandboxSettings"] = type(options["sandboxSettings"])("auto", options["sandboxSettings"].limits)
        from velhanet.classroom.service import makeService

        with self.assertRaises(CannotStart) as refused:
            makeService(options)
        self.assertIn("students' programs would run without a sandbox (bwrap is not installed", str(refused.exception))
        self.assertIn("--sandbox off", str(refused.exception))

    def test_tlsWithoutPyOpenSslIsOneLine(self) -> None:
        """``--listen ssl:…`` where pyOpenSSL is missing (a plain install, and this suite's environment: it is
        hidden here in case it is installed): one line naming the extra that brings it, exit 1, no traceback."""
        hidden = Path(self.mktemp()).resolve()
        (hidden / "OpenSSL").mkdir(parents=True)
        (hidden / "OpenSSL" / "__init__.py").write_text("raise ImportError('pyOpenSSL is not installed')\n")
        server = ClassServer(self)
        command = [PYTHON, "-c", "from twisted.scripts.twistd import run; run()", "-n", "--pidfile=", "-l", "-"]
        command += ["class-server", "--class", "class.toml", "--sandbox", "off", "--out", "served"]
        command += ["--listen", "ssl:0:interface=127.0.0.1:privateKey=key.pem:certKey=cert.pem"]
        environment = dict(ENVIRONMENT, PYTHONPATH=f"{hidden}:{ENVIRONMENT['PYTHONPATH']}")
        ended = subprocess.run(command, cwd=server.root, env=environment, capture_output=True, text=True, timeout=60)
        said = (ended.stdout + ended.stderr).strip()
        self.assertEqual(ended.returncode, 1, said)
        self.assertEqual(
            said.splitlines()[-1],
            "twistd class-server: --listen ssl:0:interface=127.0.0.1:privateKey=key.pem:certKey=cert.pem: TLS needs"
            " pyOpenSSL, which this installation lacks: pip install 'velhanet[tls]'",
        )
        self.assertNotIn("Traceback", said)

    def test_theSessionCookieIsSecureOverTls(self) -> None:
        """Over TLS (a request that is secure) the cookie says ``Secure``; over plain HTTP it cannot."""
        from velhanet.classroom.auth import COOKIE, cookieHeader

        overTls, plain = cookieHeader("t0k3n", True).decode(), cookieHeader("t0k3n", False).decode()
        for attribute in (f"{COOKIE.decode()}=t0k3n", "HttpOnly", "SameSite=Lax"):
            self.assertIn(attribute, overTls.split("; "))
        self.assertIn("Secure", overTls.split("; "))
        self.assertNotIn("Secure", plain.split("; "))

    def test_onlyNamesRulesOfTheFamily(self) -> None:
        from velhanet.classroom.service import makeService
        from velhanet.startup import CannotStart

        server = ClassServer(self, FUTURE, "--only", "gambit-end,velha-hello")
        with self.assertRaises(CannotStart) as refused:
            makeService(server.options())
        self.assertEqual(str(refused.exception), "--only velha-hello: no such rule of gambit")

    def test_theClassFileIsChecked(self) -> None:
        from velhanet.classroom.classfile import loadClassroom
        from velhanet.grading.submissions import ClassFileError

        path = Path(self.mktemp())
        path.write_text('family = "gambit"\n[students.ana]\n')
        with self.assertRaises(ClassFileError) as refused:
            loadClassroom(path)
        self.assertIn("no [teachers.NAME] table", str(refused.exception))
        path.write_text('family = "chess"\n[teachers.tia]\n')
        with self.assertRaises(ClassFileError):
            loadClassroom(path)
        path.write_text('family = "gambit"\n[teachers.ana]\n[students.ana]\n')
        with self.assertRaises(ClassFileError) as both:
            loadClassroom(path)
        self.assertIn("both a teacher and a student", str(both.exception))


GIT_CLASS = """family = "gambit"
deadline = "{deadline}"
[teachers.tia]
[students.ana]
[students.bo]
git = "repos/bo"
[students.cy]
"""


def git(folder: Path, *arguments: str) -> str:
    environment = {"GIT_AUTHOR_NAME": "Bo", "GIT_AUTHOR_EMAIL": "bo@example.edu", "HOME": str(folder)}
    environment.update(GIT_COMMITTER_NAME="Bo", GIT_COMMITTER_EMAIL="bo@example.edu", PATH="/usr/bin:/bin")
    done = subprocess.run(["git", "-C", str(folder), *arguments], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class GitStudentTests(TestCase):
    timeout = 180

    def test_gradeMyLastCommitAndThePoller(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self, FUTURE, "--poll", "0", "--only", "gambit-end,gambit-split", classFile=GIT_CLASS)
            repository = folderOf(server.root / "repos" / "bo", "gambit-end")
            git(repository, "init", "-q", "-b", "main")
            git(repository, "add", ".")
            git(repository, "commit", "-q", "-m", "first")
            await server.start()
            bo = await server.signedIn("bo")
            page = await (await bo.get(server.url("/me"))).text()
            self.assertIn("grade my last commit", page)
            ana = await server.signedIn("ana")
            self.assertNotIn("grade my last commit", await (await ana.get(server.url("/me"))).text())
            csrf = await server.csrfOf(ana)
            self.assertEqual(
                (await ana.post(server.url("/commit"), data={"csrf": csrf})).code, 403, "ana has no repository"
            )
            csrf = await server.csrfOf(bo)
            asked = await bo.post(server.url("/commit"), data={"csrf": csrf}, allow_redirects=False)
            self.assertEqual(asked.code, 303)
            listed = await (await bo.get(server.url("/api/hand-ins"))).json()
            [handIn] = listed["handIns"]
            self.assertEqual((handIn["kind"], handIn["version"]), ("git", git(repository, "rev-parse", "HEAD")))
            graded = await server.waitFor("bo", handIn["id"], ("graded",))
            self.assertEqual([r["id"] for r in graded["report"]["rules"] if r["status"] == "FAIL"], ["gambit-end"])
            assert server.service is not None
            await server.service.poll()
            self.assertEqual(
                len((await (await bo.get(server.url("/api/hand-ins"))).json())["handIns"]), 1, "nothing new"
            )
            (repository / "velhanet-run").write_text(
                (repository / "velhanet-run").read_text().replace("gambit-end", "gambit-split")
            )
            git(repository, "commit", "-q", "-am", "second")
            await server.service.poll()
            newest = (await (await bo.get(server.url("/api/hand-ins"))).json())["handIns"][0]
            self.assertEqual(newest["version"], git(repository, "rev-parse", "HEAD"))
            graded = await server.waitFor("bo", newest["id"], ("graded",))
            self.assertIn("fixed: gambit-end", graded["change"])
            self.assertIn("broke: gambit-split", graded["change"])

        return run(test())


class TeacherActionTests(TestCase):
    timeout = 180

    def test_gradeEverythingAgainAndThePageInGerman(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self, FUTURE, *ONLY)
            await server.start()
            code, answer = await server.handIn("ana", tarGz(folderOf(Path(self.mktemp()), "gambit-end")))
            await server.waitFor("ana", answer["id"], ("graded",))
            teacher = await server.signedIn("tia")
            csrf = await server.csrfOf(teacher, "/class")
            again = await teacher.post(server.url("/class/regrade"), data={"csrf": csrf}, allow_redirects=False)
            self.assertEqual(again.code, 303)
            self.assertIn((await server.status("ana", answer["id"]))["status"], ("queued", "grading"))
            graded = await server.waitFor("ana", answer["id"], ("graded",))
            self.assertEqual(graded["status"], "graded")
            assert server.service is not None
            count = server.service.site.history.connection.execute("SELECT COUNT(*) FROM gradings").fetchone()[0]
            self.assertEqual(count, 2, "a second grading of the same hand-in")
            german = headers()
            german.setRawHeaders(b"accept-language", [b"de-DE,de;q=0.9"])
            ana = await server.signedIn("ana")
            page = await ana.get(server.url("/me"), headers=german)
            self.assertEqual(page.headers.getRawHeaders(b"content-language"), [b"de"])
            text = await page.text()
            self.assertIn('<html lang="de">', text)
            self.assertIn("Abgeben", text)
            league = await teacher.post(server.url("/class/league"), data={"csrf": csrf})
            self.assertEqual(league.code, 409)
            self.assertIn("only a socha-player class has a league", await league.text())

        return run(test())


PLAYER_CLASS = """family = "socha-player"
deadline = "{deadline}"
[teachers.tia]
[students.ana]
[students.bo]
[students.cy]
"""


def playerFolder(root: Path, seed: int) -> Path:
    """velhanet's example Piranhas player, its one velhanet-run good for the checks and for a league."""
    root.mkdir(parents=True)
    command = f"{PYTHON} -m velhanet.socha.example --host {{host}} --port {{port}} --reservation '{{reservation}}'"
    (root / "velhanet-run").write_text(f"{command} --seed {seed}\n")
    return root


class LeagueTests(TestCase):
    timeout = 400

    def test_theClassLeagueOfTheLastHandInsBeforeTheDeadline(self) -> Deferred[None]:
        async def test() -> None:
            server = ClassServer(self, classFile=PLAYER_CLASS)
            await server.start()
            for seed, name in enumerate(("ana", "bo"), start=1):
                code, answer = await server.handIn(name, tarGz(playerFolder(server.root / name, seed)))
                graded = await server.waitFor(name, answer["id"], ("graded",), 200)
                self.assertEqual(graded["report"]["counts"]["FAIL"], 0, graded["report"])
            teacher = await server.signedIn("tia")
            csrf = await server.csrfOf(teacher, "/class")
            started = await teacher.post(server.url("/class/league"), data={"csrf": csrf}, allow_redirects=False)
            self.assertEqual(started.code, 303)
            assert server.service is not None
            league = server.service.site.league
            while league.state() in ("being played",):
                await sleep(0.5)
            self.assertEqual(
                league.state(), "played: see its standings", (server.root / "state/league/run.log").read_text()
            )
            standings = await (await teacher.get(server.url("/class/league"))).text()
            self.assertIn("ana", standings)
            self.assertIn("bo", standings)
            self.assertNotIn("cy", standings.split("<table")[1], "cy handed nothing in")
            student = await server.signedIn("ana")
            self.assertEqual((await student.get(server.url("/class/league"))).code, 403)

        return run(test())
