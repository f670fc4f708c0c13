"""The Gobang FIFO wire format: 32-bit words to the server, 16-bit words to clients.

Client → server, from the most significant bit: pid (16), opcode (4), x (6),
y (6). Server → client: opcode (4), x (6), y (6). A word is written as a C
program on the same machine writes a ``uint32_t``/``uint16_t``: in the
machine's native byte order, unless ``--byte-order big|little`` says
otherwise (both ends must agree). Coordinates are 1-based; x = y = 0 in a
move is a pass. A pid above 65535 travels as its low 16 bits.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import IntEnum
from typing import Final, Literal

from velhanet.i18n import _

ByteOrder = Literal["big", "little"]


def byteOrder(name: str) -> ByteOrder:
    """``native``, ``big`` or ``little`` → the order to use."""
    if name == "native":
        return "little" if sys.byteorder == "little" else "big"
    if name in ("big", "little"):
        return name  # type: ignore[return-value]
    raise ValueError(_("byte order must be native, big or little, not {name!r}").format(name=name))


class ClientOp(IntEnum):
    SIGNOFF = 0
    SIGNON_BLACK = 1
    SIGNON_WHITE = 2
    SIGNON_KIBITZ = 3
    MOVE = 4
    RESIGN = 8
    KILL = 15


class ServerOp(IntEnum):
    DRAW = 0
    BLACK_WINS = 1
    WHITE_WINS = 2
    ABORTED = 3
    REMOVE_STONE = 4
    BLACK_STONE = 5
    WHITE_STONE = 6
    BOARD_SIZE = 7
    YOUR_MOVE = 8
    ILLEGAL = 9


CLIENT_WORD: Final = 4
SERVER_WORD: Final = 2


class MalformedWord(ValueError):
    """A field out of range when encoding, or a word that is not a known message."""


class Refused(Exception):
    """A signon that cannot be accepted (no FIFO, not a FIFO, wrong owner, …); the text says why.

    Not a codec error: it is here, at the bottom of the package, because the
    FIFO layer raises it and the lobby above catches it (imports go downward).
    """


def _opName(ops: type[IntEnum], opcode: int) -> str:
    try:
        return ops(opcode).name
    except ValueError:
        return f"opcode {opcode}"


@dataclass(frozen=True, slots=True)
class ClientWord:
    pid: int
    """The sender's pid, low 16 bits."""
    opcode: int
    x: int = 0
    y: int = 0

    def describe(self) -> str:
        return f"pid {self.pid} {_opName(ClientOp, self.opcode)} x={self.x} y={self.y}"


@dataclass(frozen=True, slots=True)
class ServerWord:
    opcode: int
    x: int = 0
    y: int = 0

    def describe(self) -> str:
        return f"{_opName(ServerOp, self.opcode)} x={self.x} y={self.y}"


def _check(name: str, value: int, bits: int) -> None:
    if not 0 <= value < 1 << bits:
        raise MalformedWord(f"{name}={value} does not fit in {bits} bits")


def encodeClient(word: ClientWord, order: ByteOrder) -> bytes:
    _check("opcode", word.opcode, 4)
    _check("x", word.x, 6)
    _check("y", word.y, 6)
    value = (word.pid & 0xFFFF) << 16 | word.opcode << 12 | word.x << 6 | word.y
    return value.to_bytes(CLIENT_WORD, order)


def decodeClient(data: bytes, order: ByteOrder) -> ClientWord:
    if len(data) != CLIENT_WORD:
        raise MalformedWord(f"a client word has 4 bytes, not {len(data)}")
    value = int.from_bytes(data, order)
    return ClientWord(value >> 16, (value >> 12) & 0xF, (value >> 6) & 0x3F, value & 0x3F)


def encodeServer(word: ServerWord, order: ByteOrder) -> bytes:
    _check("opcode", word.opcode, 4)
    _check("x", word.x, 6)
    _check("y", word.y, 6)
    return (word.opcode << 12 | word.x << 6 | word.y).to_bytes(SERVER_WORD, order)


def decodeServer(data: bytes, order: ByteOrder) -> ServerWord:
    if len(data) != SERVER_WORD:
        raise MalformedWord(f"a server word has 2 bytes, not {len(data)}")
    value = int.from_bytes(data, order)
    return ServerWord(value >> 12, (value >> 6) & 0x3F, value & 0x3F)


class WordReader:
    """Reassemble fixed-size words from reads of any length."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._pending = b""

    def feed(self, data: bytes) -> list[bytes]:
        data = self._pending + data
        cut = len(data) - len(data) % self.size
        self._pending = data[cut:]
        return [data[i : i + self.size] for i in range(0, cut, self.size)]
