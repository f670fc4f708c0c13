"""What every resource of the class server shares: who asks, in which language, and how it is answered.

L{Endpoint} is a leaf resource whose ``answer_GET``/``answer_POST`` are coroutines: the request's
person comes from the portal first (L{ClassSite.person}: a bearer token or the session cookie), and
every answer carries the site's headers: a Content-Security-Policy that allows only this site's own
script, style and event stream (no inline script, no other origin, no frames), ``nosniff``, no
referrer (a sign-in link must not leak in one), and no caching of a signed-in page. An unexpected
error is a 500 with one line for the reader and the traceback in the log, never in the page.
L{LimitedRequest} refuses an upload larger than the limit while it arrives, before it is stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from twisted.cred.error import UnauthorizedLogin
from twisted.cred.portal import Portal
from twisted.internet.defer import CancelledError, Deferred
from twisted.logger import Logger
from twisted.web.http import combinedLogFormatter
from twisted.web.iweb import IAccessLogFormatter
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request
from zope.interface import provider

from velhanet import i18n
from velhanet.classroom.archives import UploadLimits, tooLargeText
from velhanet.classroom.auth import COOKIE, LinkSecret, Person, SessionCookie, Sessions, SignInLimiter, signIn
from velhanet.classroom.classfile import Classroom
from velhanet.classroom.desk import Desk
from velhanet.classroom.events import Live
from velhanet.classroom.pages import messagePage
from velhanet.classroom.store import Store
from velhanet.grading.history import History
from velhanet.i18n import _
from velhanet.web.texts import requestLanguage

CONTENT_SECURITY_POLICY = (
    b"default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    b"style-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""The reports' styles are inline (they are also files a student keeps); nothing else is inline."""

UPLOAD_SLACK = 64 * 1024
"""Bytes a browser's multipart form adds around the archive (boundaries, the CSRF field)."""


class LimitedRequest(Request):
    """A request whose body stops being kept once it is larger than ``maxBody``: ``tooLarge`` then says so
    (an upload over the limit is refused while it arrives, never written out whole)."""

    maxBody = UploadLimits().size + UPLOAD_SLACK
    tooLarge = False
    received = 0

    def gotLength(self, length: int | None) -> None:
        self.received = 0
        self.tooLarge = length is not None and length > self.maxBody
        super().gotLength(None if self.tooLarge else length)

    def handleContentChunk(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > self.maxBody:
            self.tooLarge = True
        if not self.tooLarge:
            super().handleContentChunk(data)


SECRET_IN_PATH = re.compile(rb"(/sign-in/)[^/?\s\"]+")


@provider(IAccessLogFormatter)
def accessLine(timestamp: str, request: Request) -> str:
    """The access log's line (Apache's combined format), a sign-in link's secret left out: a log is read by
    more people than a link is meant for."""
    uri = request.uri
    request.uri = SECRET_IN_PATH.sub(rb"\1...", uri)
    try:
        return str(combinedLogFormatter(timestamp, request))
    finally:
        request.uri = uri


def limitedRequests(maxBody: int) -> type[LimitedRequest]:
    return type("ClassRequest", (LimitedRequest,), {"maxBody": maxBody})


@dataclass
class ClassSite:
    """Everything the resources reach: the class, its records, the desk, the portal, the live streams."""

    classroom: Classroom
    store: Store
    history: History
    desk: Desk
    portal: Portal
    sessions: Sessions
    limiter: SignInLimiter
    live: Live
    league: Any
    """The league of a socha-player class (``league.ClassLeague``)."""
    reactor: Any
    limits: UploadLimits
    language: str | None = None
    """The service's ``--language``; None: each reader's browser's."""
    trace: bool = False
    """``--trace``: every request in the log, with who asked and the answer's status."""
    now: Callable[[], datetime] = lambda: datetime.now().astimezone()

    async def person(self, request: Request) -> tuple[Person | None, str]:
        """Who asks, and how (``bearer``, ``cookie``, or ``""`` for nobody); a wrong bearer token counts as a
        sign-in attempt of its address."""
        authorization = (request.getHeader(b"authorization") or b"").decode("latin-1")
        if authorization.lower().startswith("bearer "):
            address = clientAddress(request)
            try:
                return await signIn(self.portal, LinkSecret(authorization[7:].strip())), "bearer"
            except UnauthorizedLogin:
                self.limiter.allow(address)
                return None, ""
        token = cookieOf(request)
        if token:
            try:
                return await signIn(self.portal, SessionCookie(token)), "cookie"
            except UnauthorizedLogin:
                return None, ""
        return None, ""

    def csrfOk(self, request: Request, how: str) -> bool:
        """A change asked with the session cookie carries its CSRF token (a form field or a header); one asked
        with a bearer token needs none."""
        if how == "bearer":
            return True
        given = request.args.get(b"csrf", [b""])[0] or request.getHeader(b"x-csrf-token") or b""
        return self.sessions.checkCsrf(cookieOf(request), given.decode("utf-8", "replace"))

    def languageOf(self, request: Request) -> str:
        code = requestLanguage(request, self.language)
        request.setHeader(b"content-language", i18n.language(code).tag.encode("ascii"))
        if self.language is None:
            request.setHeader(b"vary", b"Accept-Language, Cookie, Authorization")
        return code


def rest(request: Request) -> list[bytes]:
    """The path below the resource that answers (``/hand-ins/12/log``: ``[b"12", b"log"]``)."""
    return list(request.postpath or [])


def howSignedIn(request: Request) -> str:
    """``bearer``, ``cookie`` or ``-``: how a request says who it is (never the secret itself)."""
    if request.getHeader(b"authorization"):
        return "bearer"
    return "cookie" if cookieOf(request) else "-"


def cookieOf(request: Request) -> str:
    value = request.getCookie(COOKIE)
    return value.decode("ascii", "replace") if value else ""


def clientAddress(request: Request) -> str:
    peer = request.getClientAddress()
    return str(getattr(peer, "host", peer))


def secured(request: Request) -> None:
    request.setHeader(b"content-security-policy", CONTENT_SECURITY_POLICY)
    request.setHeader(b"x-content-type-options", b"nosniff")
    request.setHeader(b"referrer-policy", b"no-referrer")
    request.setHeader(b"x-frame-options", b"DENY")
    request.setHeader(b"cache-control", b"no-store")


def html(request: Request, text: str, code: int = 200) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/html; charset=utf-8")
    return text.encode("utf-8")


def asJson(request: Request, data: Any, code: int = 200) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"application/json; charset=utf-8")
    return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def plain(request: Request, text: str, code: int = 200) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    return (text + "\n").encode("utf-8")


def redirect(request: Request, where: bytes) -> bytes:
    request.setResponseCode(303)
    request.setHeader(b"location", where)
    return b""


Handler = Callable[[Request], Coroutine[Any, Any, bytes | None]]
"""An answer's coroutine: the body, or None for a stream that stays open."""


class Endpoint(Resource):
    """A leaf whose ``answer_METHOD(request)`` coroutines make the body; other methods are 405."""

    isLeaf = True
    log = Logger()
    json = False
    """Answers in JSON (the API) rather than pages."""

    def __init__(self, site: ClassSite) -> None:
        super().__init__()
        self.site = site

    def render(self, request: Request) -> int | bytes:
        secured(request)
        method = request.method.decode("ascii", "replace")
        handler: Handler | None = getattr(self, f"answer_{method}", None)
        if handler is None:
            with i18n.speaking(self.site.languageOf(request)):
                request.setHeader(b"allow", b"GET, POST")
                return self.refuse(request, 405, _("this address does not take {method}").format(method=method))
        answering = Deferred.fromCoroutine(self._answered(request, handler))
        if method in ("GET", "HEAD"):  # a change asked for goes on if its asker leaves: a hand-in is kept whole
            request.notifyFinish().addErrback(lambda _: answering.cancel())
        return NOT_DONE_YET

    async def _answered(self, request: Request, handler: Handler) -> None:
        try:
            body = await handler(request)
            if self.site.trace:
                self.log.info(
                    "{method} {path} from {address} ({signedIn}): {code}",
                    method=request.method.decode("ascii", "replace"),
                    path=request.path.decode("utf-8", "replace").split("/sign-in/")[0],
                    address=clientAddress(request),
                    signedIn=(request.getHeader(b"authorization") and "bearer")
                    or (cookieOf(request) and "cookie")
                    or "-",
                    code=request.code,
                )
            if body is None:
                return  # a stream: it stays open
        except CancelledError:
            return  # its asker left
        except Exception:
            self.log.failure("answering {method} {path}", method=request.method, path=request.path)
            with i18n.speaking(self.site.languageOf(request)):
                body = self.refuse(request, 500, _("something went wrong here; the server's log says what"))
        if not request.finished and not request._disconnected:
            request.write(body)
            request.finish()

    def refuse(self, request: Request, code: int, message: str) -> bytes:
        """An answer that is not what was asked for: JSON for the API, a page otherwise."""
        if self.json:
            return asJson(request, {"error": message}, code)
        return html(request, messagePage(f"{code}", message), code)

    def notSignedIn(self, request: Request) -> bytes:
        return self.refuse(
            request, 401, _("you are not signed in: open your personal link (your teacher hands it out)")
        )

    def teachersOnly(self, request: Request) -> bytes:
        return self.refuse(request, 403, _("only a teacher of the class sees this"))

    def notFound(self, request: Request) -> bytes:
        return self.refuse(request, 404, _("there is nothing here for you"))

    async def handingIn(self, request: Request) -> tuple[Person | None, bytes]:
        """A student handing in, signed in, with the form's token where a cookie signs in, the body within its
        limit; or nobody and the refusal (in the language spoken now)."""
        person, how = await self.site.person(request)
        if person is None:
            return None, self.notSignedIn(request)
        if person.teacher:
            return None, self.refuse(request, 403, _("a teacher does not hand in"))
        if not self.site.csrfOk(request, how):
            return None, self.noCsrf(request)
        if getattr(request, "tooLarge", False):
            return None, self.refuse(request, 413, tooLargeText(self.site.limits))
        return person, b""

    def noCsrf(self, request: Request) -> bytes:
        return self.refuse(request, 403, _("refused: the form's token is missing or wrong (reload the page)"))
