"""``velhanet-check velha`` in the language of the process: its reasons and the exchange under them.

The English is the tests' own language (tests/test_conformance*.py assert it); here the same texts in
Portuguese, the JogoVelha course's, and the English again, unchanged, with ``en``.
"""

from __future__ import annotations

import socket
from types import SimpleNamespace

from twisted.trial.unittest import SynchronousTestCase

from tests.languages import speaking
from tests.processes import freePort
from velhanet.checks import exchange
from velhanet.checks.base import Target, setTarget
from velhanet.checks.exchange import Exchange
from velhanet.checks.velha import rules as velha  # the module: its checks are not this suite's tests
from velhanet.checks.velha.player import Recorder, receiveStart, streamMeaning
from velhanet.velha.said import Said

TARGET, LOCAL = "127.0.61.2", "127.0.61.1"
"""The target's address (nothing answers there but the test's own socket) and the checker's."""


def seriesReason(driver: object) -> str:
    """The reason ``checkSeries`` fails with for ``driver`` (a series as a driver left it): no socket at all."""
    check = velha.VelhaConformance("test_fullSeriesAsInvitee")
    try:
        check.checkSeries(driver)  # type: ignore[arg-type]
    except check.failureException as failed:
        return str(failed)
    raise AssertionError("checkSeries passed")


def brokenSeries(malformed: list[str]) -> SimpleNamespace:
    """A driver whose series the target broke with malformed frames; or, without any, one ended by a rule."""
    recorder = Recorder()
    if not malformed:  # the match's reason keeps its English, whatever the process speaks (velhanet.velha.said)
        recorder.matchEnded(
            Said("target violou uma regra: MSG08 fora da vez", "target broke a rule: MSG08 out of turn")
        )
    return SimpleNamespace(recorder=recorder, malformed=malformed, afterTheEnd=[], peerClosed=True)


class SeriesReasonTests(SynchronousTestCase):
    """The reasons of the series' rules (velha-series-invitee, velha-series-inviter), from a driver in memory."""

    FRAMES = ["b'08x': not a header"]

    def test_portuguese(self) -> None:
        speaking(self, "pt")
        self.assertEqual(
            seriesReason(brokenSeries(self.FRAMES)),
            "o programa enviou quadros TCP malformados: [\"b'08x': not a header\"]",
        )

    def test_english(self) -> None:
        speaking(self, "en")
        self.assertEqual(
            seriesReason(brokenSeries(self.FRAMES)), "the target sent malformed TCP frames: [\"b'08x': not a header\"]"
        )

    def test_aReasonIsSortedByItsEnglishAndShownTranslated(self) -> None:
        """A match that ended by a broken rule is that rule's FAIL in Portuguese too, with the Portuguese reason."""
        speaking(self, "pt")
        self.assertEqual(
            seriesReason(brokenSeries([])),
            "o programa violou uma regra da partida: target violou uma regra: MSG08 fora da vez",
        )


class ExchangeTextTests(SynchronousTestCase):
    """What the exchange says around the bytes: the bytes as they came, their meaning and the events translated."""

    def streamEnd(self) -> list[str]:
        """The exchange of a match connection that the target closes before MSG07, and of a part of a message."""
        record = exchange.begin()
        self.addCleanup(exchange.end)
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        theirs.close()
        self.assertEqual(receiveStart(ours, 1), b"")
        return [line.meaning for line in record.lines] + [streamMeaning(b"0")]

    def leftOut(self) -> tuple[list[str], list[str]]:
        """A flood's record (one line kept first, two last): all its lines, and the last two."""
        record = Exchange(lambda: 0.0, head=1, tail=2)
        for index in range(5):
            record.received("tcp#1", b"08001", f"message {index}")
        return record.textLines(), record.textLines(last=2)

    def test_portuguese(self) -> None:
        speaking(self, "pt")
        self.assertEqual(self.streamEnd(), ["o programa fechou a conexão antes de MSG07", "(parte de uma mensagem)"])
        every, last = self.leftOut()
        self.assertEqual(every[1], "        … 2 linhas omitidas …")
        self.assertEqual(
            last[0], "        … 2 linhas anteriores (--verbose, ou os relatórios JSON e HTML, as mostram) …"
        )
        self.assertIn("08001  = message 4", last[-1], "the bytes as they came, the meaning as it was given")

    def test_english(self) -> None:
        speaking(self, "en")
        self.assertEqual(self.streamEnd(), ["the target closed the connection before MSG07", "(part of a message)"])
        every, last = self.leftOut()
        self.assertEqual(every[1], "        … 2 lines left out …")
        self.assertEqual(last[0], "        … 2 earlier lines (--verbose, or the JSON and HTML reports, show them) …")


class HelloCheckTests(SynchronousTestCase):
    """The rule velha-hello, run as the runner runs it, against a target that answers MSG01 with a malformed MSG02
    (a socket of the test's own on a loopback address, the datagram queued before the check asks)."""

    def failedHello(self) -> tuple[str, list[str]]:
        port = freePort(socket.SOCK_DGRAM)
        setTarget(Target("velha", host=TARGET, port=port, timeScale=0.01, extra={"local": LOCAL}))
        self.addCleanup(setTarget, None)
        record = exchange.begin()
        self.addCleanup(exchange.end)
        check = velha.VelhaConformance("test_helloIsAnswered")
        check.setUp()
        self.addCleanup(check.udp.close)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as target:
            target.bind((TARGET, port))
            target.sendto(b"02006Faulty", (LOCAL, port))  # the first thing the check reads from the target
            try:
                check.test_helloIsAnswered()
            except check.failureException as failed:
                return str(failed), [line.meaning for line in record.lines]
        raise AssertionError("velha-hello passed")

    def test_portuguese(self) -> None:
        speaking(self, "pt")
        reason, meanings = self.failedHello()
        self.assertTrue(reason.startswith("MSG02 deve responder a MSG01 em até "), reason)
        self.assertIn("chegou: apenas datagramas malformados: recebido '02006Faulty': ", reason)
        self.assertIn(f"para {TARGET}:", meanings[0])
        self.assertTrue(meanings[1].startswith(f"de {TARGET}:") and ": malformada: " in meanings[1], meanings)
        self.assertIn("esperou 0.15 s por MSG02 de 127.0.61.2: nenhuma chegou", meanings)

    def test_english(self) -> None:
        speaking(self, "en")
        reason, meanings = self.failedHello()
        self.assertTrue(
            reason.startswith(
                "MSG02 must answer MSG01 within 15 s (0.15 s at --time-scale 0.01), sent to our IP at port 20181;"
                " got only malformed datagrams: received '02006Faulty': header says 6 characters but the message has 11"
            ),
            reason,
        )
        self.assertRegex(meanings[0], rf"^to {TARGET}:\d+: MSG01 nick=vcheck$")
        self.assertRegex(meanings[1], rf"^from {TARGET}:\d+: malformed: header says 6 characters")
        self.assertIn("waited 0.15 s for MSG02 from 127.0.61.2: none came", meanings)
