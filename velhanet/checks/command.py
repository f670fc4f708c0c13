"""``velhanet-check FAMILY --target …``: check an implementation rule by rule and report.

One line per rule — PASS, FAIL, WARN, SKIP or NOT RUN — with the rule, where
velhanet's protocol reference states it, and for anything but a PASS what was
expected and what came, the original sentence, the check's exchange on the
wire (``exchange``) and the command that runs it again; then a summary that
adds up. ``--junit-xml FILE`` and ``--json FILE`` write the same report for a
CI system or a grading script, ``--html FILE`` as a page (``page``).

Exit status: 0 when no rule failed, 1 when one did, 3 when the target could
not be tested at all (nothing graded), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from velhanet.checks.base import FAIL
from velhanet.checks.formats import jsonReport, junitXml, outcomeLine, programLines, reproduceCommand
from velhanet.checks.page import htmlReport, notTested
from velhanet.checks.runner import FAMILIES, Outcome, Report, runChecks, summary, unknownRules
from velhanet.checks.settings import CheckSettings, targetFor
from velhanet.i18n import _
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments
from velhanet.sandbox import settingsFrom as sandboxSettingsFrom
from velhanet.sandbox.userns import enterUserNamespace
from velhanet.startup import ArgumentParser

EXIT_STATUSES = """\
exit status: 0 no rule failed (PASS, WARN, SKIP and NOT RUN only); 1 a rule failed;
3 the target could not be tested at all (nothing graded); 2 a usage error.
The rules are in velhanet's protocol references: docs/velha.md, docs/gobang.md,
docs/gambit.md, docs/socha.md (each rule has an anchor, printed with it);
how a teacher uses this: docs/conformance.md."""


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="velhanet-check",
        description="Check an implementation of one of velhanet's protocols rule by rule "
        "(PASS, FAIL, WARN, SKIP, NOT RUN per rule).",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "family",
        choices=sorted(FAMILIES),
        help="the protocol, and so what is checked: velha (a peer), gambit, gobang or socha (a server), "
        "socha-player (a player program, started by the checker; see --command)",
    )
    parser.add_argument(
        "--target",
        default="127.0.0.1",
        help="velha: the peer's IP; gambit/socha: HOST[:PORT]; gobang: the server's pid (default: %(default)s)",
    )
    parser.add_argument("--port", type=int, default=None, help="velha/gambit/socha: the port (default: the protocol's)")
    parser.add_argument("--local", default="127.0.0.1", help="velha: our own address (default: %(default)s)")
    parser.add_argument(
        "--local2", default="127.0.0.3", help="velha: a second own address, for the busy check (default: %(default)s)"
    )
    parser.add_argument(
        "--local3",
        default="127.0.0.4",
        help="velha: the address of vinvite, the player the target is asked to invite (default: %(default)s)",
    )
    parser.add_argument(
        "--expect-invite",
        action="store_true",
        help="velha: the target must invite vinvite by itself (started so): not inviting FAILs, instead of a SKIP",
    )
    parser.add_argument("--fifo-dir", default="/tmp", help="gobang: the FIFO directory (default: %(default)s)")
    parser.add_argument(
        "--command",
        default="",
        help="socha-player, required: the command that starts the player; {port} is replaced by the port "
        "of the checker's server (default: none)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds to wait for each answer of the target before the rule FAILs (default: 3; 15 for velha)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="velha, gobang, gambit, socha: multiply every wait of the checker, the rules' limits too, by FACTOR; "
        "for velhanet's own tests and for quick runs against a target that answers at once (default: %(default)s)",
    )
    parser.add_argument("--strict", action="store_true", help="known deviations of the original programs FAIL")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every rule N times and count its verdicts (PASS 9 of 10): runs that disagree are a FAIL that "
        "says so, with the exchange of each run that differed (default: %(default)s)",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="RULE[,RULE…]",
        help="run only these rules, each given by its id exactly as the report prints it (gambit-split); "
        "the report prints the command that runs one failed rule again (default: all)",
    )
    parser.add_argument("--byte-order", default="native", help="gobang: native, big or little (default: %(default)s)")
    parser.add_argument("--destructive", action="store_true", help="gobang: also check Kill (it stops the server)")
    parser.add_argument(
        "--move-delay",
        type=float,
        default=0.3,
        help="velha: seconds our player waits before each move (default: %(default)s)",
    )
    parser.add_argument(
        "--start-grace",
        type=float,
        default=8.0,
        help="velha: seconds our player gives the target to start a game, see docs/velha.md (default: %(default)s)",
    )
    parser.add_argument(
        "--junit-xml", default=None, metavar="FILE", help="also write the report as JUnit XML (default: none)"
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON (default: none)")
    parser.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="also write the report as one self-contained HTML page, with every rule's exchange (default: none)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary (and FAIL lines)")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the evidence (the whole exchange) under every rule, not only under FAIL and WARN",
    )
    addSandboxArguments(parser)
    arguments = parser.parse_args(argv)
    arguments.argv = list(argv)
    if arguments.time_scale <= 0:
        parser.error(_("--time-scale must be more than 0, not {scale:g}").format(scale=arguments.time_scale))
    if arguments.repeat < 1:
        parser.error(_("--repeat must be 1 or more, not {n}").format(n=arguments.repeat))
    if arguments.only:
        unknown, anchors = unknownRules(arguments.family, arguments.only)
        if unknown:
            said = _("--only {rules}: no such rule of {family}; its rules: {known}")
            parser.error(said.format(rules=", ".join(unknown), family=arguments.family, known=", ".join(anchors)))
    return arguments


def settingsFrom(arguments: argparse.Namespace) -> CheckSettings:
    """The command line as the values a run of the checks is given."""
    return CheckSettings(
        family=arguments.family,
        target=arguments.target,
        port=arguments.port,
        local=arguments.local,
        local2=arguments.local2,
        local3=arguments.local3,
        expectInvite=arguments.expect_invite,
        fifoDir=arguments.fifo_dir,
        command=arguments.command,
        timeout=arguments.timeout,
        timeScale=arguments.time_scale,
        strict=arguments.strict,
        repeat=arguments.repeat,
        only=arguments.only,
        byteOrder=arguments.byte_order,
        destructive=arguments.destructive,
        moveDelay=arguments.move_delay,
        startGrace=arguments.start_grace,
        sandbox=sandboxSettingsFrom(arguments),
    )


def check(arguments: argparse.Namespace, out: TextIO) -> Report:
    """Run the checks, printing each verdict as it comes; write the files asked for."""

    def progress(outcome: Outcome) -> None:
        outcome.reproduce = reproduceCommand(arguments.argv, outcome.againRules())
        if not arguments.quiet or outcome.status == FAIL:
            print(outcomeLine(outcome, arguments.verbose), file=out, flush=True)

    def revised(outcome: Outcome) -> None:
        if not told:
            told.append(True)
            print(_("what the set-ups of later checks saw changes these verdicts:"), file=out)
        progress(outcome)

    told: list[bool] = []
    chosen = targetFor(settingsFrom(arguments))
    if arguments.family == "socha-player":
        # the one family whose program velhanet starts: through the sandbox
        settings = chosen.extra["sandboxSettings"]
        chosen.extra["sandbox"] = Sandbox.forCommand(settings, say=lambda line: print(line, file=out))
    print(f"velhanet-check {arguments.family}: {chosen.describe()}", file=out, flush=True)
    report = runChecks(arguments.family, chosen, arguments.only, progress, arguments.repeat, revised)
    report.program = chosen.extra.get("verdict")
    if report.cannotTest:
        print(notTested(report.cannotTest), file=out)
    for line in programLines(report):
        print(line, file=out)
    print(_("nothing was graded") if report.cannotTest else summary(report), file=out)
    if arguments.junit_xml:
        Path(arguments.junit_xml).write_bytes(junitXml(report))
    if arguments.json:
        Path(arguments.json).write_text(jsonReport(report) + "\n", encoding="utf-8")
    if arguments.html:
        Path(arguments.html).write_text(htmlReport(report), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> None:
    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    if arguments.family == "socha-player" and arguments.sandbox != "off":
        enterUserNamespace()  # before any thread: an ordinary user's sandbox needs it
    try:
        sys.exit(check(arguments, sys.stdout).exitStatus)
    except SandboxUnavailable as error:
        print(f"velhanet-check: {error}", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
