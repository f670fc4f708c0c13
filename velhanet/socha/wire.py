"""The Software-Challenge wire: a safe incremental XML reader, an XStream-style writer, the result.

A client's stream is one never-ending document ``<protocol> … `` whose
depth-1 elements are the messages. The reader is expat fed incrementally;
it refuses anything that could make it expand or fetch (a DOCTYPE, entity
declarations, external entities: billion-laughs bombs and XXE), caps the
size of one message and the nesting depth, and raises L{XmlError} instead
of growing without bound.

The writer produces the shapes of the official server's ``PrettyPrintWriter``:
every packet starts with a newline and two spaces of indentation, children
indent by two more, and the first packet of a connection is preceded by
``<protocol>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from xml.etree.ElementTree import Element
from xml.parsers import expat
from xml.sax.saxutils import escape, quoteattr

MAX_MESSAGE: Final = 64 * 1024
"""Bytes one message may take; a move is about 150, a memento about 4000."""

MAX_DEPTH: Final = 16
MAX_ELEMENTS: Final = 2000

_CHUNK: Final = 16 * 1024
"""Bytes handed to expat at a time, so that the size cap is checked at least this often."""


class XmlError(ValueError):
    """Input that is not acceptable XML for this protocol; the connection ends."""


class XmlStreamReader:
    """Feed bytes, get the depth-1 elements of ``<protocol>`` as ElementTree elements.

    The size cap counts the bytes that are not yet part of a finished
    message: from the start of the open message, or, between messages, from
    the end of the last one, whatever expat holds there (an unfinished start
    tag, a comment, a processing instruction, text). It is checked after
    each piece of at most 16 KiB given to expat, so neither a long message
    nor a long anything-else can grow the reader past ``maxMessage`` plus
    one piece, and a short message split across reads is never counted with
    the reads that come after it.

    The reader holds the parser and the parser holds the handlers, which
    live on a L{_MessageBuilder} that sees the parser only while a feed
    runs: no reference cycle, so a finished connection's reader and its
    parser (about 19 KB each, expat's buffers included) are freed the moment
    the connection is, not at the cyclic collector's next full pass, which
    Python defers until the objects waiting for it are a quarter of all
    long-lived ones (a busy socha-server kept hundreds of them, several MB).
    """

    def __init__(
        self, maxMessage: int = MAX_MESSAGE, maxDepth: int = MAX_DEPTH, maxElements: int = MAX_ELEMENTS
    ) -> None:
        self.maxMessage = maxMessage
        builder = _MessageBuilder(maxDepth, maxElements)
        parser = expat.ParserCreate()
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        parser.StartDoctypeDeclHandler = _refuseDoctype
        parser.EntityDeclHandler = _refuseEntity
        parser.ExternalEntityRefHandler = _refuseExternal
        parser.StartElementHandler = builder.start
        parser.EndElementHandler = builder.end
        parser.CharacterDataHandler = builder.text
        parser.buffer_text = True
        self._parser = parser
        self._builder = builder
        self._fed = 0

    @property
    def rootSeen(self) -> bool:
        """``<protocol>`` has begun."""
        return self._builder.rootSeen

    @property
    def closed(self) -> bool:
        """The client ended the document (``</protocol>``)."""
        return self._builder.closed

    def feed(self, data: bytes) -> list[Element]:
        """Parse more bytes; the messages completed by them, in order."""
        builder = self._builder
        if builder.closed:
            if data.strip():
                raise XmlError("data after </protocol>")
            return []
        parser = builder.parser = self._parser
        try:
            for start in range(0, len(data), _CHUNK):
                piece = data[start : start + _CHUNK] if len(data) > _CHUNK else data
                self._fed += len(piece)
                try:
                    parser.Parse(piece, False)
                except expat.ExpatError as error:
                    raise XmlError(
                        f"not well-formed XML: {expat.ErrorString(error.code)} at byte {parser.CurrentByteIndex}"
                    ) from None
                except LookupError as error:  # <?xml encoding="ebcdic"?>: Python has no such codec
                    raise XmlError(f"unsupported encoding: {error}") from None
                except (ValueError, UnicodeError) as error:
                    if isinstance(error, XmlError):
                        raise
                    raise XmlError(f"undecodable input: {error}") from None
                self._checkPending()
        finally:
            builder.parser = None
        done, builder.done = builder.done, []
        return done

    def _checkPending(self) -> None:
        builder = self._builder
        if builder.messageStart >= 0:
            if self._fed - builder.messageStart > self.maxMessage:
                raise XmlError(f"a message longer than {self.maxMessage} bytes")
        elif self._fed - builder.boundary > self.maxMessage:
            if not builder.rootSeen:
                raise XmlError("no <protocol> element in the first bytes")
            raise XmlError(f"more than {self.maxMessage} bytes without a finished message")


def _refuseDoctype(*args: object) -> None:
    raise XmlError("DOCTYPE declarations are not allowed")


def _refuseEntity(*args: object) -> None:
    raise XmlError("entity declarations are not allowed")


def _refuseExternal(*args: object) -> int:
    raise XmlError("external entities are not allowed")


class _MessageBuilder:
    """expat's element handlers: the messages as elements, where they start and end in the stream.

    It holds the parser only during L{XmlStreamReader.feed} (for its byte
    offsets), so that the parser, which holds these handlers, and this
    object never keep each other alive.
    """

    def __init__(self, maxDepth: int, maxElements: int) -> None:
        self.maxDepth, self.maxElements = maxDepth, maxElements
        self.parser: expat.XMLParserType | None = None
        self.stack: list[Element] = []
        self.texts: list[list[str]] = []
        self.done: list[Element] = []
        self.messageStart = -1
        """Stream offset where the open message starts (-1: none is open)."""
        self.boundary = 0
        """Stream offset where the last finished message ended (or ``<protocol>`` started)."""
        self.elements = 0
        self.rootSeen = False
        self.closed = False

    def offset(self) -> int:
        assert self.parser is not None, "expat calls its handlers only during a feed"
        return self.parser.CurrentByteIndex

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        depth = len(self.stack)
        if not self.rootSeen:
            if tag != "protocol":
                raise XmlError(f"the stream must start with <protocol>, not <{tag}>")
            self.rootSeen = True
            self.boundary = self.offset()
            self.stack.append(Element(tag))
            self.texts.append([])
            return
        if depth >= self.maxDepth:
            raise XmlError(f"elements nested deeper than {self.maxDepth}")
        if depth == 1:
            self.messageStart = self.offset()
            self.elements = 0
        self.elements += 1
        if self.elements > self.maxElements:
            raise XmlError(f"a message with more than {self.maxElements} elements")
        element = Element(tag, attributes)
        if depth > 1:
            self.stack[-1].append(element)
        self.stack.append(element)
        self.texts.append([])

    def end(self, tag: str) -> None:
        element = self.stack.pop()
        text = "".join(self.texts.pop())
        if text.strip():
            element.text = text
        if len(self.stack) == 1:
            self.done.append(element)
            self.messageStart = -1
            self.boundary = self.offset()
        elif not self.stack:
            self.closed = True

    def text(self, data: str) -> None:
        if len(self.stack) > 1:
            self.texts[-1].append(data)


# -- writing -------------------------------------------------------------------


def tag(name: str, attributes: dict[str, str | int | None] | None = None, *children: Element | str) -> Element:
    """Build an element; string children become its text, ``None`` attributes are left out."""
    element = Element(name, {k: str(v) for k, v in (attributes or {}).items() if v is not None})
    for child in children:
        if isinstance(child, str):
            element.text = child
        else:
            element.append(child)
    return element


def echo(source: Element, name: str) -> Element:
    """A request or move echoed back in an error, as the official server does: ``class`` names what it was."""
    copied = Element(name, {**source.attrib, "class": source.get("class", source.tag)})
    copied.extend(list(source))
    copied.text = source.text
    return copied


def errorPacket(message: str, original: Element | None) -> Element:
    """``<errorpacket message="…"><originalRequest class="…" …/></errorpacket>``."""
    return tag("errorpacket", {"message": message}, *([] if original is None else [echo(original, "originalRequest")]))


LEFT_THE_GAME = "hat das Spiel verlassen."
"""The end of a result's reason when a player closed its connection in mid-game, as the official server says it."""


@dataclass(frozen=True)
class RoomResult:
    """How a room's game ended, before it is written as ``<data class="result">``."""

    winner: int | None
    """Team index (0 = ONE), or None: a draw, or a game cancelled without a winner."""
    regular: bool
    """The game ended by its rules (not by a violation or a cancel)."""
    reason: str
    parts: tuple[int, int]
    """The second score part of each team (the game's own measure)."""
    violator: int | None = None
    """The team that broke a rule of the protocol and scores nothing."""

    def points(self) -> tuple[int, int]:
        """Victory points, as the official server: 2 a win, 1 a draw, 0 a loss, a cancel or a violation."""
        if self.regular:
            return (1, 1) if self.winner is None else (2 - 2 * self.winner, 2 * self.winner)
        if self.violator is not None:
            return (2 * self.violator, 2 - 2 * self.violator)
        return (0, 0)


def resultData(
    fragments: tuple[tuple[str, str], ...], displayNames: tuple[str, str], teams: tuple[str, str], verdict: RoomResult
) -> Element:
    """``<data class="result">``: the score definition, each player's parts, the winner.

    ``fragments`` are (name, aggregation) of the score parts, the victory
    points first; ``displayNames`` and ``teams`` are in team order.
    """
    definition = tag(
        "definition",
        None,
        *(
            tag(
                "fragment",
                {"name": name},
                tag("aggregation", None, aggregation),
                tag("relevantForRanking", None, "true"),
            )
            for name, aggregation in fragments
        ),
    )
    points = verdict.points()
    entries = []
    for team in (0, 1):
        parts = (0, 0) if team == verdict.violator else (points[team], verdict.parts[team])
        entries.append(
            tag(
                "entry",
                None,
                tag("player", {"name": displayNames[team] or None, "team": teams[team]}),
                tag("score", None, *(tag("part", None, str(part)) for part in parts)),
            )
        )
    winner = teams[verdict.winner] if verdict.winner is not None else None
    regular = "true" if verdict.regular else "false"
    verdictElement = tag("winner", {"team": winner, "regular": regular, "reason": verdict.reason})
    return tag("data", {"class": "result"}, definition, tag("scores", None, *entries), verdictElement)


_TEXT_SPECIALS: Final = re.compile("[&<>]")
_ATTRIBUTE_SPECIALS: Final = re.compile("[&<>\"'\n\r\t]")
_PADS: Final = tuple("\n" + "  " * level for level in range(64))


def _text(text: str) -> str:
    return escape(text) if _TEXT_SPECIALS.search(text) else text


def _attribute(value: str) -> str:
    return quoteattr(value) if _ATTRIBUTE_SPECIALS.search(value) else f'"{value}"'


def pad(level: int) -> str:
    """The newline and indentation that start a line at ``level``."""
    return _PADS[level] if level < len(_PADS) else "\n" + "  " * level


class Prerendered(Element):
    """An element whose XML comes from a function of its indentation level.

    For large, regular content rendered for every move (a game board: 111
    elements in a Piranhas memento), where building and walking an element
    tree would cost more than the rest of the move. It has no children of
    its own: L{render} asks ``renderAt(level)`` for its text.
    """

    def __init__(self, name: str, renderAt: Callable[[int], str]) -> None:
        super().__init__(name)
        self.renderAt = renderAt


def render(element: Element, level: int = 1) -> str:
    """XStream PrettyPrintWriter style: newline, 2-space indent, self-closing empty elements.

    Every memento is rendered (a board of 111 elements), so this appends to
    one list and escapes only text that needs it.
    """
    parts: list[str] = []
    _renderInto(parts, element, level)
    return "".join(parts)


def _renderInto(parts: list[str], element: Element, level: int) -> None:
    if type(element) is Prerendered:
        parts.append(element.renderAt(level))
        return
    start = pad(level)
    name = element.tag
    attributes = "".join(f" {key}={_attribute(value)}" for key, value in element.attrib.items())
    if len(element) == 0:
        text = element.text
        parts.append(f"{start}<{name}{attributes}>{_text(text)}</{name}>" if text else f"{start}<{name}{attributes}/>")
        return
    parts.append(f"{start}<{name}{attributes}>")
    for child in element:
        _renderInto(parts, child, level + 1)
    parts.append(f"{start}</{name}>")
