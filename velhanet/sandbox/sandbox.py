"""How one command runs the programs it starts: ``--sandbox``, the limits, and whether bwrap works here.

Twisted-free, so that blocking code (``blocking.py``) and the reactor's
(``program.spawn``) share it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from velhanet.i18n import _
from velhanet.sandbox.availability import Availability, probeBubblewrap
from velhanet.sandbox.cgroups import ControlGroup
from velhanet.sandbox.jail import Jail
from velhanet.sandbox.limits import SandboxSettings
from velhanet.sandbox.monitor import rlimitOptions


class SandboxUnavailable(Exception):
    """``--sandbox on`` here, and bwrap does not work: the one line says what is missing."""


class Sandbox:
    """How one command runs the programs it starts: ``--sandbox`` and the limits, and whether bwrap works."""

    def __init__(self, settings: SandboxSettings, availability: Availability) -> None:
        self.settings = settings
        self.availability = availability

    @property
    def active(self) -> bool:
        return self.settings.mode != "off" and self.availability.works

    @classmethod
    def forCommand(cls, settings: SandboxSettings, say: Callable[[str], None]) -> Sandbox:
        """``auto``: the sandbox if bwrap works, else a one-line warning; ``on``: SandboxUnavailable."""
        availability = Availability(True, "") if settings.mode == "off" else probeBubblewrap()
        if settings.mode != "off" and not availability.works:
            if settings.mode == "on":
                raise SandboxUnavailable(_("--sandbox on: {problem}").format(problem=availability.problem))
            say(_("warning: programs run without a sandbox: {problem}").format(problem=availability.problem))
        return cls(settings, availability)

    @classmethod
    def off(cls) -> Sandbox:
        """No sandbox, for velhanet's own helper processes (a grading, a game, a checker's client): they are
        started by the same front ends as a student's program, with its output tail and cap."""
        return cls(SandboxSettings("off"), Availability(True, ""))

    def describe(self) -> str:
        if not self.active:
            if self.settings.mode == "off":
                return _("no sandbox (--sandbox off)")
            return _("no sandbox: {problem}").format(problem=self.availability.problem)
        return _("bubblewrap sandbox")

    def jail(
        self,
        command: Sequence[str],
        folder: Path | None,
        cwd: Path | None,
        shared: Sequence[Path],
        group: ControlGroup | None,
        stdin: bool = False,
    ) -> Jail:
        limits = self.settings.limits
        return Jail(  # bwrap binds absolute paths only: a grader's "class/ana" is made absolute here
            command=list(command),
            folder=folder.resolve() if folder is not None else None,
            cwd=cwd.resolve() if cwd is not None else None,
            shared=[path.resolve() for path in shared],
            diskBytes=limits.disk,
            rlimits=rlimitOptions(limits, group is not None),
            stdin=stdin,
        )
