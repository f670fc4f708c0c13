"""The reports in the language asked for: ``velhanet-check --language es`` and ``velhanet-grade --language de``.

The commands run as a teacher or a student runs them, against a stand-in Gambit
server that loses the second of two objects in one write. What the checks
themselves say (their rules' texts, their reasons) is translated by their own
modules; here the report's words are asserted as they read, and the rules and
the summary as the catalog gives them in that language.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.languages import speaking
from tests.processes import ENVIRONMENT, PYTHON, ROOT, Child, freePort
from velhanet import i18n
from velhanet.checks.base import FAIL
from velhanet.checks.runner import Outcome, Report, summary
from velhanet.grading.classpage import classPage
from velhanet.grading.engines import LocalEngine
from velhanet.grading.gradebook import ClassLine, formatTable
from velhanet.grading.grader import Grader
from velhanet.grading.history import Graded, changeLine
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import Submission
from velhanet.sandbox.limits import SandboxSettings

BROKEN_GAMBIT = ROOT / "standins" / "faulty" / "gambit_server.py"
GERMAN = ("--workers", "1", "--language", "de")
BACK_TO_BACK = "Two objects in one write are both handled: two CREATEs get two answers."
"""The rule the stand-in breaks, in English (the check's docstring)."""
JSON_KEYS = {"family", "target", "cannotTest", "exitStatus", "program", "counts", "rules"}
RULE_KEYS = {"id", "rule", "reference", "status", "reason", "dependsOn", "expected", "observed", "original"}
RULE_KEYS |= {"reproduce", "exchange", "exchangeLeftOut", "runs", "sighted", "evidence"}


def scratch(case: SynchronousTestCase) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="velhanet-language-"))
    case.addCleanup(shutil.rmtree, folder, True)
    return folder


def summaryIn(code: str, data: dict[str, Any]) -> str:
    """The summary ``velhanet-check`` prints for the JSON report ``data``, as the catalog of ``code`` says it."""
    report = Report(data["family"], data["target"])
    report.outcomes = [Outcome(rule["status"], rule["rule"], "", rule["id"]) for rule in data["rules"]]
    previous = i18n.current()
    try:
        i18n.use(code)
        return summary(report)
    finally:
        i18n.use(previous.code)


class CheckInSpanishTests(SynchronousTestCase):
    """``velhanet-check gambit --language es``: the console, the page and JSON's human fields in Spanish."""

    def test_theReportSpeaksSpanish(self) -> None:
        port = freePort()
        Child(self, [PYTHON, "-m", "standins.faulty.gambit_server", str(port), "gambit-back-to-back"]).waitForPort(port)
        folder = scratch(self)
        command = ["gambit", "--target", f"127.0.0.1:{port}", "--time-scale", "0.5", "--language", "es"]
        result = subprocess.run(
            [PYTHON, "-m", "velhanet.checks.command", *command, "--json", "r.json", "--html", "r.html"],
            cwd=folder,
            env=ENVIRONMENT,  # LANGUAGE=en: the Spanish comes from --language only
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        out = result.stdout
        data = json.loads((folder / "r.json").read_text(encoding="utf-8"))
        spanish = i18n.language("es")
        # the console: the evidence under the FAIL in Spanish, the command that runs it again keeps --language
        self.assertIn("\n         esperado: ", out)
        self.assertIn("\n         observado: ", out)
        self.assertIn("original (español, gambit-protocol.es.txt): «Los mensajes se envían aplanados", out)
        self.assertIn("cómo lee velhanet el texto: docs/gambit.md#", out)
        self.assertIn("intercambio (ms desde el inicio de la comprobación; -> enviado, <- recibido, ** evento):", out)
        again = f"velhanet-check gambit --target 127.0.0.1:{port} --time-scale 0.5 --language es"
        self.assertIn(f"         de nuevo: {again} --only gambit-back-to-back", out)
        self.assertNotIn("expected: ", out)
        self.assertNotIn("again: ", out)
        # each rule and the summary as the Spanish catalog says them (the checks' own modules translate them)
        for rule in data["rules"]:
            self.assertIn(f"{rule['status']:7}  {rule['rule']}  [{rule['reference']}]", out)
        self.assertIn(summaryIn("es", data), out)
        self.assertIn("13 reglas: 12 superadas, 1 fallida, 0 avisos, 0 omitidas, 0 no ejecutadas", out)
        # JSON: the keys, ids and verdict tokens as they are; the rule in Spanish
        self.assertEqual(set(data), JSON_KEYS)
        self.assertEqual(data["counts"]["FAIL"], 1)
        failed = next(rule for rule in data["rules"] if rule["id"] == "gambit-back-to-back")
        self.assertEqual(set(failed), RULE_KEYS)
        self.assertEqual(failed["status"], "FAIL")
        self.assertEqual(failed["rule"], spanish.gettext(BACK_TO_BACK))
        self.assertNotEqual(failed["rule"], BACK_TO_BACK)
        self.assertEqual(failed["reproduce"], f"{again} --only gambit-back-to-back")
        self.assertEqual(failed["original"]["language"], "es")
        # the page: its language, its headings and labels
        page = (folder / "r.html").read_text(encoding="utf-8")
        self.assertIn('<html lang="es">', page)
        self.assertNotIn('lang="en"', page)
        for text in (
            "<th>canal</th><th>enviado por el verificador</th><th>recibido del programa</th>",
            "<dt>esperado</dt>",
            "<dt>observado</dt>",
            "<dt>volver a ejecutarla</dt>",
            ">12 superadas</span>",
            ">1 fallida</span>",
            ">0 no ejecutadas</span>",
            "regla de velhanet: <code>docs/gambit.md#gambit-back-to-back</code>",
            "el texto original (español, <code>gambit-protocol.es.txt</code>)",
        ):
            self.assertIn(text, page)
        self.assertNotIn("sent by the checker", page)
        self.assertIn('id="gambit-back-to-back"', page)


class GradeInGermanTests(SynchronousTestCase):
    """``velhanet-grade --language de``: the table, the progress line, and the reports every grading process
    writes, in German, though the workers' environment asks for English."""

    def test_aClassGradedInGerman(self) -> None:
        root = scratch(self)
        classFolder = root / "class"
        (classFolder / "bo").mkdir(parents=True)
        shutil.copy(BROKEN_GAMBIT, classFolder / "bo")
        (classFolder / "bo" / "velhanet-run").write_text(f"{PYTHON} gambit_server.py {{port}} gambit-back-to-back")
        (classFolder / "cy").mkdir()
        (classFolder / "cy" / "velhanet-run").write_text("./no-such-server --port {port}")
        (classFolder / "fay").mkdir()  # no velhanet-run
        out = root / "out"
        result = subprocess.run(
            [PYTHON, "-m", "velhanet.grading.command", "gambit", str(classFolder), "--out", str(out), *GERMAN],
            cwd=ROOT,
            env=ENVIRONMENT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        said = result.stdout + result.stderr
        self.assertEqual(result.returncode, 1, said)
        self.assertIn("velhanet-grade: bewerte 3 von 3 auf diesem Rechner, 1 gleichzeitig", result.stdout)
        self.assertIn("bewertet 3/3  laufend 0", result.stderr, said)  # the progress line
        self.assertIn("Studierende  Version ", result.stdout)
        self.assertRegex(result.stdout, r"Ergebnis\n")
        rows = {line.split()[0]: line for line in result.stdout.splitlines() if line[:3] in ("bo ", "cy ", "fay")}
        self.assertRegex(rows["bo"], r"^bo +Ordner [0-9a-f]{8} +12 +1 +0 +0 +0 +fail$")
        # written in the grading processes, on the workers: German too
        self.assertIn("nicht testbar: das Programm endete mit Status 127, bevor es getestet werden konnte", rows["cy"])
        self.assertIn("nicht testbar: keine Datei velhanet-run in der Abgabe", rows["fay"])
        self.assertIn(f"Berichte in {out}/: index.html (der Kurs, Studierende × Regeln)", result.stdout)
        report = json.loads((out / "bo.json").read_text(encoding="utf-8"))
        self.assertEqual(set(report) - JSON_KEYS, {"submission", "change", "grading"})
        failed = next(rule for rule in report["rules"] if rule["status"] == FAIL)
        self.assertEqual(failed["id"], "gambit-back-to-back")
        self.assertEqual(failed["rule"], i18n.language("de").gettext(BACK_TO_BACK))
        self.assertNotEqual(failed["rule"], BACK_TO_BACK)
        self.assertEqual(
            failed["reproduce"],
            f"velhanet-grade gambit {classFolder} --language de --student bo --again --out {out}-again"
            " --only gambit-back-to-back",
        )
        page = (out / "bo.html").read_text(encoding="utf-8")
        self.assertIn('<html lang="de">', page)
        for text in (
            "<h2>Das Programm</h2>",
            "<dt>erwartet</dt>",
            "<dt>Version</dt><dd>Ordner ",
            ">1 fehlgeschlagen</span>",
        ):
            self.assertIn(text, page)
        self.assertIn("<h2>Was das Programm ausgegeben hat</h2>", page)
        matrix = (out / "index.html").read_text(encoding="utf-8")
        self.assertIn('<html lang="de">', matrix)
        self.assertIn("<title>velhanet-grade gambit: 3 Studierende</title>", matrix)
        self.assertIn("<th>bestanden von</th>", matrix)
        self.assertIn("Jede Zelle verweist auf die Regel", matrix)
        self.assertIn('class="group">Anlegen und Beitreten</th>', matrix)
        # the history in another language: what changed is told from the rules' ids, in the words of this run
        command = [PYTHON, "-m", "velhanet.grading.command", "history", str(out), "bo", "--language", "pt"]
        history = subprocess.run(command, env=ENVIRONMENT, capture_output=True, text=True, check=True).stdout
        self.assertIn("primeira versão avaliada", history)
        self.assertIn("12 aprovadas, 1 reprovada, 0 aviso, 0 não executada", history)  # pt_BR: 0 is singular
        self.assertIn("    reprovadas: gambit-back-to-back", history)


class InProcessTests(SynchronousTestCase):
    """The pieces, each in a language of its own."""

    def test_changeLines(self) -> None:
        speaking(self, "de")
        statuses = {"a": "FAIL", "b": "PASS"}
        previous = Graded(1, "bo", "0123456789abcdef", "folder", "", "2026-11-30T10:00:00+01:00", "fail", "", statuses)
        line = changeLine(previous, {"a": "PASS", "b": "FAIL"}, "fail")
        self.assertEqual(line, "seit Version 0123456789ab (bewertet am 2026-11-30): behoben: a; neu fehlgeschlagen: b")
        self.assertEqual(
            changeLine(previous, dict(previous.statuses), "fail"),
            "seit Version 0123456789ab (bewertet am 2026-11-30): gleiche Ergebnisse",
        )

    def test_aSubmissionAndItsTableInPortuguese(self) -> None:
        speaking(self, "pt")
        submission = Submission("ana", Path("."), "3f2a9c1d0e4b5a6b", "git", "2026-12-01T22:10:00+01:00", 2)
        self.assertEqual(
            submission.describe(),
            "commit 3f2a9c1d0e4b (2026-12-01T22:10:00+01:00); 2 commits posteriores, após o prazo, não avaliados",
        )
        missing = Submission("bo", None, "", problem="a pasta /x não existe")
        table = formatTable([ClassLine(missing, Report("gambit", "bo", cannotTest=missing.problem))])
        self.assertEqual(table.splitlines()[0].split()[:2], ["aluno", "versão"])
        self.assertIn("não foi possível testar: a pasta /x não existe", table)

    def test_theClassPageInPortuguese(self) -> None:
        speaking(self, "pt")
        report = Report("gambit", "ana")
        report.outcomes.append(Outcome("PASS", "CREATE is answered by OK with a game id.", "", "t", "gambit-create"))
        page = classPage("gambit", [("ana", report)])
        self.assertIn('<html lang="pt-BR">', page)
        self.assertIn('<th rowspan="2">aluno</th>', page)
        self.assertIn('<th rowspan="2">veredito</th>', page)
        self.assertIn("velhanet-grade gambit: 1 aluno</title>", page)
        self.assertIn('class="group">criação e entrada</th>', page, "the rules' groups, from the checks' sections")
        self.assertIn('class="group">robustez</th>', page)

    def test_theDeadlineErrorInSpanish(self) -> None:
        from velhanet.grading.submissions import parseDeadline

        speaking(self, "es")
        with self.assertRaises(ValueError) as refused:
            parseDeadline("mañana")
        self.assertEqual(
            str(refused.exception), "'mañana' no es una hora como 2026-12-01 23:59 o 2026-12-01T23:59+01:00"
        )

    def test_everyGradingProcessIsToldTheLanguage(self) -> None:
        """The task a worker runs names the language: the command's (``--language``, else its environment's)."""
        submission = Submission("ana", Path("."), "v1")
        engine = LocalEngine(None, 1)
        told = Grader(GradeSettings("gambit", SandboxSettings("off"), language="de"), engine).specOf(submission, 0)
        self.assertEqual(told["settings"]["language"], "de")
        speaking(self, "es")
        spoken = Grader(GradeSettings("gambit", SandboxSettings("off")), engine).specOf(submission, 0)
        self.assertEqual(spoken["settings"]["language"], "es")
