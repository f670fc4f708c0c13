"""``velhanet-check FAMILY --target …``: run a conformance suite with trial's runner and print a report.

Each rule gets one line, PASS, FAIL, WARN (a known deviation, see
``base.deviation``) or SKIP, with the reason; then a summary line
``N passed, N failed`` and an exit status that is 0 only when nothing failed.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, TextIO

from twisted.python.reflect import namedAny
from twisted.trial import reporter, runner

from velhanet.conformance.base import WARNING_PREFIX, Target, setTarget

FAMILIES = {
    "velha": "velhanet.conformance.velha",
    "gobang": "velhanet.conformance.gobang",
    "gambit": "velhanet.conformance.gambit",
    "socha": "velhanet.conformance.socha",
    "socha-player": "velhanet.conformance.sochaplayer",
}


@dataclass
class Outcome:
    status: str
    rule: str
    reason: str
    testId: str


class RuleResult(reporter.TestResult):
    """A trial result that keeps one outcome per test, in order."""

    def __init__(self, stream: TextIO | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.outcomes: list[Outcome] = []

    def _rule(self, test: Any) -> str:
        """The first line of the test method's docstring: the rule it checks."""
        try:
            doc = (namedAny(test.id()).__doc__ or "").strip().splitlines()
        except (AttributeError, ValueError, ImportError):
            doc = []
        return doc[0] if doc else test.id().rsplit(".", 1)[-1]

    def _record(self, test: Any, status: str, reason: str = "") -> None:
        self.outcomes.append(Outcome(status, self._rule(test), reason, test.id()))

    def addSuccess(self, test: Any) -> None:
        super().addSuccess(test)
        self._record(test, "PASS")

    def addFailure(self, test: Any, fail: Any) -> None:
        super().addFailure(test, fail)
        self._record(test, "FAIL", _message(fail))

    def addError(self, test: Any, error: Any) -> None:
        super().addError(test, error)
        self._record(test, "FAIL", f"error: {_message(error)}")

    def addSkip(self, test: Any, reason: Any) -> None:
        super().addSkip(test, reason)
        text = str(reason)
        if text.startswith(WARNING_PREFIX):
            self._record(test, "WARN", text[len(WARNING_PREFIX) :])
        else:
            self._record(test, "SKIP", text)

    def done(self) -> None:
        pass


def _message(failure: Any) -> str:
    if isinstance(failure, tuple):
        return str(failure[1])
    try:
        return str(failure.getErrorMessage())
    except AttributeError:
        return str(failure)


def _select(suite: Any, only: str) -> Any:
    """The tests of ``suite`` whose id contains ``only`` (all of them when it is empty)."""
    if not only:
        return suite
    chosen = runner.TestSuite()
    for test in _flatten(suite):
        if only in test.id():
            chosen.addTest(test)
    return chosen


def _flatten(suite: Any) -> list[Any]:
    if hasattr(suite, "_tests"):
        return [test for child in suite._tests for test in _flatten(child)]
    return [suite]


def runSuite(family: str, target: Target, only: str = "") -> list[Outcome]:
    """Run one family's suite against ``target`` through trial's runner; the outcomes in order."""
    setTarget(target)
    results: list[RuleResult] = []

    def factory(*args: Any) -> RuleResult:
        result = RuleResult(*args)
        results.append(result)
        return result

    try:
        with tempfile.TemporaryDirectory() as scratch:
            trialRunner = runner.TrialRunner(
                factory,  # type: ignore[arg-type]
                stream=io.StringIO(),
                workingDirectory=os.path.join(scratch, "_trial_temp"),
            )
            suite = runner.TestLoader().loadByName(FAMILIES[family], recurse=True)
            trialRunner.run(_select(suite, only))
    finally:
        setTarget(None)
    return results[0].outcomes if results else []


def formatReport(family: str, outcomes: list[Outcome]) -> tuple[str, bool]:
    lines = [f"velhanet-check {family}: {len(outcomes)} requirements"]
    for outcome in outcomes:
        line = f"{outcome.status:4}  {outcome.rule}"
        if outcome.reason and outcome.status != "PASS":
            line += f"\n      -> {outcome.reason}"
        lines.append(line)
    count = {status: sum(o.status == status for o in outcomes) for status in ("PASS", "FAIL", "WARN", "SKIP")}
    lines.append(
        f"{count['PASS']} passed, {count['FAIL']} failed"
        + (f", {count['SKIP']} skipped" if count["SKIP"] else "")
        + (f" ({count['WARN']} warnings)" if count["WARN"] else "")
    )
    return "\n".join(lines), count["FAIL"] == 0 and count["PASS"] > 0


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="velhanet-check",
        description="Check an implementation of a velhanet protocol, rule by rule.",
    )
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument(
        "--target",
        default="127.0.0.1",
        help="address of the target (velha: the peer's IP; gambit/socha: HOST[:PORT]; gobang: the server's pid)",
    )
    parser.add_argument("--port", type=int, default=None, help="port (default: the protocol's)")
    parser.add_argument("--local", default="127.0.0.1", help="velha: our own address (not the target's)")
    parser.add_argument("--local2", default="127.0.0.3", help="velha: a second own address (busy check)")
    parser.add_argument("--fifo-dir", default="/tmp", help="gobang: the FIFO directory")
    parser.add_argument("--command", default="", help="socha-player: the command that starts the player")
    parser.add_argument("--timeout", type=float, default=None, help="seconds to wait for each answer")
    parser.add_argument("--strict", action="store_true", help="known deviations of the originals fail")
    parser.add_argument("--only", default="", help="run only the checks whose name contains this text")
    parser.add_argument("--byte-order", default="native", help="gobang: native, big or little")
    parser.add_argument("--destructive", action="store_true", help="gobang: also check Kill (stops the server)")
    return parser.parse_args(argv)


DEFAULT_PORTS = {"velha": 20181, "gambit": 22022, "socha": 13050, "socha-player": 0, "gobang": 0}


def targetFrom(arguments: argparse.Namespace) -> Target:
    host, _, port = arguments.target.rpartition(":") if ":" in arguments.target else (arguments.target, "", "")
    chosen = Target(arguments.family if arguments.family != "socha-player" else "socha-player", host=host)
    chosen.port = arguments.port or (int(port) if port else DEFAULT_PORTS[arguments.family])
    if arguments.family == "gobang":
        chosen.pid = int(arguments.target)
        chosen.host = ""
    chosen.fifoDir = arguments.fifo_dir
    chosen.command = arguments.command
    chosen.strict = arguments.strict
    chosen.extra["local"] = arguments.local
    chosen.extra["local2"] = arguments.local2
    chosen.extra["byteOrder"] = arguments.byte_order
    chosen.extra["destructive"] = arguments.destructive
    chosen.extra["cwd"] = os.getcwd()  # trial's runner changes directory; commands run from here
    if arguments.timeout is not None:
        chosen.timeout = arguments.timeout
    return chosen


def main(argv: list[str] | None = None) -> None:
    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    text, ok = formatReport(arguments.family, runSuite(arguments.family, targetFrom(arguments), arguments.only))
    print(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
