"""The spectators' site: ``twisted.web`` resources over a L{GameHub}, in the game server's reactor.

Paths (anything else is a 404 in plain text):

- ``/``: the list of games; ``/events``: its event stream;
- ``/game/<id>``: one game; ``/game/<id>/events``: its event stream;
- ``/game/<id>/board/<n>``: a replayed game's board after ``n`` moves, as SVG (0: the start position);
- ``/game/<id>.pgn``: a chess game in PGN (``application/x-chess-pgn``, a file to download), so far;
- ``/static/style.css``, ``/static/watch.js``: served from the package.

Each answer speaks its request's language (L{velhanet.web.texts.requestLanguage}: the service's
``--language``, else the browser's ``Accept-Language``, else the process's) and says which in
``Content-Language``; unless the service fixed it, ``Vary: Accept-Language`` too.

Read-only by construction: every resource renders GET (and HEAD) only, so
any other method is answered 405 by C{twisted.web}, and nothing here holds a
reference that could act on a game: the hub is fed by the rooms and never
calls them. Game ids are the hub's own counters, never a family's game or
room id (a Gambit id lets one JOIN, a Software-Challenge room id lets an
administrator act). More than L{GameHub.maxSpectators} open streams, or
more than L{MAX_STREAMS_PER_ADDRESS} from one address: 503. Pages carry a
Content-Security-Policy that allows only the package's own script and the
event streams of this site.
"""

from __future__ import annotations

from collections import Counter
from importlib import resources
from typing import Any

from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request, Site

from velhanet import i18n
from velhanet.startup import ListeningService, StartupReport
from velhanet.web.hub import GameHub, GameRecord
from velhanet.web.stream import Stream
from velhanet.web.texts import SiteTexts, requestLanguage, siteTexts


def _asset(name: str) -> bytes:
    return resources.files("velhanet.web").joinpath("static", name).read_bytes()


ASSETS: dict[bytes, tuple[bytes, bytes]] = {
    b"style.css": (b"text/css; charset=utf-8", _asset("style.css")),
    b"watch.js": (b"text/javascript; charset=utf-8", _asset("watch.js")),
}
INDEX = _asset("index.html")
GAME = _asset("game.html")

MAX_STREAMS_PER_ADDRESS = 32
"""One address may hold this many event streams: one client cannot take every slot of a class projector."""

CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "
    b"style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'"
)
"""Boards are inline SVG that may carry style attributes; nothing else is inline, nothing comes from elsewhere."""


class StreamsPerAddress:
    """How many event streams each client address holds open now."""

    def __init__(self, limit: int = MAX_STREAMS_PER_ADDRESS) -> None:
        self.limit = limit
        self.open: Counter[str] = Counter()

    def full(self, address: str) -> bool:
        return self.open[address] >= self.limit

    def holdUntilFinished(self, request: Request, address: str) -> None:
        self.open[address] += 1

        def release(reason: object) -> None:
            self.open[address] -= 1
            if not self.open[address]:
                del self.open[address]

        request.notifyFinish().addBoth(release)


def textsFor(request: Request, hub: GameHub) -> SiteTexts:
    """The site's words for ``request`` (L{requestLanguage}), and its answer says which language it speaks."""
    texts = siteTexts(requestLanguage(request, hub.language))
    request.setHeader(b"content-language", texts.tag.encode("ascii"))
    if hub.language is None:  # another Accept-Language gets another answer
        request.setHeader(b"vary", b"Accept-Language")
    return texts


def _plain(request: Request, code: int, text: str) -> bytes:
    request.setResponseCode(code)
    request.setHeader(b"content-type", b"text/plain; charset=utf-8")
    request.setHeader(b"x-content-type-options", b"nosniff")
    return (text + "\n").encode("utf-8")


def _html(request: Request, body: bytes) -> bytes:
    request.setHeader(b"content-type", b"text/html; charset=utf-8")
    request.setHeader(b"cache-control", b"no-cache")
    request.setHeader(b"content-security-policy", CONTENT_SECURITY_POLICY)
    return body


def _notFound(request: Request, texts: SiteTexts, key: str, **details: object) -> bytes:
    return _plain(request, 404, f"404 Not Found: {texts(key).format(**details)}")


class NotFound(Resource):
    isLeaf = True

    def __init__(self, hub: GameHub) -> None:
        super().__init__()
        self.hub = hub

    def render_GET(self, request: Request) -> bytes:
        return _notFound(request, textsFor(request, self.hub), "noSuchPage")


def _abort(request: Request) -> None:
    transport: Any = request.transport
    if transport is not None:
        transport.abortConnection()


def _openStream(request: Request, texts: SiteTexts, hub: GameHub, perAddress: StreamsPerAddress) -> bool:
    """Headers of an event stream; False (and a 503 written) when the site or this address has all it takes."""
    address = str(getattr(request.getClientAddress(), "host", "?"))
    crowded = texts("tooManySpectators") if hub.full() else texts("tooManyStreams") if perAddress.full(address) else ""
    if crowded:
        request.setResponseCode(503)
        request.setHeader(b"content-type", b"text/plain; charset=utf-8")
        request.setHeader(b"retry-after", b"30")
        request.write(f"503 Service Unavailable: {crowded}, {texts('tryLater')}\n".encode())
        request.finish()
        return False
    perAddress.holdUntilFinished(request, address)
    request.setHeader(b"content-type", b"text/event-stream; charset=utf-8")
    request.setHeader(b"cache-control", b"no-cache")
    request.setHeader(b"x-accel-buffering", b"no")
    return True


def _streamUntilGone(request: Request, stream: Stream) -> None:
    def gone(reason: object) -> None:
        stream.stopProducing()

    request.notifyFinish().addBoth(gone)


class _Watched(Resource):
    """A resource of the hub's games, whose event streams count against the limits."""

    isLeaf = True

    def __init__(self, hub: GameHub, perAddress: StreamsPerAddress) -> None:
        super().__init__()
        self.hub = hub
        self.perAddress = perAddress


class ListEvents(_Watched):
    def render_GET(self, request: Request) -> object:
        texts = textsFor(request, self.hub)
        if request.postpath not in ([], [b""]):
            return _notFound(request, texts, "noSuchPage")
        if _openStream(request, texts, self.hub, self.perAddress):
            _streamUntilGone(request, self.hub.watchList(request, lambda: _abort(request), texts.language))
        return NOT_DONE_YET


def _board(request: Request, record: GameRecord, step: bytes, texts: SiteTexts) -> bytes:
    """A replayed game's board after ``step`` moves; a 404 for a live game or a step it does not have."""
    n = int(step) if step.isdigit() and len(step) <= 6 else -1
    if record.boardAt is None or not 0 <= n <= len(record.moves):
        return _notFound(request, texts, "noSuchBoard")
    request.setHeader(b"content-type", b"image/svg+xml; charset=utf-8")
    request.setHeader(b"cache-control", b"no-cache")
    request.setHeader(b"x-content-type-options", b"nosniff")
    request.setHeader(b"content-security-policy", CONTENT_SECURITY_POLICY)
    return record.boardAt(n).encode("utf-8")


def _pgn(request: Request, record: GameRecord, texts: SiteTexts) -> bytes:
    """A chess game in PGN, as a file to download; a 404 for a game of another family."""
    if not record.chess:
        return _notFound(request, texts, "noPgn")
    host = (request.getHeader("host") or "").strip()
    site = host if host.isprintable() and 0 < len(host) <= 100 else "?"
    white, black = (*record.players, "?", "?")[:2]
    text = record.san().pgn(white, black, record.result, site, record.startedAt, record.score)
    request.setHeader(b"content-type", b"application/x-chess-pgn; charset=utf-8")
    request.setHeader(b"content-disposition", f'attachment; filename="velhanet-game-{record.gameId}.pgn"'.encode())
    request.setHeader(b"cache-control", b"no-cache")
    request.setHeader(b"x-content-type-options", b"nosniff")
    return text.encode("utf-8")


class GamePage(_Watched):
    """``/game/<id>``, ``/game/<id>/events``, ``/game/<id>/board/<n>`` and ``/game/<id>.pgn``."""

    def render_GET(self, request: Request) -> object:
        path = request.postpath or []
        name = path[0].decode("ascii", "replace") if path else ""
        pgn = len(path) == 1 and name.endswith(".pgn")
        gameId = name.removesuffix(".pgn") if pgn else name
        record = self.hub.visible(gameId) if gameId.isdigit() and len(gameId) <= 12 else None
        texts = textsFor(request, self.hub)
        if record is None:
            return _notFound(request, texts, "noSuchGame", game=repr(gameId[:40]))
        if pgn:
            return _pgn(request, record, texts)
        if path[1:] in ([], [b""]):
            return _html(request, texts.page(GAME))
        if len(path) == 3 and path[1] == b"board":
            return _board(request, record, path[2], texts)
        if path[1:] != [b"events"]:
            return _notFound(request, texts, "noSuchPage")
        if _openStream(request, texts, self.hub, self.perAddress):
            _streamUntilGone(request, self.hub.watchGame(record, request, lambda: _abort(request), texts.language))
        return NOT_DONE_YET


class Static(Resource):
    isLeaf = True

    def __init__(self, hub: GameHub) -> None:
        super().__init__()
        self.hub = hub

    def render_GET(self, request: Request) -> bytes:
        path = request.postpath or []
        name = path[0] if len(path) == 1 else b""
        asset = ASSETS.get(name)
        if asset is None:
            return _notFound(request, textsFor(request, self.hub), "noSuchFile")
        request.setHeader(b"content-type", asset[0])
        request.setHeader(b"cache-control", b"max-age=300")
        return asset[1]


class Root(Resource):
    def __init__(self, hub: GameHub, perAddress: StreamsPerAddress | None = None) -> None:
        super().__init__()
        perAddress = perAddress or StreamsPerAddress()
        self.hub = hub
        self.putChild(b"events", ListEvents(hub, perAddress))
        self.putChild(b"game", GamePage(hub, perAddress))
        self.putChild(b"static", Static(hub))

    @property
    def page(self) -> bytes:
        """The list of games in the site's own language (the service's, else the process's): for a page that
        cannot ask its request (L{listPage} can)."""
        return siteTexts(self.hub.language or i18n.current().code).page(INDEX)

    def listPage(self, request: Request) -> bytes:
        """The list of games, in the language of ``request``."""
        return textsFor(request, self.hub).page(INDEX)

    def getChild(self, path: bytes, request: Request) -> Resource:
        if path == b"" and not request.postpath:
            return self
        return NotFound(self.hub)

    def render_GET(self, request: Request) -> bytes:
        return _html(request, self.listPage(request))


def spectatorSite(hub: GameHub, perAddress: StreamsPerAddress | None = None) -> Site:
    site = Site(Root(hub, perAddress))
    site.displayTracebacks = False
    return site


def webEndpoint(value: str) -> str:
    """``--web``'s value as an endpoint: a bare port listens on loopback only."""
    if value.isdigit():
        return f"tcp:{value}:interface=127.0.0.1"
    return value


class WebService(ListeningService):
    """The site's listening port; stopping it leaves no list update scheduled."""

    def __init__(self, hub: GameHub, description: str, reactor: Any, report: StartupReport) -> None:
        super().__init__(description, spectatorSite(hub), reactor, report, "--web")
        self.hub = hub

    def stopService(self) -> Any:
        self.hub.stop()
        return super().stopService()
