"""The Gambit wire format: JSON objects ``{cmd, user, args}`` on a TCP stream.

``cmd`` is ERROR=0, OK=1, CREATE=2, JOIN=3, MOVE=4, END=5 (the values of the
original Go server), plus velhanet's extension DRAW=6 (``docs/gambit.md``).
Keys are matched case-insensitively on input, as Go's ``encoding/json``
does; we emit ``Cmd``, ``User``, ``Args`` in that order, compact, with
``<``, ``>`` and ``&`` escaped, exactly like the original server, and follow
each object with ``\\n``.

The input is a stream: objects may come back to back, split across reads,
or separated by whitespace. L{JsonStreamDecoder} cuts it into objects,
reports malformed input with L{MalformedMessage}, skips to the next object
after an error, and refuses to buffer more than ``maxSize`` characters of
one object.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Final


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


@dataclass(frozen=True, slots=True)
class Message:
    cmd: int
    user: str = ""
    args: str = ""

    def describe(self) -> str:
        try:
            name = Cmd(self.cmd).name
        except ValueError:
            name = f"cmd {self.cmd}"
        return f"{name} user={self.user!r} args={self.args!r}"


_GO_ESCAPES: Final = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def encode(message: Message) -> bytes:
    """One object as the original server writes it (``json.Marshal``), plus ``\\n``."""
    text = (
        f'{{"Cmd":{message.cmd},"User":{json.dumps(message.user, ensure_ascii=False)},'
        f'"Args":{json.dumps(message.args, ensure_ascii=False)}}}'
    )
    return text.translate(_GO_ESCAPES).encode("utf-8") + b"\n"


def fromObject(value: object) -> Message:
    """Check a decoded JSON value and make a L{Message} of it."""
    if not isinstance(value, dict):
        raise MalformedMessage(f"a message must be a JSON object, not {type(value).__name__}")
    fields = {str(key).lower(): item for key, item in value.items()}
    cmd = fields.get("cmd")
    if isinstance(cmd, bool) or not isinstance(cmd, int):
        raise MalformedMessage(f"'cmd' must be an integer from 0 to 255, not {cmd!r}")
    if not 0 <= cmd <= 255:
        raise MalformedMessage(f"'cmd' must be an integer from 0 to 255, not {cmd}")
    user, args = fields.get("user", ""), fields.get("args", "")
    if user is None:
        user = ""
    if args is None:
        args = ""
    if not isinstance(user, str):
        raise MalformedMessage(f"'user' must be a string, not {type(user).__name__}")
    if not isinstance(args, str):
        raise MalformedMessage(f"'args' must be a string, not {type(args).__name__}")
    return Message(cmd, user, args)


_WHITESPACE: Final = re.compile(r"\s*")
_INCOMPLETE_TAIL: Final = re.compile(r"(t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?|-?\d*\.?\d*([eE][+-]?\d*)?)\s*$")


class JsonStreamDecoder:
    """Cut a byte stream into Gambit messages."""

    def __init__(self, maxSize: int = MAX_MESSAGE) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._text = ""
        self._maxSize = maxSize
        self._json = json.JSONDecoder()

    def feed(self, data: bytes) -> list[tuple[str, Message | MalformedMessage]]:
        """Add bytes; return (raw text, message or error) for each object now complete."""
        text = self._text + self._utf8.decode(data)
        results: list[tuple[str, Message | MalformedMessage]] = []
        position = _WHITESPACE.match(text, 0).end()  # type: ignore[union-attr]
        while position < len(text):
            if text[position] != "{":
                end = self._skipGarbage(text, position)
                results.append((text[position:end], MalformedMessage("expected a JSON object starting with '{'")))
                position = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
                continue
            try:
                value, end = self._json.raw_decode(text, position)
            except json.JSONDecodeError as error:
                if self._incomplete(text, error):
                    break
                end = self._skipGarbage(text, position + 1)
                results.append((text[position:end], MalformedMessage(f"invalid JSON: {error.msg}")))
                position = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
                continue
            raw = text[position:end]
            if len(raw) > self._maxSize:
                results.append((raw[:80], MalformedMessage(f"message over {self._maxSize} characters", fatal=True)))
                self._text = ""
                return results
            try:
                results.append((raw, fromObject(value)))
            except MalformedMessage as error:
                results.append((raw, error))
            position = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        self._text = text[position:]
        if len(self._text) > self._maxSize:
            results.append((self._text[:80], MalformedMessage(f"message over {self._maxSize} characters", fatal=True)))
            self._text = ""
        return results

    @staticmethod
    def _incomplete(text: str, error: json.JSONDecodeError) -> bool:
        """Is the object merely cut short (wait for more), rather than wrong?"""
        if error.pos >= len(text) or error.msg.startswith("Unterminated string"):
            return True
        return _INCOMPLETE_TAIL.fullmatch(text, error.pos) is not None

    @staticmethod
    def _skipGarbage(text: str, start: int) -> int:
        """Resynchronise: the next line, or the next '{', whichever comes first."""
        candidates = [i for i in (text.find("\n", start), text.find("{", start)) if i != -1]
        return min(candidates) if candidates else len(text)
