"""A class server for the tests: made by its ``tap`` and ``makeService`` as twistd makes it, on loopback,
and spoken to over real HTTP with ``treq`` (cookies kept as a browser keeps them)."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

from treq.client import HTTPClient
from treq.cookies import IndexableCookieJar
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.web.client import Agent, HTTPConnectionPool
from twisted.web.http_headers import Headers

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
        self.http = HTTPClient(Agent(reactor, pool=self.pool))
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

    def client(self) -> HTTPClient:
        """A browser of its own: its cookies are its own."""
        return HTTPClient(Agent(reactor, pool=self.pool), cookiejar=IndexableCookieJar())

    async def signedIn(self, name: str) -> HTTPClient:
        browser = self.client()
        answer = await browser.get(self.url(f"/sign-in/{self.secrets[name]}"), allow_redirects=False)
        await answer.content()
        assert answer.code == 303, answer.code
        return browser

    async def csrfOf(self, browser: HTTPClient, page: str = "/me") -> str:
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
    """A form's file field for treq (``files=``): the archive as a browser sends it."""
    return {"archive": ("hand-in.tar.gz", "application/gzip", io.BytesIO(archive))}


def sleep(seconds: float) -> Deferred[None]:
    done: Deferred[None] = Deferred()
    reactor.callLater(seconds, done.callback, None)
    return done
