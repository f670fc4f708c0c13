"""What a grading is given besides the programs: plain values, the same for every submission of a run.

A verdict depends on the program and on these: the family's rules, ``strict``,
``only``, ``repeat`` and the sandbox's limits. L{GradeSettings.key} is what
the history records beside each verdict, so that a version graded before
with the same settings is shown again, and one graded with other settings is
graded anew. The settings travel to every grading process as plain data
(L{GradeSettings.toData}), wherever it runs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from velhanet.sandbox.limits import ProgramLimits, SandboxSettings


@dataclass(frozen=True)
class GradeSettings:
    family: str
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    strict: bool = False
    only: str = ""
    """Only these rules, by their ids, comma-separated (empty: every rule)."""
    repeat: int = 1
    """Each rule run so many times, its verdicts counted."""
    language: str = ""
    """The language every report is written in, wherever it is graded (empty: this process's)."""

    def key(self) -> str:
        """What a verdict depends on besides the program, as the history keeps it (``repeat`` only when it is
        not 1, so that a history kept before ``--repeat`` existed still holds)."""
        key: dict[str, object] = {
            "family": self.family,
            "strict": self.strict,
            "only": self.only,
            "sandbox": repr(self.sandbox),
        }
        if self.repeat != 1:
            key["repeat"] = self.repeat
        return json.dumps(key, sort_keys=True)

    def toData(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["sandbox"] = {"mode": self.sandbox.mode, "limits": dataclasses.asdict(self.sandbox.limits)}
        return data

    @classmethod
    def fromData(cls, data: dict[str, Any]) -> GradeSettings:
        sandbox = SandboxSettings(str(data["sandbox"]["mode"]), ProgramLimits(**data["sandbox"]["limits"]))
        return cls(**{**data, "sandbox": sandbox})
