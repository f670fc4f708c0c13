"""A class server for the tests: made by its ``tap`` and ``makeService`` as twistd makes it, on loopback,
and spoken to over real HTTP with ``twisted.web.client`` (L{Browser}: cookies kept as a browser keeps them).

Not ``treq``: it requires Twisted's ``tls`` extra, and with pyOpenSSL installed every process the suite
starts imports it and ``service_identity`` with the reactor (a tenth of a second of CPU each, a thousand
processes: a sixth of the suite's time)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import uuid
import zipfile
from datetime import datetime
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.web.client import (
    Agent,
    BrowserLikeRedirectAgent,
    CookieAgent,
    FileBodyProducer,
    HTTPConnectionPool,
    readBody,
)
from twisted.web.http_headers import Headers
from twisted.web.iweb import IResponse

from tests.processes import PYTHON, ROOT
from velhanet.classroom.links import makeLink
from velhanet.classroom.service import ClassService, makeService
from velhanet.classroom.tap import Options

FAULTY_GAMBIT = ROOT / "standins" / "faulty" / "gambit_server.py"
CLASS_FILE = """family = "gambit"
deadline = "{deadline}"
[teachers.tia]
[students.ana]
[students.bo]
[students.cy]
"""


OWN_GAMBIT = (
    f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l /dev/null"
    " gambit-server --listen tcp:{port}:interface=127.0.0.1"
)
"""velhanet's own Gambit server: a program with no fault."""


def folderOf(root: Path, fault: str = "gambit-end") -> Path:
    """A student's folder: the faulty Gambit stand-in with ``fault`` (``none``: velhanet's own server)."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAULTY_GAMBIT, root)
    command = OWN_GAMBIT if fault == "none" else f"{PYTHON} gambit_server.py {{port}} {fault}"
    (root / "velhanet-run").write_text(command + "\n")
    return root


def tarGz(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def zipOf(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


class Answer:
    """A response: its code and headers now, its body when asked (read once)."""

    def __init__(self, response: IResponse) -> None:
        self.response, self.code, self.headers = response, response.code, response.headers
        self._body: bytes | None = None

    async def content(self) -> bytes:
        if self._body is None:
            self._body = await readBody(self.response)
        return self._body

    async def text(self) -> str:
        return (await self.content()).decode("utf-8")

    async def json(self) -> Any:
        return json.loads(await self.content())


class Browser:
    """A browser of its own over ``twisted.web.client``: its cookies (``cookies``: False, none at all), redirects
    followed as a browser follows them unless ``allow_redirects=False``, forms and file fields encoded as a
    browser encodes them."""

    def __init__(self, pool: HTTPConnectionPool, cookies: bool = True) -> None:
        agent = Agent(reactor, pool=pool)
        self.agent = CookieAgent(agent, CookieJar()) if cookies else agent

    def get(self, url: str, headers: Headers | None = None, allow_redirects: bool = True) -> Deferred[Answer]:
        return self.request(b"GET", url, headers, allow_redirects=allow_redirects)

    def post(
        self,
        url: str,
        data: bytes | dict[str, str] | None = None,
        headers: Headers | None = None,
        files: dict[str, tuple[str, str, io.BytesIO]] | None = None,
        allow_redirects: bool = True,
    ) -> Deferred[Answer]:
        sent = Headers() if headers is None else headers.copy()
        body = data if isinstance(data, bytes) else None
        if files is not None:
            boundary = uuid.uuid4().hex
            body = multipart(boundary, data if isinstance(data, dict) else {}, files)
            sent.setRawHeaders(b"content-type", [f"multipart/form-data; boundary={boundary}".encode()])
        elif isinstance(data, dict):
            body = urlencode(data).encode("ascii")
            sent.setRawHeaders(b"content-type", [b"application/x-www-form-urlencoded"])
        return self.request(b"POST", url, sent, body, allow_redirects)

    def request(
        self, method: bytes, url: str, headers: Headers | None, body: bytes | None = None, allow_redirects: bool = True
    ) -> Deferred[Answer]:
        agent = BrowserLikeRedirectAgent(self.agent) if allow_redirects else self.agent
        producer = None if body is None else FileBodyProducer(io.BytesIO(body))
        return agent.request(method, url.encode("ascii"), headers, producer).addCallback(Answer)


def multipart(boundary: str, fields: dict[str, str], files: dict[str, tuple[str, str, io.BytesIO]]) -> bytes:
    """A ``multipart/form-data`` body: the form's fields, then its files (name, type, content)."""
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value.encode())
    for name, (filename, kind, content) in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        parts.append(f"{head}Content-Type: {kind}\r\n\r\n".encode() + content.getvalue())
    return b"\r\n".join(parts) + f"\r\n--{boundary}--\r\n".encode()


class ClassServer:
    """One class server of the test's, and its people's links."""

    def __init__(
        self, testCase: Any, deadline: str = "2099-12-20 23:59", *more: str, classFile: str = CLASS_FILE
    ) -> None:
        self.testCase = testCase
        self.root = Path(testCase.mktemp()).resolve()
        self.root.mkdir()
        (self.root / "class.toml").write_text(classFile.format(deadline=deadline))
        self.more = list(more)
        self.service: ClassService | None = None
        self.secrets: dict[str, str] = {}
        self.pool = HTTPConnectionPool(reactor, persistent=False)
        """Every request's connection closed after its answer: nothing is left open when a test ends."""
        self.http = Browser(self.pool, cookies=False)
        """Requests without cookies (the API's, with a bearer token)."""

    def options(self) -> Options:
        options = Options()
        options.parseOptions(
            [
                "--class",
                str(self.root / "class.toml"),
                "--listen",
                "tcp:0:interface=127.0.0.1",
                "--out",
                str(self.root / "state"),
                "--sandbox",
                "off",
                "--workers",
                "2",
                *self.more,
            ]
        )
        return options

    def start(self) -> Deferred[None]:
        self.service = service = makeService(self.options(), reactor)
        service.privilegedStartService()
        service.startService()
        self.testCase.addCleanup(lambda: Deferred.fromCoroutine(self.stop()))
        store = service.site.store
        for name in ("tia", "ana", "bo", "cy"):
            if name not in self.secrets:
                self.secrets[name] = makeLink(store, name, datetime.now().astimezone())
        assert service.ready is not None
        return service.ready

    async def stop(self) -> None:
        await self.pool.closeCachedConnections()
        if self.service is not None and self.service.running:
            service, self.service = self.service, None
            stopping = service.stopService()
            if stopping is not None:
                await stopping
            await sleep(0.05)  # the server's side of the last connections sees them closed

    @property
    def base(self) -> str:
        assert self.service is not None and self.service.listening.port is not None
        return f"http://127.0.0.1:{self.service.listening.port.getHost().port}"

    def url(self, path: str) -> str:
        return self.base + path

    def client(self) -> Browser:
        """A browser of its own: its cookies are its own."""
        return Browser(self.pool)

    async def signedIn(self, name: str) -> Browser:
        browser = self.client()
        answer = await browser.get(self.url(f"/sign-in/{self.secrets[name]}"), allow_redirects=False)
        await answer.content()
        assert answer.code == 303, answer.code
        return browser

    async def csrfOf(self, browser: Browser, page: str = "/me") -> str:
        text = await (await browser.get(self.url(page))).text()
        return text.split('name="csrf" value="', 1)[1].split('"', 1)[0]

    def bearer(self, name: str, kind: bytes = b"") -> Headers:
        """The headers of an API request signed in with ``name``'s secret (``kind``: its content type)."""
        return headers(authorization=f"Bearer {self.secrets[name]}".encode(), kind=kind)

    async def handIn(self, name: str, archive: bytes, kind: bytes = b"application/gzip") -> tuple[int, Any]:
        answer = await self.http.post(self.url("/api/hand-ins"), data=archive, headers=self.bearer(name, kind))
        return answer.code, await answer.json()

    async def status(self, name: str, handIn: int) -> dict[str, Any]:
        answer = await self.http.get(self.url(f"/api/hand-ins/{handIn}"), headers=self.bearer(name))
        data: dict[str, Any] = await answer.json()
        return data

    async def waitFor(self, name: str, handIn: int, statuses: tuple[str, ...], seconds: float = 120) -> dict[str, Any]:
        """The hand-in once its status is one of ``statuses`` (asked every 0.2 s, at most ``seconds``)."""
        began = reactor.seconds()
        while True:
            data = await self.status(name, handIn)
            if data["status"] in statuses or reactor.seconds() - began > seconds:
                return data
            await sleep(0.2)


def headers(authorization: bytes = b"", kind: bytes = b"", csrf: bytes = b"") -> Headers:
    found = Headers()
    for name, value in ((b"authorization", authorization), (b"content-type", kind), (b"x-csrf-token", csrf)):
        if value:
            found.setRawHeaders(name, [value])
    return found


def upload(archive: bytes) -> Any:
    """A form's file field (``files=``): the archive as a browser sends it."""
    return {"archive": ("hand-in.tar.gz", "application/gzip", io.BytesIO(archive))}


def sleep(seconds: float) -> Deferred[None]:
    done: Deferred[None] = Deferred()
    reactor.callLater(seconds, done.callback, None)
    return done
