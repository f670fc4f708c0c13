"""The JogoVelha wire format: bytes ↔ typed messages, MSG01–MSG10.

Every message is a 5-character header, two digits of message id and three
digits of total length (header included, zero-padded), then a body:

====  ===================  ==========================  =========
id    name                 body                        transport
====  ===================  ==========================  =========
01    Hello                nick                        UDP
02    HelloReply           nick                        UDP
03    Goodbye              nick                        UDP
04    Invite               nick                        UDP
05    InviteAnswer         nick|port (port 0: no)      UDP
06    InviteAck            ``Ok``                      UDP
07    MatchStart           1 (invitee starts) or 2     TCP
08    Move                 position 1–9                TCP
09    NewGame              (empty)                     TCP
10    GiveUp               (empty)                     TCP
====  ===================  ==========================  =========

Decisions where the text is silent (``docs/velha.md``): we send ASCII only
and terminate TCP messages with ``\\n`` (the reference program reads lines);
we accept UTF-8 or Latin-1, a length equal to either the character or the
byte count, trailing NUL/CR/LF/space on datagrams, and any CR/LF/NUL/space
between TCP messages. Everything else malformed raises L{MalformedMessage}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar, Final

from velhanet.i18n import _, ngettext

HEADER_LENGTH: Final = 5
MAX_NICK_LENGTH: Final = 20
UDP_PADDING: Final = b"\x00\r\n "
TCP_SEPARATORS: Final = b"\x00\r\n "


class MalformedMessage(ValueError):
    """Input that is not a well-formed JogoVelha message; the text says why."""


def checkNick(nick: str) -> str:
    """Return ``nick`` if velhanet may send it (1–20 printable ASCII, no ``|``, no outer spaces), else ValueError."""
    if not 1 <= len(nick) <= MAX_NICK_LENGTH:
        raise ValueError(_("nick {nick!r} must be 1 to {most} characters long").format(nick=nick, most=MAX_NICK_LENGTH))
    if not (nick.isascii() and nick.isprintable()):
        raise ValueError(_("nick {nick!r} must be printable ASCII").format(nick=nick))
    if "|" in nick:
        raise ValueError(_("nick {nick!r} must not contain '|' (it separates fields in MSG05)").format(nick=nick))
    if nick != nick.strip():
        text = _("nick {nick!r} must not begin or end with a space (receivers strip datagram padding)")
        raise ValueError(text.format(nick=nick))
    return nick


@dataclass(frozen=True, slots=True)
class _NickMessage:
    ID: ClassVar[int]
    nick: str

    def body(self) -> str:
        return self.nick


@dataclass(frozen=True, slots=True)
class Hello(_NickMessage):
    """MSG01: who is online? Broadcast at start and every 180 s."""

    ID: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class HelloReply(_NickMessage):
    """MSG02: the answer to MSG01, unicast to its sender."""

    ID: ClassVar[int] = 2


@dataclass(frozen=True, slots=True)
class Goodbye(_NickMessage):
    """MSG03: the sender's program is closing."""

    ID: ClassVar[int] = 3


@dataclass(frozen=True, slots=True)
class Invite(_NickMessage):
    """MSG04: the sender invites the receiver to a best-of-5."""

    ID: ClassVar[int] = 4


@dataclass(frozen=True, slots=True)
class InviteAnswer:
    """MSG05: accept with the TCP port to connect to, or refuse with port 0."""

    ID: ClassVar[int] = 5
    nick: str
    port: int

    @property
    def accepted(self) -> bool:
        return self.port != 0

    def body(self) -> str:
        return f"{self.nick}|{self.port}"


@dataclass(frozen=True, slots=True)
class InviteAck:
    """MSG06: the inviter got MSG05 (and, if accepted, connects now)."""

    ID: ClassVar[int] = 6
    text: str = "Ok"

    def body(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class MatchStart:
    """MSG07: sent by the invitee once connected; 1 = invitee starts, 2 = inviter starts."""

    ID: ClassVar[int] = 7
    who: int

    INVITEE_STARTS: ClassVar[int] = 1
    INVITER_STARTS: ClassVar[int] = 2

    def body(self) -> str:
        return str(self.who)


@dataclass(frozen=True, slots=True)
class Move:
    """MSG08: the sender played ``position`` (1–9, row by row).

    The codec accepts any one- or two-digit number so that the match can
    name the rule a position like 0 or 10 breaks, rather than calling it
    garbage.
    """

    ID: ClassVar[int] = 8
    position: int

    def body(self) -> str:
        return str(self.position)


@dataclass(frozen=True, slots=True)
class NewGame:
    """MSG09: the sender starts the next game of the series."""

    ID: ClassVar[int] = 9

    def body(self) -> str:
        return ""


@dataclass(frozen=True, slots=True)
class GiveUp:
    """MSG10: the sender gives up the series and closes the connection."""

    ID: ClassVar[int] = 10

    def body(self) -> str:
        return ""


Message = Hello | HelloReply | Goodbye | Invite | InviteAnswer | InviteAck | MatchStart | Move | NewGame | GiveUp
DatagramMessage = Hello | HelloReply | Goodbye | Invite | InviteAnswer | InviteAck
StreamMessage = MatchStart | Move | NewGame | GiveUp

_NICK_TYPES: Final[dict[int, type[_NickMessage]]] = {1: Hello, 2: HelloReply, 3: Goodbye, 4: Invite}


def encode(message: Message) -> bytes:
    """The bytes of ``message`` as velhanet sends it (ASCII, no terminator)."""
    body = message.body()
    total = HEADER_LENGTH + len(body)
    if total > 999:
        raise ValueError(_("message of {total} characters does not fit the 3-digit length").format(total=total))
    return f"{message.ID:02d}{total:03d}{body}".encode("ascii")


def encodeStream(message: StreamMessage) -> bytes:
    """A TCP message: the encoded message plus the ``\\n`` the reference program needs."""
    return encode(message) + b"\n"


def _decodeText(data: bytes) -> tuple[str, int]:
    try:
        return data.decode("utf-8"), len(data)
    except UnicodeDecodeError:
        return data.decode("latin-1"), len(data)


def decode(data: bytes) -> Message:
    """Decode one complete message (header and body, no padding)."""
    text, byteCount = _decodeText(data)
    if len(text) < HEADER_LENGTH:
        count = len(text)
        text = ngettext(
            "{n} character is shorter than the 5-character header",
            "{n} characters is shorter than the 5-character header",
            count,
        )
        raise MalformedMessage(text.format(n=count))
    header = text[:HEADER_LENGTH]
    if not (header.isascii() and header.isdigit()):
        raise MalformedMessage(
            _("header {header!r} is not 5 digits (2 for the id, 3 for the length)").format(header=header)
        )
    messageId, declared = int(header[:2]), int(header[2:])
    if declared not in (len(text), byteCount):
        text = _("header says {declared} characters but the message has {n}").format(declared=declared, n=len(text))
        raise MalformedMessage(text)
    return _decodeBody(messageId, text[HEADER_LENGTH:])


def _decodeBody(messageId: int, body: str) -> Message:
    if messageId in _NICK_TYPES:
        return _NICK_TYPES[messageId](_receivedNick(messageId, body))  # type: ignore[return-value]
    if messageId == InviteAnswer.ID:
        nick, separator, port = body.rpartition("|")
        if not separator:
            raise MalformedMessage(_("MSG05 body {body!r} has no '|' between nick and port").format(body=body))
        if not (port.isascii() and port.isdigit()) or int(port) > 65535:
            raise MalformedMessage(_("MSG05 port {port!r} is not a number from 0 to 65535").format(port=port))
        return InviteAnswer(_receivedNick(messageId, nick), int(port))
    if messageId == InviteAck.ID:
        if body.lower() != "ok":
            raise MalformedMessage(_("MSG06 body must be 'Ok', not {body!r}").format(body=body))
        return InviteAck(body)
    if messageId in (MatchStart.ID, Move.ID):
        if not (body.isascii() and body.isdigit()) or not 1 <= len(body) <= 2:
            raise MalformedMessage(_("MSG{id:02d} body must be a number, not {body!r}").format(id=messageId, body=body))
        if messageId == MatchStart.ID:
            if int(body) not in (1, 2):
                raise MalformedMessage(_("MSG07 says who starts with 1 or 2, not {body!r}").format(body=body))
            return MatchStart(int(body))
        return Move(int(body))
    if messageId in (NewGame.ID, GiveUp.ID):
        if body:
            text = _("MSG{id:02d} has no body, but {body!r} followed the header").format(id=messageId, body=body)
            raise MalformedMessage(text)
        return NewGame() if messageId == NewGame.ID else GiveUp()
    raise MalformedMessage(_("unknown message id {id:02d} (JogoVelha has 01 to 10)").format(id=messageId))


def _receivedNick(messageId: int, nick: str) -> str:
    if not nick:
        raise MalformedMessage(_("MSG{id:02d} has an empty nick").format(id=messageId))
    if "|" in nick:
        raise MalformedMessage(_("MSG{id:02d} nick {nick!r} contains '|'").format(id=messageId, nick=nick))
    if not nick.isprintable():
        raise MalformedMessage(
            _("MSG{id:02d} nick {nick!r} contains control characters").format(id=messageId, nick=nick)
        )
    return nick


def decodeDatagram(datagram: bytes) -> DatagramMessage:
    """Decode one UDP datagram; only MSG01–MSG06 travel over UDP."""
    message = decode(datagram.rstrip(UDP_PADDING))
    if isinstance(message, MatchStart | Move | NewGame | GiveUp):
        raise MalformedMessage(_("MSG{id:02d} belongs on the TCP connection, not in a datagram").format(id=message.ID))
    return message


_STREAM_LENGTHS: Final = {MatchStart.ID: (6,), Move.ID: (6, 7), NewGame.ID: (5,), GiveUp.ID: (5,)}
_PLAUSIBLE_HEADER: Final = re.compile(rb"0[78]00[67]|09005|10005")


class StreamDecoder:
    """Cut TCP bytes into messages, whatever the reads look like.

    The length header frames each message; CR, LF, NUL and spaces between
    messages are skipped, so a peer that terminates with ``\\n`` (the
    reference) and one that sends nothing between messages both work. After
    a malformed frame the decoder skips ahead to the next plausible header,
    so one bad frame costs only itself.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, StreamMessage | MalformedMessage]]:
        """Add ``data``; return (raw frame, message or error) for each frame now complete."""
        self._buffer += data
        results: list[tuple[bytes, StreamMessage | MalformedMessage]] = []
        buffer = self._buffer
        while True:
            start = 0
            while start < len(buffer) and buffer[start] in TCP_SEPARATORS:
                start += 1
            if start:
                del buffer[:start]
            if len(buffer) < HEADER_LENGTH:
                return results
            header = bytes(buffer[:HEADER_LENGTH])
            lengths = _STREAM_LENGTHS.get(int(header[:2])) if header[:2].isdigit() else None
            if not header.isdigit() or lengths is None or int(header[2:]) not in lengths:
                before = bytes(buffer)
                self._resync()
                skipped = before[: len(before) - len(buffer)]
                error = _("{header!r} is not the header of a TCP message (07 to 10)").format(header=header)
                results.append((skipped, MalformedMessage(error)))
                continue
            length = int(header[2:])
            if len(buffer) < length:
                return results
            frame = bytes(buffer[:length])
            del buffer[:length]
            try:
                message = decode(frame)
            except MalformedMessage as error:
                results.append((frame, error))
                continue
            assert isinstance(message, MatchStart | Move | NewGame | GiveUp)
            results.append((frame, message))

    def _resync(self) -> None:
        match = _PLAUSIBLE_HEADER.search(self._buffer, 1)
        if match is not None:
            del self._buffer[: match.start()]
        else:
            del self._buffer[: max(1, len(self._buffer) - (HEADER_LENGTH - 1))]
