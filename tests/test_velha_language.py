"""``twistd -n velha`` in the language its user asks for: the console's prompts, board captions and results.

Real peers in a terminal (a pty), as a student runs one: ``LANG=pt_BR.UTF-8`` (and no ``LANGUAGE``) gives
the JogoVelha course's Portuguese, ``--language de`` German whatever the environment says, and a locale
velhanet has no catalog for (``xx_YY``) English. Each peer plays on its own loopback addresses.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.protocol import ProcessProtocol
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase, TestCase

from tests.languages import environment, speaking
from velhanet.velha.frontends import answer

from .processes import ENVIRONMENT, ROOT, twistd
from .test_velha_service import freeUdpPort, velhaArgs

TERMINAL_NOISE = re.compile(r"(> )?\r\x1b\[K|\r")
"""What a terminal shows differently: a prompt cleared to print a line above it, carriage returns."""
BOARD_ROW = re.compile(r"^ (\S) \| (\S) \| (\S)$", re.MULTILINE)
PROMPT = re.compile(r"sua jogada \([XO]\), 1-9:")
SERIES_RESULT = re.compile(
    r"\* (você venceu a série|você perdeu a série|a série terminou empatada) \(\d-\d\)\. De volta ao lobby\."
)


class TerminalPeer(ProcessProtocol):
    """One ``twistd -n velha`` console in a pseudo-terminal: what it printed, and lines typed into it.

    ``onOutput`` is called after every read, so a test can answer a prompt as a person would.
    """

    def __init__(self, testCase: TestCase, args: list[str], env: dict[str, str], usePTY: bool = True) -> None:
        self.output = ""
        self.waiting: list[tuple[re.Pattern[str], Deferred[None]]] = []
        self.ended = False
        self.gone: Deferred[None] = Deferred()
        self.onOutput: Any = None
        command = twistd("velha", *args)
        self.process = reactor.spawnProcess(self, command[0], command, env=env, path=str(ROOT), usePTY=usePTY)
        testCase.addCleanup(self.kill)

    def text(self) -> str:
        """The output as the person read it, without the terminal's control characters."""
        return TERMINAL_NOISE.sub("", self.output)

    def outReceived(self, data: bytes) -> None:
        self.output += data.decode("utf-8", "replace")
        if self.onOutput is not None:
            self.onOutput(self)
        text = self.text()
        for waiter in list(self.waiting):
            if waiter[0].search(text):
                self.waiting.remove(waiter)
                waiter[1].callback(None)

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        self.ended = True
        self.gone.callback(None)
        waiting, self.waiting = self.waiting, []
        for pattern, found in waiting:
            found.errback(AssertionError(f"exited before printing {pattern.pattern!r}:\n{self.text()}"))

    def waitFor(self, pattern: str) -> Deferred[None]:
        found: Deferred[None] = Deferred()
        compiled = re.compile(pattern)
        if compiled.search(self.text()):
            found.callback(None)
        elif self.ended:
            found.errback(AssertionError(f"had exited before printing {pattern!r}:\n{self.text()}"))
        else:
            self.waiting.append((compiled, found))
        return found.addTimeout(60, reactor)

    def type(self, line: str) -> None:
        self.transport.write(line.encode("utf-8") + b"\n")  # type: ignore[union-attr]

    def kill(self) -> Deferred[None]:
        """Stop the peer (at once: nothing it would say now matters); fires once it is gone."""
        if not self.ended:
            self.transport.signalProcess("KILL")  # type: ignore[union-attr]
        return self.gone


def firstFreeCell(text: str) -> str:
    """The lowest cell still numbered on the last board the console drew."""
    rows = BOARD_ROW.findall(text)[-3:]
    return next(cell for row in rows for cell in row if cell.isdigit())


class PortugueseSeriesTests(TestCase):
    """A student in Goiânia (``LANG=pt_BR.UTF-8``) plays a series against a bot, at the console."""

    timeout = 120

    @inlineCallbacks
    def test_promptsAndResultInPortuguese(self):
        anaHost, boHost = "127.0.0.61", "127.0.0.62"
        port = freeUdpPort(anaHost, boHost)
        quick = ["--start-grace", "0.5"]  # nobody here needs the original's 8 s to start a game
        anaArgs = velhaArgs("Ana", anaHost, boHost, port, "--bot", "--trace", "--move-delay", "0.05", *quick)
        ana = TerminalPeer(self, anaArgs, ENVIRONMENT, usePTY=False)
        yield ana.waitFor(re.escape(f"-> udp {boHost} b'01008Ana'"))
        boArgs = velhaArgs(
            "Bo", boHost, anaHost, port, "--invite", "Ana", "--log-file", os.path.abspath(self.mktemp()), *quick
        )
        bo = TerminalPeer(self, boArgs, environment("pt"))
        answered = [0]

        def play(peer: TerminalPeer) -> None:
            text = peer.text()
            prompts = len(PROMPT.findall(text))
            if prompts > answered[0] and not SERIES_RESULT.search(text):
                answered[0] = prompts
                peer.type(firstFreeCell(text[: text.rindex("sua jogada")]))

        bo.onOutput = play
        yield bo.waitFor(SERIES_RESULT.pattern)
        text = bo.text()
        self.assertIn("velhanet JogoVelha: você é 'Bo'. Digite 'help' para ver os comandos.", text)
        self.assertIn("* Ana está online (127.0.0.61)", text)
        self.assertIn("* série contra Ana: melhor de 5, vence quem ganhar 3 partidas", text)
        self.assertIn("* partida 1: você começa; você joga com X", text)
        self.assertRegex(text, r"você jogou \d\n X \|")
        self.assertRegex(text, r"Ana jogou \d\n")
        self.assertRegex(
            text,
            r"\* (você venceu esta partida|você perdeu esta partida|esta partida terminou empatada);"
            r" série: você \d - \d Ana",
        )
        self.assertGreaterEqual(answered[0], 3)
        for english in ("your move", "match against", "Back in the peer", "series"):
            self.assertNotIn(english, text)


class ChosenLanguageTests(TestCase):
    """``--language`` wins over the environment; a language velhanet does not speak is English."""

    timeout = 60

    @inlineCallbacks
    def console(self, host: str, env: dict[str, str], *more: str) -> Generator[Deferred[Any], Any, TerminalPeer]:
        """A console peer alone on ``host``, once it has greeted; it is asked for help and a move."""
        args = velhaArgs("Bo", host, host, freeUdpPort(host), "--log-file", os.path.abspath(self.mktemp()), *more)
        peer = TerminalPeer(self, args, env)
        yield peer.waitFor("'Bo'")
        peer.type("help")
        yield peer.waitFor("help  +")
        peer.type("5")
        yield peer.waitFor(r"> 5\n[^\n]+\n")
        return peer

    @inlineCallbacks
    def test_languageOption(self):
        peer = yield self.console("127.0.0.63", environment("pt"), "--language", "de")
        text = peer.text()
        self.assertIn("velhanet JogoVelha: du bist 'Bo'. Gib 'help' ein, um die Befehle zu sehen.", text)
        self.assertIn("Befehle:\n  who            zeigt, wer online ist", text)
        self.assertIn("  ja / nein      beantwortet eine Einladung", text)
        self.assertIn("es läuft keine Serie", text)
        self.assertNotIn("você", text)

    @inlineCallbacks
    def test_unknownLocaleIsEnglish(self):
        peer = yield self.console("127.0.0.64", environment("xx_YY.UTF-8"))
        text = peer.text()
        self.assertIn("velhanet JogoVelha peer 'Bo'. Type 'help' for commands.", text)
        self.assertIn("commands:\n  who            list the players online", text)
        self.assertIn("no match is running", text)


class AnswerTests(SynchronousTestCase):
    """An invitation is answered in English or in the console's language, accents or not."""

    def test_answers(self) -> None:
        speaking(self, "pt")
        self.assertEqual(
            [answer(w) for w in ("sim", "Não", "nao", "y", "no", "ja")], [True, False, False, True, False, None]
        )
        speaking(self, "es")
        self.assertEqual([answer(w) for w in ("sí", "si", "no", "yes")], [True, True, False, True])
