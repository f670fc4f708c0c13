"""JogoVelha codec: every message both ways, and malformed input."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from velhanet.velha import wire


class EncodeDecodeTests(SynchronousTestCase):
    CASES: list[tuple[wire.Message, bytes]] = [
        (wire.Hello("Bo"), b"01007Bo"),
        (wire.HelloReply("Ana"), b"02008Ana"),
        (wire.Goodbye("Bo"), b"03007Bo"),
        (wire.Invite("pyBot"), b"04010pyBot"),
        (wire.InviteAnswer("javaP", 43121), b"05016javaP|43121"),
        (wire.InviteAnswer("Bo", 0), b"05009Bo|0"),
        (wire.InviteAck(), b"06007Ok"),
        (wire.MatchStart(1), b"070061"),
        (wire.MatchStart(2), b"070062"),
        (wire.Move(9), b"080069"),
        (wire.NewGame(), b"09005"),
        (wire.GiveUp(), b"10005"),
    ]

    def test_everyMessageBothWays(self) -> None:
        for message, raw in self.CASES:
            self.assertEqual(wire.encode(message), raw)
            self.assertEqual(wire.decode(raw), message)

    def test_streamMessagesEndWithNewline(self) -> None:
        self.assertEqual(wire.encodeStream(wire.Move(5)), b"080065\n")

    def test_answerAcceptedFlag(self) -> None:
        self.assertTrue(wire.InviteAnswer("a", 1).accepted)
        self.assertFalse(wire.InviteAnswer("a", 0).accepted)

    def test_datagramPaddingIgnored(self) -> None:
        self.assertEqual(wire.decodeDatagram(b"01007Bo\x00\x00\r\n  "), wire.Hello("Bo"))

    def test_lengthInCharactersOrBytes(self) -> None:
        """'Zé' is 2 characters, 3 UTF-8 bytes: both 01007 and 01008 are accepted."""
        self.assertEqual(wire.decode("01007Zé".encode()), wire.Hello("Zé"))
        self.assertEqual(wire.decode("01008Zé".encode()), wire.Hello("Zé"))
        self.assertEqual(wire.decode("01007Zé".encode("latin-1")), wire.Hello("Zé"))

    def test_okIsCaseInsensitive(self) -> None:
        self.assertEqual(wire.decode(b"06007OK"), wire.InviteAck("OK"))

    def test_checkNick(self) -> None:
        self.assertEqual(wire.checkNick("Bo"), "Bo")
        for bad in ("", "a" * 21, "a|b", "Zé", "tab\there"):
            self.assertRaises(ValueError, wire.checkNick, bad)


class MalformedTests(SynchronousTestCase):
    def assertMalformed(self, raw: bytes, fragment: str) -> None:
        error = self.assertRaises(wire.MalformedMessage, wire.decodeDatagram, raw)
        self.assertIn(fragment, str(error))

    def test_badHeaderDigits(self) -> None:
        self.assertMalformed(b"0101pyBot", "is not 5 digits")
        self.assertMalformed(b"x1007Bo", "is not 5 digits")

    def test_wrongLength(self) -> None:
        self.assertMalformed(b"01009Bo", "header says 9 characters but the message has 7")

    def test_tooShort(self) -> None:
        self.assertMalformed(b"010", "shorter than the 5-character header")

    def test_unknownId(self) -> None:
        self.assertMalformed(b"11007Bo", "unknown message id 11")
        self.assertMalformed(b"00005", "unknown message id 00")

    def test_junk(self) -> None:
        self.assertMalformed(b"\xff\xfe\x00garbage!!", "is not 5 digits")

    def test_thousandBytes(self) -> None:
        self.assertMalformed(b"01999" + b"a" * 995, "header says 999 characters but the message has 1000")

    def test_nickWithBar(self) -> None:
        self.assertMalformed(b"01008B|o", "contains '|'")
        self.assertMalformed(b"05012a|b|123", "contains '|'")

    def test_emptyNick(self) -> None:
        self.assertMalformed(b"01005", "empty nick")

    def test_badPort(self) -> None:
        self.assertMalformed(b"05008Bo|", "is not a number")
        self.assertMalformed(b"05013Bo|99999", "is not a number from 0 to 65535")
        self.assertMalformed(b"05007Bo", "no '|'")

    def test_badAck(self) -> None:
        self.assertMalformed(b"06008Yes", "must be 'Ok'")

    def test_tcpMessageInDatagram(self) -> None:
        self.assertMalformed(b"080065", "belongs on the TCP connection")

    def test_badBodies(self) -> None:
        for raw, fragment in [
            (b"070063", "1 or 2"),
            (b"08006x", "must be a number"),
            (b"09006x", "has no body"),
            (b"10006x", "has no body"),
        ]:
            error = self.assertRaises(wire.MalformedMessage, wire.decode, raw)
            self.assertIn(fragment, str(error))


class StreamDecoderTests(SynchronousTestCase):
    def messages(self, decoder: wire.StreamDecoder, data: bytes) -> list[object]:
        return [item for _, item in decoder.feed(data)]

    def test_newlineTerminated(self) -> None:
        decoder = wire.StreamDecoder()
        self.assertEqual(self.messages(decoder, b"070061\n080065\n"), [wire.MatchStart(1), wire.Move(5)])

    def test_noTerminator(self) -> None:
        decoder = wire.StreamDecoder()
        self.assertEqual(self.messages(decoder, b"0800650900510005"), [wire.Move(5), wire.NewGame(), wire.GiveUp()])

    def test_splitAnywhere(self) -> None:
        data = b"070062\r\n080061\n09005\n"
        for cut in range(1, len(data)):
            decoder = wire.StreamDecoder()
            got = self.messages(decoder, data[:cut]) + self.messages(decoder, data[cut:])
            self.assertEqual(got, [wire.MatchStart(2), wire.Move(1), wire.NewGame()], cut)

    def test_positionsOffTheBoardStillDecode(self) -> None:
        """0 and 10 are well-formed MSG08s; the match names the rule they break."""
        decoder = wire.StreamDecoder()
        self.assertEqual(self.messages(decoder, b"080060\n0800710\n"), [wire.Move(0), wire.Move(10)])

    def test_rawFramesReported(self) -> None:
        decoder = wire.StreamDecoder()
        self.assertEqual(decoder.feed(b"\n080065\n"), [(b"080065", wire.Move(5))])

    def test_junkThenRecovery(self) -> None:
        decoder = wire.StreamDecoder()
        items = self.messages(decoder, b"hello world\n080063\n")
        self.assertIsInstance(items[0], wire.MalformedMessage)
        self.assertEqual(items[-1], wire.Move(3))

    def test_badBodyThenNext(self) -> None:
        """The reference's killer frame (08x065) costs only itself."""
        decoder = wire.StreamDecoder()
        items = self.messages(decoder, b"08006x\n080065\n")
        self.assertIsInstance(items[0], wire.MalformedMessage)
        self.assertEqual(items[1:], [wire.Move(5)])

    def test_udpIdOnTcp(self) -> None:
        decoder = wire.StreamDecoder()
        items = self.messages(decoder, b"01007Bo\n080065\n")
        self.assertIsInstance(items[0], wire.MalformedMessage)
        self.assertIn("not the header of a TCP message", str(items[0]))
        self.assertEqual(items[-1], wire.Move(5))
