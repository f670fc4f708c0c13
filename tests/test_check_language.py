"""``velhanet-check`` gambit, gobang, socha and socha-player in the language of the process: the rules' texts,
the checks' reasons, and the runner's own words around them (why a check did not run, the summary).

The English is the tests' own language (tests/test_conformance*.py assert it); here the same texts in
Spanish, the Gambit course's, and German, the Gobang and Software-Challenge courses', and the English again,
unchanged, with ``en``.
"""

from __future__ import annotations

import socketserver
import threading

from twisted.trial.unittest import SynchronousTestCase

from tests.languages import speaking
from velhanet.checks import exchange
from velhanet.checks.base import FAIL, NOT_RUN, PASS, Target, setTarget
from velhanet.checks.gambit import rules as gambit
from velhanet.checks.gobang import rules as gobang
from velhanet.checks.runner import Outcome, Report, _diedDuring, _explain, checksOf, ruleOf, runChecks, summary
from velhanet.gambit.wire import Cmd, Message, encode

BACK_TO_BACK = "Two objects in one write are both handled: two CREATEs get two answers."
GAME_ID = "ab12"


def rule(family: str, anchor: str) -> str:
    """The text of the rule ``anchor`` of ``family`` as the runner reads it."""
    texts = {ruleAnchor: text for text, ruleAnchor in map(ruleOf, checksOf(family))}
    return texts[anchor]


class _LosesTheSecond(socketserver.BaseRequestHandler):
    """A stand-in Gambit server: whatever a write holds, one OK answers it (two CREATEs in one write: one OK)."""

    def handle(self) -> None:
        if self.request.recv(65536):
            self.request.sendall(encode(Message(Cmd.OK, "", GAME_ID)))
        while self.request.recv(65536):
            pass


def standIn(case: SynchronousTestCase) -> Target:
    """A stand-in server that breaks gambit-back-to-back (and nothing that one check needs), as the target."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _LosesTheSecond)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    case.addCleanup(server.server_close)
    case.addCleanup(server.shutdown)
    return Target("gambit", host="127.0.0.1", port=server.server_address[1], timeScale=0.1)


def backToBackReason(case: SynchronousTestCase) -> str:
    """The reason the check gambit-back-to-back fails with against the stand-in, the check called as it is."""
    setTarget(standIn(case))
    case.addCleanup(setTarget, None)
    exchange.begin()
    case.addCleanup(exchange.end)
    check = gambit.GambitConformance("test_backToBackObjects")
    check.setUp()
    try:
        check.test_backToBackObjects()
    except check.failureException as failed:
        return str(failed)
    finally:
        check.doCleanups()
    raise AssertionError("gambit-back-to-back passed")


class RuleTextTests(SynchronousTestCase):
    """A rule is its check's docstring line, shown in the language the process speaks."""

    def test_gambitInSpanish(self) -> None:
        speaking(self, "es")
        self.assertEqual(
            rule("gambit", "gambit-back-to-back"),
            "Dos objetos en una sola escritura se atienden los dos: dos CREATE reciben dos respuestas.",
        )
        self.assertEqual(
            rule("gambit", "gambit-join-unknown"), "JOIN de una partida que no existe se responde con ERROR."
        )

    def test_gobangAndSochaInGerman(self) -> None:
        speaking(self, "de")
        self.assertEqual(
            rule("gobang", "gobang-illegal"), "Ein Zug auf ein besetztes Feld bekommt Opcode 9, dann erneut Opcode 8."
        )
        self.assertEqual(
            rule("socha", "socha-hard-timeout"),
            "Kein Zug innerhalb von 10 s beendet das Spiel gegen den aufgeforderten Spieler.",
        )
        self.assertEqual(
            rule("socha-player", "socha-player-exit"),
            "Der Prozess des Spielers endet nach dem Spiel mit Exit-Status 0.",
        )

    def test_english(self) -> None:
        speaking(self, "en")
        self.assertEqual(rule("gambit", "gambit-back-to-back"), BACK_TO_BACK)


class GambitReasonTests(SynchronousTestCase):
    """gambit-back-to-back against a stand-in server that answers only the first of two objects in one write."""

    def test_spanish(self) -> None:
        speaking(self, "es")
        self.assertEqual(
            backToBackReason(self),
            f"el segundo de dos objetos seguidos no debe perderse: tras OK user='' args='{GAME_ID}' no llegó nada",
        )

    def test_english(self) -> None:
        speaking(self, "en")
        self.assertEqual(
            backToBackReason(self),
            f"the second of two back-to-back objects must not be lost: after OK user='' args='{GAME_ID}' came nothing",
        )

    def test_theRunnersReportInSpanish(self) -> None:
        """Run as ``velhanet-check gambit --only gambit-back-to-back`` runs it: rule, reason, evidence, summary."""
        speaking(self, "es")
        target = standIn(self)
        report = runChecks("gambit", target, only="gambit-back-to-back")
        [outcome] = report.outcomes
        self.assertEqual((outcome.status, outcome.anchor), (FAIL, "gambit-back-to-back"))
        self.assertEqual(
            outcome.rule, "Dos objetos en una sola escritura se atienden los dos: dos CREATE reciben dos respuestas."
        )
        self.assertEqual(outcome.expected, "el segundo de dos objetos seguidos no debe perderse")
        self.assertEqual(outcome.observed, f"tras OK user='' args='{GAME_ID}' no llegó nada")
        self.assertIn("se esperó 0.3 s: no llegó nada más", [line.meaning for line in outcome.exchange.lines])
        self.assertEqual(summary(report), "1 regla: 0 superadas, 1 fallida, 0 avisos, 0 omitidas, 0 no ejecutadas")
        self.assertEqual(report.target, f"servidor gambit en 127.0.0.1:{target.port}")


class RunnerTextTests(SynchronousTestCase):
    """What the runner says around the checks' own words: a target that stopped, a consequence, a summary."""

    def outcomes(self) -> list[Outcome]:
        created = Outcome(FAIL, rule("gambit", "gambit-create"), "", "t.create", "gambit-create")
        joined = Outcome(
            NOT_RUN, rule("gambit", "gambit-join"), "x", "t.join", "gambit-join", dependsOn="gambit-create"
        )
        passed = Outcome(PASS, rule("gambit", "gambit-split"), "", "t.split", "gambit-split")
        _explain(joined, [created, joined, passed])
        _diedDuring(passed, "sin conexión TCP")
        return [created, joined, passed]

    def test_german(self) -> None:
        speaking(self, "de")
        created, joined, passed = self.outcomes()
        self.assertEqual(joined.reason, "Folge des FAIL von „CREATE wird mit OK und einer Partie-ID beantwortet.“: x")
        self.assertEqual(
            passed.reason, "das Programm hat während dieser Prüfung aufgehört: sin conexión TCP (zuvor bestanden)"
        )
        self.assertEqual(passed.status, FAIL, "the verdict tokens stay as they are")
        report = Report("gambit", "t", [created, joined, passed])
        self.assertEqual(
            summary(report), "3 Regeln: 0 bestanden, 2 fehlgeschlagen, 0 Warnungen, 0 übersprungen, 1 nicht ausgeführt"
        )

    def test_english(self) -> None:
        speaking(self, "en")
        created, joined, passed = self.outcomes()
        self.assertEqual(joined.reason, "consequence of the FAIL of “CREATE is answered by OK with a game id.”: x")
        self.assertEqual(passed.reason, "the target stopped during this check: sin conexión TCP (it had passed)")
        report = Report("gambit", "t", [created, joined, passed])
        self.assertEqual(summary(report), "3 rules: 0 pass, 2 fail, 0 warn, 0 skip, 1 not run")

    def test_aGobangTargetThatCannotBeTestedInGerman(self) -> None:
        speaking(self, "de")
        missing = Target("gobang", pid=1, fifoDir="/nonexistent-velhanet-fifos")
        self.assertEqual(gobang.canTest(missing), "das FIFO-Verzeichnis /nonexistent-velhanet-fifos existiert nicht")
        self.assertEqual(gobang.canTest(Target("gobang", pid=0)), "--target muss die Prozessnummer des Servers sein")
        self.assertEqual(missing.limit(10), "10 s")
        self.assertEqual(Target("gobang", timeScale=0.5).limit(10), "10 s (5 s bei --time-scale 0.5)")
