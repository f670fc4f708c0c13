"""Properties of every codec and every server protocol, for arbitrary input (hypothesis).

For each family: arbitrary bytes, split anywhere, never raise anything but
the family's own error; nothing a server writes in answer is malformed; and
everything velhanet sends decodes back to what it meant, however the stream
is cut.
"""

from __future__ import annotations

import itertools
from typing import Literal
from xml.etree.ElementTree import Element

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from velhanet.gambit import wire as gambitWire
from velhanet.gambit.protocol import GambitServerFactory
from velhanet.games.kinarow import gobangRules
from velhanet.gobang import wire as gobangWire
from velhanet.gobang.lobby import Lobby as Table
from velhanet.gobang.wire import Refused
from velhanet.socha import wire as sochaXml
from velhanet.socha.protocol import SochaFactory
from velhanet.velha import wire as velhaWire

from .test_gobang import FakeChannel

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def splits(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the given offsets (taken modulo its length)."""
    if not data:
        return [data]
    points = sorted({cut % len(data) for cut in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


cutLists = st.lists(st.integers(min_value=0, max_value=10_000), max_size=12)


def garbage(*fragments: bytes) -> st.SearchStrategy[bytes]:
    """Random bytes mixed with fragments of the protocol, so the fuzzer reaches deep states."""
    pieces = st.one_of(st.binary(max_size=40), st.sampled_from(fragments))
    return st.lists(pieces, max_size=30).map(b"".join)


# -- Gambit ---------------------------------------------------------------------------------------

surrogates: tuple[Literal["Cs"]] = ("Cs",)  # lone surrogates: not encodable as UTF-8
gambitText = st.text(st.characters(exclude_categories=surrogates), max_size=30)
gambitMessages = st.builds(gambitWire.Message, st.integers(0, 255), gambitText, gambitText)
gambitBytes = garbage(
    b"{", b"}", b'"', b"\\", b"[", b"]", b'{"cmd":', b'"user":"a"', b'"args":"e2e4"', b",", b"\n", b"\\ud800", b"9" * 30
)


class GambitProperties(SynchronousTestCase):
    @PROPERTY_SETTINGS
    @given(gambitBytes, cutLists)
    def test_decoderNeverRaises(self, data: bytes, cuts: list[int]) -> None:
        decoder = gambitWire.JsonStreamDecoder(maxSize=200)
        for piece in splits(data, cuts):
            for raw, item in decoder.feed(piece):
                self.assertIsInstance(raw, str)
                self.assertIsInstance(item, gambitWire.Message | gambitWire.MalformedMessage)

    @PROPERTY_SETTINGS
    @given(st.lists(gambitMessages, max_size=8), cutLists)
    def test_roundTripAnyCut(self, messages: list[gambitWire.Message], cuts: list[int]) -> None:
        data = b"".join(gambitWire.encode(message) for message in messages)
        decoder = gambitWire.JsonStreamDecoder()
        decoded = [item for piece in splits(data, cuts) for _, item in decoder.feed(piece)]
        self.assertEqual(decoded, messages)

    @PROPERTY_SETTINGS
    @given(st.lists(gambitBytes, min_size=1, max_size=3), cutLists)
    def test_serverAnswersOnlyWellFormedMessages(self, clients: list[bytes], cuts: list[int]) -> None:
        clock = Clock()
        factory = GambitServerFactory(clock, language="en")
        connections = []
        for number, data in enumerate(clients):
            protocol = factory.buildProtocol(None)
            transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 5000 + number))
            protocol.makeConnection(transport)
            connections.append((protocol, transport))
            for piece in splits(data, cuts):
                if not transport.disconnecting:
                    protocol.dataReceived(piece)
                clock.advance(0)
        for _ in range(100):
            clock.advance(0.05)
        for protocol, transport in connections:
            written = transport.value()
            self.assertTrue(written == b"" or written.endswith(b"\n"))
            for _, item in gambitWire.JsonStreamDecoder(maxSize=1 << 20).feed(written):
                self.assertIsInstance(item, gambitWire.Message)
                self.assertIn(item.cmd, (0, 1, 4, 5, 6))  # type: ignore[union-attr]
            protocol.connectionLost()
        self.assertEqual(factory.games, {})


# -- Software-Challenge ---------------------------------------------------------------------------

xmlNames = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
# Every character UTF-8 can encode but the controls: excluding the surrogates (Cs) is that set, and costs
# nothing, where ``codec="utf-8"`` made hypothesis try all 1.1 million code points in every trial worker.
xmlText = st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=20)


@st.composite
def xmlElements(draw: st.DrawFn, depth: int = 0) -> Element:
    element = Element(draw(xmlNames), draw(st.dictionaries(xmlNames, xmlText, max_size=3)))
    if depth < 3:
        for child in draw(st.lists(xmlElements(depth + 1), max_size=3)):
            element.append(child)
    if len(element) == 0:
        text = draw(xmlText)
        element.text = text if text.strip() else None
    return element


def sameElement(a: Element, b: Element) -> bool:
    return (
        a.tag == b.tag
        and a.attrib == b.attrib
        and (a.text or "") == (b.text or "")
        and len(a) == len(b)
        and all(sameElement(x, y) for x, y in zip(a, b, strict=True))
    )


sochaBytes = garbage(
    b"<protocol>",
    b"<join/>",
    b"<room roomId='x'>",
    b"</room>",
    b"<data class='move'>",
    b"<authenticate password='p'/>",
    b"<?xml version='1.0' encoding='ebcdic'?>",
    b"<!DOCTYPE a>",
    b"<!--",
    b"&lol;",
    b"<",
    b">",
    b"</protocol>",
)


class SochaProperties(SynchronousTestCase):
    @PROPERTY_SETTINGS
    @given(sochaBytes, cutLists)
    def test_readerRaisesOnlyXmlError(self, data: bytes, cuts: list[int]) -> None:
        reader = sochaXml.XmlStreamReader(maxMessage=300)
        try:
            for piece in splits(data, cuts):
                for message in reader.feed(piece):
                    self.assertIsInstance(message, Element)
        except sochaXml.XmlError:
            pass

    @PROPERTY_SETTINGS
    @given(st.lists(xmlElements(), max_size=5), cutLists)
    def test_writerRoundTripAnyCut(self, elements: list[Element], cuts: list[int]) -> None:
        data = ("<protocol>" + "".join(sochaXml.render(element) for element in elements)).encode("utf-8")
        reader = sochaXml.XmlStreamReader()
        decoded = [message for piece in splits(data, cuts) for message in reader.feed(piece)]
        self.assertEqual(len(decoded), len(elements))
        for original, back in zip(elements, decoded, strict=True):
            self.assertTrue(sameElement(original, back), (sochaXml.render(original), sochaXml.render(back)))

    @PROPERTY_SETTINGS
    @given(st.lists(sochaBytes, min_size=1, max_size=3), cutLists)
    def test_serverWritesAWellFormedStream(self, clients: list[bytes], cuts: list[int]) -> None:
        clock = Clock()
        lobby = SochaFactory(clock, password="p")
        connections = []
        for data in clients:
            protocol = lobby.buildProtocol(None)
            transport = StringTransport()
            protocol.makeConnection(transport)
            connections.append((protocol, transport))
            for piece in splits(b"<protocol>" + data, cuts):
                if not transport.disconnecting:
                    protocol.dataReceived(piece)
        clock.advance(60)
        for protocol, transport in connections:
            reader = sochaXml.XmlStreamReader(maxMessage=1 << 20)
            for message in reader.feed(transport.value()):  # raises XmlError if we wrote bad XML
                self.assertIn(message.tag, ("joined", "room", "errorpacket", "left", "prepared", "joinedGameRoom"))
            protocol.connectionLost()
        self.assertEqual(lobby.connections, set())


# -- Gobang ---------------------------------------------------------------------------------------


class GobangProperties(SynchronousTestCase):
    @PROPERTY_SETTINGS
    @given(
        st.integers(0, 0xFFFF),
        st.integers(0, 15),
        st.integers(0, 63),
        st.integers(0, 63),
        st.sampled_from(["big", "little"]),
    )
    def test_clientWordRoundTrip(self, pid: int, op: int, x: int, y: int, order: str) -> None:
        word = gobangWire.ClientWord(pid, op, x, y)
        self.assertEqual(gobangWire.decodeClient(gobangWire.encodeClient(word, order), order), word)  # type: ignore[arg-type]

    @PROPERTY_SETTINGS
    @given(st.integers(0, 15), st.integers(0, 63), st.integers(0, 63), st.sampled_from(["big", "little"]))
    def test_serverWordRoundTrip(self, op: int, x: int, y: int, order: str) -> None:
        word = gobangWire.ServerWord(op, x, y)
        self.assertEqual(gobangWire.decodeServer(gobangWire.encodeServer(word, order), order), word)  # type: ignore[arg-type]

    @PROPERTY_SETTINGS
    @given(st.binary(max_size=200), cutLists)
    def test_tableTakesAnyWords(self, data: bytes, cuts: list[int]) -> None:
        """Any words into the server FIFO: no exception, and every word out is a valid server word."""
        channels: dict[int, FakeChannel] = {}

        def openChannel(pid: int) -> FakeChannel:
            if pid % 5 == 0:
                raise Refused("no FIFO")
            return channels.setdefault(pid, FakeChannel(pid))

        stops: list[int] = []
        table = Table(gobangRules(7), openChannel, lambda pid: "not proven", lambda: stops.append(1))
        reader = gobangWire.WordReader(gobangWire.CLIENT_WORD)
        for piece in splits(data, cuts):
            for raw in reader.feed(piece):
                table.received(gobangWire.decodeClient(raw, "big"))
        self.assertEqual(stops, [])
        for channel in channels.values():
            for word in channel.words:
                self.assertEqual(gobangWire.decodeServer(gobangWire.encodeServer(word, "big"), "big"), word)


# -- JogoVelha ------------------------------------------------------------------------------------

nicks = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="|"), min_size=1, max_size=20)
datagramMessages = st.one_of(
    st.builds(velhaWire.Hello, nicks),
    st.builds(velhaWire.HelloReply, nicks),
    st.builds(velhaWire.Goodbye, nicks),
    st.builds(velhaWire.Invite, nicks),
    st.builds(velhaWire.InviteAnswer, nicks, st.integers(0, 65535)),
    st.just(velhaWire.InviteAck()),
)
streamMessages = st.one_of(
    st.builds(velhaWire.MatchStart, st.sampled_from([1, 2])),
    st.builds(velhaWire.Move, st.integers(1, 9)),
    st.just(velhaWire.NewGame()),
    st.just(velhaWire.GiveUp()),
)
velhaBytes = garbage(b"07006", b"08006", b"09005", b"10005", b"04007", b"05", b"|", b"\n", b"\x00", b"1", b"5")


class VelhaProperties(SynchronousTestCase):
    @PROPERTY_SETTINGS
    @given(velhaBytes)
    def test_datagramDecoderRaisesOnlyMalformed(self, data: bytes) -> None:
        try:
            message = velhaWire.decodeDatagram(data)
        except velhaWire.MalformedMessage:
            return
        self.assertIsInstance(
            message,
            velhaWire.Hello
            | velhaWire.HelloReply
            | velhaWire.Goodbye
            | velhaWire.Invite
            | velhaWire.InviteAnswer
            | velhaWire.InviteAck,
        )

    @PROPERTY_SETTINGS
    @given(datagramMessages)
    def test_datagramRoundTrip(self, message: velhaWire.DatagramMessage) -> None:
        self.assertEqual(velhaWire.decodeDatagram(velhaWire.encode(message)), message)

    @PROPERTY_SETTINGS
    @given(velhaBytes, cutLists)
    def test_streamDecoderNeverRaises(self, data: bytes, cuts: list[int]) -> None:
        decoder = velhaWire.StreamDecoder()
        for piece in splits(data, cuts):
            for raw, item in decoder.feed(piece):
                self.assertIsInstance(raw, bytes)
                self.assertIsInstance(
                    item,
                    velhaWire.MatchStart
                    | velhaWire.Move
                    | velhaWire.NewGame
                    | velhaWire.GiveUp
                    | velhaWire.MalformedMessage,
                )

    @PROPERTY_SETTINGS
    @given(st.lists(streamMessages, max_size=10), cutLists)
    def test_streamRoundTripAnyCut(self, messages: list[velhaWire.StreamMessage], cuts: list[int]) -> None:
        data = b"".join(velhaWire.encodeStream(message) for message in messages)
        decoder = velhaWire.StreamDecoder()
        decoded = [item for piece in splits(data, cuts) for _, item in decoder.feed(piece)]
        self.assertEqual(decoded, messages)

    @PROPERTY_SETTINGS
    @given(st.lists(velhaBytes, max_size=10))
    def test_lobbyTakesAnyDatagrams(self, datagrams: list[bytes]) -> None:
        from .velha_harness import BotRecorder, FakeLan

        lan = FakeLan()
        bo = lan.addPeer("Bo", "198.18.0.2", BotRecorder(lan.clock, seed=1), acceptPolicy="always")
        for datagram in datagrams:
            bo.datagramReceived(datagram, "198.18.0.9")
        lan.run(40, step=0.5)
        for source, _, raw in lan.log:
            if source == "198.18.0.2":
                velhaWire.decodeDatagram(raw)  # everything Bo sent is well-formed
