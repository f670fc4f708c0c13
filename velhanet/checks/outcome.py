"""A rule's verdict and a program's report: what the runner makes, the reports show and the history keeps.

An L{Outcome} is one rule's verdict, with the evidence under it: its
check's exchange on the wire and, when more than one run or check saw the
rule (``--repeat``; another check's set-up that needed it), the
L{Evidence} of each run that went otherwise and of each set-up that saw the
rule broken, and the counts (``runs``, ``sighted``). A L{Report} is every
rule's outcome for one program, and how the program itself ended.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from velhanet.checks.base import FAIL, PASS, WARN
from velhanet.checks.exchange import Exchange
from velhanet.checks.originals import Original, originalOf
from velhanet.i18n import _
from velhanet.sandbox.verdict import Verdict


@dataclass
class Evidence:
    """One more thing a rule's verdict rests on: a run of its check that went otherwise (``--repeat``), or the
    set-up of another check that saw the rule broken (a JOIN left unanswered while a game was being made)."""

    where: str
    """Which run or set-up, in words: ``run 3 of 5``, ``the set-up of “END is forwarded” (gambit-end)``."""
    status: str
    """What it found: the run's verdict, or FAIL for a set-up that saw the rule broken."""
    reason: str
    exchange: Exchange = field(default_factory=Exchange)
    check: str = ""
    """The anchor of the other check whose set-up it is (empty for a run of the rule's own check)."""


@dataclass
class Outcome:
    """The verdict on one rule."""

    status: str
    rule: str
    reason: str
    testId: str
    anchor: str = ""
    doc: str = ""
    dependsOn: str = ""
    exchange: Exchange = field(default_factory=Exchange)
    """What the check sent and received, and what happened around it."""
    reproduce: str = ""
    """The command that runs this one check again against the same target (set by the command line)."""
    family: str = ""
    runs: dict[str, int] = field(default_factory=dict)
    """How often each verdict came, when the check ran more than once (``--repeat``): ``{"PASS": 3, "FAIL": 2}``;
    empty for one run."""
    sighted: tuple[int, int] | None = None
    """(kept, seen): how often the rule was seen kept, of how often it was seen at all (its own check's runs
    and every other check's set-up that needed it); None when only its own check saw it."""
    evidence: list[Evidence] = field(default_factory=list)
    """What else the verdict rests on: each run that went otherwise, each set-up that saw the rule broken."""

    @property
    def repeated(self) -> int:
        """How many times its check ran (1 without ``--repeat``)."""
        return sum(self.runs.values()) or 1

    def tally(self) -> str:
        """``PASS 9 of 10, FAIL 1 of 10``: each verdict with how often it came (empty for one run)."""
        total = self.repeated
        if not self.runs:
            return ""
        return ", ".join(
            _("{status} {n} of {total}").format(status=status, n=n, total=total)
            for status, n in sorted(self.runs.items(), key=lambda pair: (-pair[1], pair[0]))
        )

    def ownCounts(self) -> tuple[int, int]:
        """(kept, judged): the runs of its own check that kept the rule (PASS, WARN), of those that judged it."""
        runs = self.runs or {self.status: 1}
        kept = runs.get(PASS, 0) + runs.get(WARN, 0)
        return kept, kept + runs.get(FAIL, 0)

    def keptOf(self) -> tuple[int, int] | None:
        """(kept, seen) over everything that saw the rule (other checks' set-ups, its own runs); None when only
        one run of its own check did."""
        if self.sighted is not None:
            return self.sighted
        return self.ownCounts() if self.runs else None

    def countsText(self) -> str:
        """How often the rule was kept, when more than one run or set-up saw it: ``kept 12 of 13``, and the
        runs' verdicts with ``--repeat``; empty otherwise."""
        said = []
        if self.sighted is not None:
            said.append(_("kept {kept} of {seen}").format(kept=self.sighted[0], seen=self.sighted[1]))
        if self.runs:
            said.append(self.tally())
        return "; ".join(said)

    def againRules(self) -> str:
        """The rules whose checks run this one's evidence again: its own, and the checks whose set-ups saw it
        broken (``gambit-join,gambit-end``), for ``--only``."""
        return ",".join(dict.fromkeys([self.anchor, *(more.check for more in self.evidence if more.check)]))

    @property
    def reference(self) -> str:
        return f"{self.doc}#{self.anchor}" if self.anchor else self.doc

    def _expectation(self) -> tuple[str, str]:
        """(expected, observed) from the check's message: ``X must Y; got Z`` or ``X must Y: Z``; else the rule
        and the message (a verdict whose runs disagree: the rule, and what the runs did)."""
        if len(self.runs) > 1:
            return self.rule, self.reason
        # the words the checks' messages are written with, in English and in the language they were written in
        for got in dict.fromkeys(("; got ", _("; got "))):  # TRANSLATORS: as in "X must Y; got Z"
            wanted, separator, came = self.reason.partition(got)
            if separator:
                return wanted, came
        musts = {" must ", _(" must ")}  # TRANSLATORS: as in "X must Y; got Z", with its spaces
        for separator in ("; ", ": "):  # ``X must Y; Z`` before ``X must Y: Z`` (an address has a colon)
            wanted, found, came = self.reason.partition(separator)
            if found and any(must in f" {wanted} " for must in musts):
                return wanted, came
        return self.rule, self.reason

    @property
    def expected(self) -> str:
        return self._expectation()[0]

    @property
    def observed(self) -> str:
        return self._expectation()[1]

    @property
    def original(self) -> Original | None:
        """The sentence of the original protocol text the rule comes from."""
        return originalOf(self.family, self.anchor)


@dataclass
class Report:
    family: str
    target: str
    outcomes: list[Outcome] = field(default_factory=list)
    cannotTest: str = ""
    """Why nothing could be checked; empty when the checks ran."""
    program: Verdict | None = None
    """How the program velhanet started for the checks ended (in its sandbox), if it started one."""

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def brokeALimit(self) -> bool:
        return self.program is not None and self.program.brokeALimit

    @property
    def exitStatus(self) -> int:
        """0: nothing failed; 1: a rule failed or the program broke a limit; 3: the target could not be tested."""
        if self.cannotTest:
            return 3
        return 1 if self.count(FAIL) or self.brokeALimit else 0
