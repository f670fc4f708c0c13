"""The class server's pages and forms (``twisted.web``): who asks decides what they see.

    /                       signed in: to one's page; else how to sign in
    /sign-in/SECRET         a personal link: a session cookie, then one's page (limited per address)
    /sign-out               POST: the session ends
    /me                     a student's page: hand in, the queue, their hand-ins and reports
    /hand-ins               POST (a student, with the form's token): an upload from the browser
    /hand-ins/ID            a graded hand-in's evidence page (``.json``: its report; ``/log``: what it printed)
    /commit                 POST (a git student): grade my last commit
    /events                 the live updates of one's hand-ins (a teacher's: everyone's)
    /class                  a teacher's page: the matrix, the queue, the students; POST /class/regrade
    /class/league           socha-player: the league's standings; POST: play it
    /class.csv              the gradebook (the last graded hand-in before the deadline)
    /students/NAME          a student's hand-ins, for a teacher
    /static/…               the one script and the stylesheet

A student asking for a teacher's address gets 403, for another student's hand-in 404 (it is not
theirs to know it exists); nobody signed in gets 401.
"""

from __future__ import annotations

from importlib import resources as packageFiles

from twisted.cred.error import UnauthorizedLogin
from twisted.web.resource import Resource
from twisted.web.server import Request

from velhanet import i18n
from velhanet.checks.outcome import Report
from velhanet.classroom.answers import ClassSite, Endpoint, clientAddress, cookieOf, html, plain, redirect, rest
from velhanet.classroom.api import Api
from velhanet.classroom.auth import LinkSecret, Person, cookieHeader, signIn
from velhanet.classroom.pages import Shown, historyPage, messagePage, studentPage, teacherPage
from velhanet.classroom.reports import reportJson, reportPage, withCommands
from velhanet.classroom.store import GRADED, GRADING, QUEUED, HandIn
from velhanet.grading.gradebook import ClassLine, csvText
from velhanet.grading.submissions import Submission
from velhanet.i18n import _


def shownOf(site: ClassSite, handIns: list[HandIn]) -> list[Shown]:
    shown = []
    for handIn in handIns:
        report, change = None, ""
        if handIn.status == GRADED and handIn.grading is not None:
            found = site.history.grading(handIn.grading)
            if found is not None:
                report, change = found[1], found[0].change
        shown.append(Shown(handIn, report, change, site.desk.waiting(handIn)))
    return shown


class Home(Endpoint):
    async def answer_GET(self, request: Request) -> bytes:
        person, _how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is not None:
                return redirect(request, b"/class" if person.teacher else b"/me")
            said = _("Open your personal link to sign in: your teacher hands it out, one for each of you.")
            return html(request, messagePage(_("velhanet: a class"), said))


class SignInLink(Endpoint):
    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            address = clientAddress(request)
            if not self.site.limiter.allow(address):
                request.setHeader(b"retry-after", str(self.site.limiter.retryAfter(address)).encode())
                return self.refuse(request, 429, _("too many sign-in attempts from your address: wait a little"))
            secret = "/".join(part.decode("utf-8", "replace") for part in rest(request)).strip("/")
            try:
                person = await signIn(self.site.portal, LinkSecret(secret))
            except UnauthorizedLogin:
                return self.refuse(request, 403, _("this link signs nobody in (any more): ask your teacher for yours"))
            token = self.site.sessions.open(person.name, self.site.now())
            request.setHeader(b"set-cookie", cookieHeader(token, request.isSecure()))
            return redirect(request, b"/")


class SignOut(Endpoint):
    async def answer_POST(self, request: Request) -> bytes:
        person, how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is None or how != "cookie":
                return self.notSignedIn(request)
            if not self.site.csrfOk(request, how):
                return self.noCsrf(request)
        self.site.sessions.close(cookieOf(request))
        request.setHeader(b"set-cookie", cookieHeader("", request.isSecure(), 0))
        return redirect(request, b"/")


class Me(Endpoint):
    async def answer_GET(self, request: Request) -> bytes:
        person, how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is None:
                return self.notSignedIn(request)
            if person.teacher:
                return redirect(request, b"/class")
            site = self.site
            csrf = site.sessions.csrf(cookieOf(request)) if how == "cookie" else ""
            git = bool(site.classroom.people[person.name].git) if person.name in site.classroom.people else False
            shown = shownOf(site, site.store.handInsOf(person.name))
            return html(request, studentPage(site.classroom, person.name, csrf, shown, site.now(), git))


class HandIns(Endpoint):
    """``POST /hand-ins``: a browser's upload; ``GET /hand-ins/ID[.json|/log]``: a graded hand-in."""

    async def answer_POST(self, request: Request) -> bytes:
        with i18n.speaking(language := self.site.languageOf(request)):
            person, refused = await self.handingIn(request)
            if person is None:
                return refused
            archive = request.args.get(b"archive", [b""])[0]
            if not archive:
                return self.refuse(request, 400, _("no archive: choose your folder's .zip or .tar.gz"))
        await self.site.desk.receiveUpload(person.name, archive, language)
        return redirect(request, b"/me")

    async def answer_GET(self, request: Request) -> bytes:
        person, _how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is None:
                return self.notSignedIn(request)
            path = rest(request)
            name = path[0].decode("ascii", "replace") if path else ""
            wanted, _dot, suffix = name.partition(".")
            more = path[1:2]
            handIn = self.site.store.find(int(wanted)) if wanted.isdigit() else None
            if handIn is None or not person.owns(handIn.student):
                return self.notFound(request)
            if handIn.status != GRADED or handIn.grading is None:
                return self.refuse(request, 404, _("hand-in #{id} is not graded yet").format(id=handIn.id))
            found = self.site.history.grading(handIn.grading)
            if found is None:
                return self.notFound(request)
            graded, report = found
            files = self.site.desk.filesOf(handIn.id)
            printed = (files / "program.log").read_bytes() if (files / "program.log").exists() else b""
            report = withCommands(report, self.site.desk.grader.settings, self.site.desk.folderIfAny(handIn))
            if suffix == "json":
                request.setHeader(b"content-type", b"application/json; charset=utf-8")
                return reportJson(report).encode("utf-8") + b"\n"
            if more == [b"log"]:
                return plain(request, printed.decode("utf-8", "replace"))
            return html(request, reportPage(handIn, graded, report, printed, handIn.student))


class Commit(Endpoint):
    async def answer_POST(self, request: Request) -> bytes:
        person, how = await self.site.person(request)
        with i18n.speaking(language := self.site.languageOf(request)):
            if person is None:
                return self.notSignedIn(request)
            entry = self.site.classroom.people.get(person.name)
            if person.teacher or entry is None or not entry.git:
                return self.refuse(request, 403, _("only a student who hands in by git has commits to grade"))
            if not self.site.csrfOk(request, how):
                return self.noCsrf(request)
        await self.site.desk.receiveCommit(person.name, language)
        return redirect(request, b"/me")


class Events(Endpoint):
    async def answer_GET(self, request: Request) -> bytes | None:
        person, _how = await self.site.person(request)
        if person is None:
            with i18n.speaking(self.site.languageOf(request)):
                return self.notSignedIn(request)
        self.site.live.open(request, None if person.teacher else person.name)
        for handIn in self.site.store.handInsOf(person.name) if not person.teacher else self.site.desk.active():
            if handIn.status in (QUEUED, GRADING):
                self.site.live.changed(handIn)
        return None  # the stream stays open: Live writes to it


class TeacherEndpoint(Endpoint):
    """An address only a teacher may ask: anyone else is told so (403), nobody signed in 401."""

    async def teacher(self, request: Request) -> tuple[Person | None, bytes]:
        person, how = await self.site.person(request)
        if person is None:
            return None, self.notSignedIn(request)
        if not person.teacher:
            return None, self.teachersOnly(request)
        if request.method == b"POST" and not self.site.csrfOk(request, how):
            return None, self.noCsrf(request)
        return person, b""


class ClassPage(TeacherEndpoint):
    """``GET /class``; ``POST /class/regrade``; ``/class/league``."""

    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            person, refused = await self.teacher(request)
            if person is None:
                return refused
            site = self.site
            if rest(request)[:1] == [b"league"]:
                return html(request, site.league.page())
            latest = []
            for student in site.classroom.students:
                handIn = site.store.lastGraded(student.name)
                found = site.history.grading(handIn.grading) if handIn and handIn.grading else None
                if handIn is not None and found is not None:
                    latest.append((student.name, handIn, found[1]))
            csrf = site.sessions.csrf(cookieOf(request))
            queue = shownOf(site, site.desk.active())
            league = site.league.state()
            page = teacherPage(site.classroom, person.name, csrf, latest, queue, site.now(), league)
            return html(request, page)

    async def answer_POST(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            person, refused = await self.teacher(request)
            if person is None:
                return refused
            if rest(request)[:1] == [b"regrade"]:
                self.site.desk.regradeAll()
            elif rest(request)[:1] == [b"league"]:
                said = self.site.league.play()
                if said:
                    return self.refuse(request, 409, said)
            else:
                return self.notFound(request)
            return redirect(request, b"/class")


class ClassCsv(TeacherEndpoint):
    """The gradebook: each student's last graded hand-in before the deadline (a late one never counts)."""

    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            person, refused = await self.teacher(request)
            if person is None:
                return refused
            lines = []
            for student in self.site.classroom.students:
                handIn = self.site.store.lastGraded(student.name, onTime=True)
                found = self.site.history.grading(handIn.grading) if handIn and handIn.grading else None
                submission = Submission(
                    student.name,
                    None,
                    handIn.version if handIn else "",
                    handIn.kind if handIn else "upload",
                    handIn.committed if handIn else "",
                    identifier=student.identifier,
                )
                if found is None:
                    nothing = _("nothing graded before the deadline")
                    report = Report(self.site.classroom.family, student.name, cannotTest=nothing)
                    lines.append(ClassLine(submission, report))
                else:
                    lines.append(ClassLine(submission, found[1], found[0].change))
            request.setHeader(b"content-type", b"text/csv; charset=utf-8")
            request.setHeader(b"content-disposition", b'attachment; filename="class.csv"')
            return csvText(lines).encode("utf-8")


class StudentHistory(TeacherEndpoint):
    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            person, refused = await self.teacher(request)
            if person is None:
                return refused
            path = rest(request)
            name = path[0].decode("utf-8", "replace") if path else ""
            entry = self.site.classroom.people.get(name)
            if entry is None or entry.teacher:
                return self.notFound(request)
            site = self.site
            shown = shownOf(site, site.store.handInsOf(name))
            csrf = site.sessions.csrf(cookieOf(request))
            return html(request, historyPage(site.classroom, person.name, name, csrf, shown, site.now()))


ASSETS = {
    b"classroom.js": b"text/javascript; charset=utf-8",
    b"classroom.css": b"text/css; charset=utf-8",
}


class Static(Resource):
    isLeaf = True

    def render_GET(self, request: Request) -> bytes:
        name = rest(request)[0] if rest(request) else b""
        kind = ASSETS.get(name)
        request.setHeader(b"x-content-type-options", b"nosniff")
        if kind is None:
            request.setResponseCode(404)
            return b"404\n"
        request.setHeader(b"content-type", kind)
        request.setHeader(b"cache-control", b"max-age=300")
        return packageFiles.files("velhanet.classroom").joinpath("static", name.decode()).read_bytes()


class ClassRoot(Resource):
    """The tree: the first part of the path chooses the resource."""

    def __init__(self, site: ClassSite) -> None:
        super().__init__()
        self.site = site
        self.children_ = {
            b"": Home(site),
            b"sign-in": SignInLink(site),
            b"sign-out": SignOut(site),
            b"me": Me(site),
            b"hand-ins": HandIns(site),
            b"commit": Commit(site),
            b"events": Events(site),
            b"class": ClassPage(site),
            b"class.csv": ClassCsv(site),
            b"students": StudentHistory(site),
            b"api": Api(site),
            b"static": Static(),
        }
        self.missing = Missing(site)

    def getChild(self, path: bytes, request: Request) -> Resource:
        return self.children_.get(path, self.missing)

    def render(self, request: Request) -> int | bytes:
        return self.children_[b""].render(request)


class Missing(Endpoint):
    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            return self.notFound(request)

    answer_POST = answer_GET
