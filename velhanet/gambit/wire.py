"""The Gambit wire format: JSON objects ``{cmd, user, args}`` on a TCP stream.

``cmd`` is ERROR=0, OK=1, CREATE=2, JOIN=3, MOVE=4, END=5 (the values of the
original Go server), plus velhanet's extension DRAW=6 (``docs/gambit.md``).
Keys are matched case-insensitively on input, as Go's ``encoding/json``
does; we emit ``Cmd``, ``User``, ``Args`` in that order, compact, with
``<``, ``>``, ``&``, U+2028 and U+2029 escaped, exactly like the original server, and follow
each object with ``\\n``.

The input is a stream: objects may come back to back, split across reads,
or separated by whitespace. L{JsonStreamDecoder} cuts it into objects in
linear time, reports malformed input with L{MalformedMessage} (the one
exception type of this codec: invalid JSON, wrong types, lone surrogates,
deep nesting, huge numbers), skips to the next object after an error, and
refuses to buffer more than ``maxSize`` characters of one object.
"""

from __future__ import annotations

import codecs
import json
import re
from enum import IntEnum
from json.encoder import encode_basestring
from typing import Final, NamedTuple


class Cmd(IntEnum):
    ERROR = 0
    OK = 1
    CREATE = 2
    JOIN = 3
    MOVE = 4
    END = 5
    DRAW = 6
    """velhanet extension (section 6 of the text, unfinished there): offer or accept a draw."""


MAX_MESSAGE: Final = 4096
"""Largest JSON object accepted, in characters; a chess move or a name needs far less."""


class MalformedMessage(ValueError):
    """Input that is not a valid Gambit message; ``fatal`` when the stream cannot be resynchronised."""

    def __init__(self, reason: str, fatal: bool = False) -> None:
        super().__init__(reason)
        self.fatal = fatal


class Message(NamedTuple):
    """One Gambit message (a tuple: made for every message in and out, so it must be cheap)."""

    cmd: int
    user: str = ""
    args: str = ""

    def describe(self) -> str:
        try:
            name = Cmd(self.cmd).name
        except ValueError:
            name = f"cmd {self.cmd}"
        return f"{name} user={self.user!r} args={self.args!r}"


_GO_ESCAPES: Final = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)
_NEEDS_GO_ESCAPES: Final = re.compile("[<>&\u2028\u2029]")
"""Checked first: ``str.translate`` costs more than the rest of an encoding, and is rarely needed."""
_quote: Final = encode_basestring
"""A JSON string literal, non-ASCII kept (the C function behind ``json.dumps(s, ensure_ascii=False)``,
without building an encoder per call: this runs for every message out)."""


def encode(message: Message) -> bytes:
    """One object as the original server writes it (``json.Marshal``), plus ``\\n``."""
    text = f'{{"Cmd":{int(message.cmd)},"User":{_quote(message.user)},"Args":{_quote(message.args)}}}\n'
    if _NEEDS_GO_ESCAPES.search(text) is not None:
        text = text.translate(_GO_ESCAPES)
    return text.encode("utf-8")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_GO_KEYS: Final = frozenset({"Cmd", "User", "Args"})
_LOWER_KEYS: Final = frozenset({"cmd", "user", "args"})
_DECODER: Final = json.JSONDecoder()


def fromObject(value: object) -> Message:
    """Check a decoded JSON value and make a L{Message} of it."""
    if not isinstance(value, dict):
        raise MalformedMessage(f"a message must be a JSON object, not {type(value).__name__}")
    keys = value.keys()
    if keys <= _GO_KEYS:  # as Go clients (and velhanet's) write them: nothing to lowercase
        cmd, user, args = value.get("Cmd"), value.get("User", ""), value.get("Args", "")
    elif keys <= _LOWER_KEYS:
        cmd, user, args = value.get("cmd"), value.get("user", ""), value.get("args", "")
    else:
        fields = {str(key).lower(): item for key, item in value.items()}
        cmd, user, args = fields.get("cmd"), fields.get("user", ""), fields.get("args", "")
    if isinstance(cmd, bool) or not isinstance(cmd, int):
        raise MalformedMessage(f"'cmd' must be an integer from 0 to 255, not {_short(cmd)}")
    if not 0 <= cmd <= 255:
        raise MalformedMessage(f"'cmd' must be an integer from 0 to 255, not {_short(cmd)}")
    if user is None:
        user = ""
    if args is None:
        args = ""
    if not isinstance(user, str):
        raise MalformedMessage(f"'user' must be a string, not {type(user).__name__}")
    if not isinstance(args, str):
        raise MalformedMessage(f"'args' must be a string, not {type(args).__name__}")
    for name, text in (("user", user), ("args", args)):
        if text.isascii():
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedMessage(f"'{name}' holds a lone surrogate (\\ud800–\\udfff), not a character") from None
    return Message(cmd, user, args)


MAX_DEPTH: Final = 16
"""Deepest nesting of arrays and objects accepted inside a message (a Gambit message has none)."""

_FLAT: Final = re.compile(r'\{(?:[^{}\[\]"\\]++|"(?:[^"\\]++|\\.)*+")*+\}', re.DOTALL)
"""A complete object with no object or array inside: every Gambit message. Possessive, so linear."""
_SPACE: Final = re.compile(r"[ \t\r\n]*")
_RESYNC: Final = re.compile(r"[\n{]")
_OUTSIDE: Final = re.compile(r'[{}\[\]"]')
_INSIDE: Final = re.compile(r'["\\]')


class JsonStreamDecoder:
    """Cut a byte stream into Gambit messages, in time linear in the bytes received.

    A scanner finds where each top-level object ends by counting braces and
    brackets outside strings, resuming where it stopped when an object is
    split across reads, so no byte is looked at twice however the input is
    cut. Only a complete object is handed to ``json``. Input that does not
    start an object is skipped up to the next line or ``{``; an object that
    is still open after ``maxSize`` characters is fatal (the stream cannot be
    resynchronised), and one nested deeper than ``maxDepth`` is refused.
    """

    def __init__(self, maxSize: int = MAX_MESSAGE, maxDepth: int = MAX_DEPTH) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._text = ""
        self._position = 0
        """Where the unread part of ``_text`` starts."""
        self._maxSize = maxSize
        self._maxDepth = maxDepth
        self._scanned = 0
        """How far into ``_text`` (which starts with the open object) the scanner has read."""
        self._depth = 0
        self._deepest = 0
        self._inString = False

    def feed(self, data: bytes) -> list[tuple[str, Message | MalformedMessage]]:
        """Add bytes; return (raw text, message or error) for each object now complete."""
        self.push(data)
        results = []
        while (item := self.next()) is not None:
            results.append(item)
        return results

    def push(self, data: bytes) -> None:
        """Add bytes without decoding them yet: L{next} takes the messages one by one.

        A server that must bound its work per reactor turn pushes a read and
        then takes only as many messages as it may handle now.
        """
        decoded = self._utf8.decode(data)
        if self._position:
            self._text = self._text[self._position :]
            if self._scanned:
                self._scanned -= self._position  # the kept text starts with the open object
            self._position = 0
        self._text += decoded

    def next(self) -> tuple[str, Message | MalformedMessage] | None:
        """The next complete object (raw text, message or error), or None until more bytes come."""
        text, position = self._text, self._position
        if self._scanned == 0:
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            self._position = position
            if position >= len(text):
                return None
            if text[position] != "{":
                found = _RESYNC.search(text, position + 1)
                skipTo = found.start() if found else len(text)
                self._position = skipTo
                return text[position:skipTo], MalformedMessage("expected a JSON object starting with '{'")
            flat = _FLAT.match(text, position, position + self._maxSize + 1)
            if flat is not None:  # the usual case: no scan needed, one regex match in C
                self._position = flat.end()
                raw = flat.group()
                return raw, self._decode(raw, 1)
            self._scanned = position
        end = self._scan(text, position)
        if end is None:
            if self._scanned - position > self._maxSize:
                self._reset()
                self._text, self._position = "", 0
                return text[position : position + 80], MalformedMessage(
                    f"message over {self._maxSize} characters", fatal=True
                )
            return None
        raw, deepest = text[position:end], self._deepest
        self._reset()
        self._position = end
        return raw, self._decode(raw, deepest)

    def _reset(self) -> None:
        self._scanned = self._depth = self._deepest = 0
        self._inString = False

    def _scan(self, text: str, start: int) -> int | None:
        """Resume scanning the object that opens at ``start``; the index just past it, if complete.

        The scan stops ``maxSize`` characters after the start: an object longer
        than that is refused whatever follows.
        """
        index = self._scanned
        limit = min(len(text), start + self._maxSize + 1)
        while True:
            if self._inString:
                found = _INSIDE.search(text, index, limit)
                if found is None:
                    self._scanned = limit
                    return None
                if found.group() == "\\":
                    if found.end() >= len(text):
                        self._scanned = found.start()  # the escaped character is still to come
                        return None
                    index = found.end() + 1
                    continue
                self._inString = False
                index = found.end()
                continue
            found = _OUTSIDE.search(text, index, limit)
            if found is None:
                self._scanned = limit
                return None
            index = found.end()
            char = found.group()
            if char == '"':
                self._inString = True
            elif char in "{[":
                self._depth += 1
                self._deepest = max(self._deepest, self._depth)
            else:
                self._depth -= 1
                if self._depth == 0:
                    return index

    def _decode(self, raw: str, deepest: int) -> Message | MalformedMessage:
        if len(raw) > self._maxSize:
            return MalformedMessage(f"message over {self._maxSize} characters", fatal=True)
        if deepest > self._maxDepth:
            return MalformedMessage(f"nested {deepest} levels deep (at most {self._maxDepth})")
        try:
            value, end = _DECODER.raw_decode(raw)
            if end != len(raw):
                return MalformedMessage("invalid JSON: Extra data")
        except json.JSONDecodeError as error:
            return MalformedMessage(f"invalid JSON: {error.msg}")
        except (ValueError, RecursionError) as error:  # e.g. an integer of more than 4300 digits
            return MalformedMessage(f"invalid JSON: {error}")
        try:
            return fromObject(value)
        except MalformedMessage as error:
            return error
