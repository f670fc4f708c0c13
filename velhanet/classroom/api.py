"""The class server's JSON API, for scripts and for students who live in a terminal.

    POST /api/hand-ins        the archive as the body (application/zip or application/gzip):
                              202 {"id", "status": "queued", "position"}, or 422 with the refusal's "reason"
    GET  /api/hand-ins        the caller's hand-ins (a teacher's: everyone's), newest first
    GET  /api/hand-ins/ID     one: "status" (queued, grading, graded, refused, replaced), "late", "reason",
                              "position" and "wait" while it waits, and once graded "report": exactly
                              the JSON ``velhanet-check --json`` writes
    GET  /api/class           teachers: the matrix (each student's last graded hand-in, rule by rule)

``Authorization: Bearer SECRET`` (the personal link's secret) signs a request in; the session cookie
does too, but then a POST must carry the CSRF token (``X-CSRF-Token``), or it is refused: a page of
another site can make a browser send the cookie, not the header. Errors are ``{"error": …}``, in the
caller's language, with the status that says what went wrong.
"""

from __future__ import annotations

import json
from typing import Any

from twisted.web.resource import Resource
from twisted.web.server import Request

from velhanet import i18n
from velhanet.classroom.answers import ClassSite, Endpoint, asJson, rest
from velhanet.classroom.reports import reportJson, withCommands
from velhanet.classroom.store import GRADED, REFUSED, HandIn
from velhanet.i18n import _

ARCHIVE_TYPES = (b"application/zip", b"application/gzip", b"application/x-gzip")


def handInData(site: ClassSite, handIn: HandIn, withReport: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": handIn.id,
        "student": handIn.student,
        "received": handIn.received,
        "kind": handIn.kind,
        "version": handIn.version or None,
        "committed": handIn.committed or None,
        "status": handIn.status,
        "late": handIn.late,
        "reason": handIn.reason or None,
    }
    waiting = site.desk.waiting(handIn)
    if waiting is not None:
        data["position"], data["wait"] = waiting[0], round(waiting[1])
    if withReport and handIn.status == GRADED and handIn.grading is not None:
        found = site.history.grading(handIn.grading)
        if found is not None:
            data["change"] = found[0].change or None
            report = withCommands(found[1], site.desk.grader.settings, site.desk.folderIfAny(handIn))
            data["report"] = json.loads(reportJson(report))
    return data


class ApiHandIns(Endpoint):
    json = True

    async def answer_POST(self, request: Request) -> bytes:
        with i18n.speaking(language := self.site.languageOf(request)):
            person, refused = await self.handingIn(request)
            if person is None:
                return refused
            kind = (request.getHeader(b"content-type") or b"").split(b";")[0].strip().lower()
            if kind not in ARCHIVE_TYPES:
                return self.refuse(request, 415, _("send the archive as application/zip or application/gzip"))
            assert request.content is not None
            data = request.content.read()
        received = await self.site.desk.receiveUpload(person.name, data, language)
        with i18n.speaking(language):
            answer = handInData(self.site, received.handIn)  # as it was when it was queued: its position then
            answer.pop("wait", None)
            if received.handIn.status != REFUSED:
                answer["position"] = received.position
            return asJson(request, answer, 422 if received.handIn.status == REFUSED else 202)

    async def answer_GET(self, request: Request) -> bytes:
        person, _how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is None:
                return self.notSignedIn(request)
            path = rest(request)
            wanted = path[0].decode("ascii", "replace") if path else ""
            if wanted:
                handIn = self.site.store.find(int(wanted)) if wanted.isdigit() else None
                if handIn is None or not person.owns(handIn.student):
                    return self.notFound(request)
                return asJson(request, handInData(self.site, handIn, withReport=True))
            handIns = self.site.store.allHandIns() if person.teacher else self.site.store.handInsOf(person.name)
            return asJson(request, {"handIns": [handInData(self.site, handIn) for handIn in handIns]})


class ApiClass(Endpoint):
    json = True

    async def answer_GET(self, request: Request) -> bytes:
        person, _how = await self.site.person(request)
        with i18n.speaking(self.site.languageOf(request)):
            if person is None:
                return self.notSignedIn(request)
            if not person.teacher:
                return self.teachersOnly(request)
            site = self.site
            students: dict[str, dict[str, Any] | None] = {}
            for student in site.classroom.students:
                handIn = site.store.lastGraded(student.name)
                found = site.history.grading(handIn.grading) if handIn and handIn.grading else None
                if handIn is None or found is None:
                    students[student.name] = None
                    continue
                graded, report = found
                students[student.name] = {
                    "handIn": handIn.id,
                    "version": handIn.version,
                    "late": handIn.late,
                    "verdict": graded.verdict,
                    "cannotTest": report.cannotTest or None,
                    "rules": {outcome.anchor: outcome.status for outcome in report.outcomes},
                }
            deadline = site.classroom.deadline
            return asJson(
                request,
                {
                    "family": site.classroom.family,
                    "deadline": deadline.isoformat() if deadline else None,
                    "students": students,
                },
            )


class Api(Resource):
    def __init__(self, site: ClassSite) -> None:
        super().__init__()
        self.handIns, self.matrix = ApiHandIns(site), ApiClass(site)
        self.missing = ApiMissing(site)

    def getChild(self, path: bytes, request: Request) -> Resource:
        return {b"hand-ins": self.handIns, b"class": self.matrix}.get(path, self.missing)


class ApiMissing(Endpoint):
    json = True

    async def answer_GET(self, request: Request) -> bytes:
        with i18n.speaking(self.site.languageOf(request)):
            return self.notFound(request)

    answer_POST = answer_GET
