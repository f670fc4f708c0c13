"""``twistd class-server``: the command line of a class server."""

from __future__ import annotations

from pathlib import Path

from twisted.python import usage

from velhanet.classroom.service import makeService
from velhanet.i18n import _
from velhanet.sandbox.limits import DEFAULT_LIMITS, MODES, ProgramLimits, SandboxSettings, parseSeconds, parseSize
from velhanet.startup import ShortUsage


class Options(ShortUsage):
    synopsis = "--class CLASS.toml [--listen ENDPOINT] [--out DIR] [--workers N | --scheduler tcp://HOST:8786] ..."
    longdesc = (
        "A class on one service: students hand in (an archive, or a commit) and read their own reports, graded in"
        " the sandbox as velhanet-grade does; teachers see the class. People sign in with the personal links of"
        " velhanet-class links CLASS.toml --url URL."
    )
    optFlags = [
        ["strict", None, "known deviations of the original programs FAIL"],
        ["trace", None, "log every request, who asked it and how it was answered"],
    ]
    optParameters = [
        [
            "class",
            None,
            None,
            "the class file: its family, deadline, teachers and students (docs/getting-started-teacher.md)",
        ],
        ["listen", None, "tcp:8080:interface=127.0.0.1", "Twisted endpoint to listen on (ssl:… for a real class)"],
        ["out", None, "velhanet-class", "where the class's database, archives and reports are kept"],
        ["workers", None, 0, "gradings at once on this machine [default: four per processor, as velhanet-grade]", int],
        ["scheduler", None, None, "grade on a running Dask cluster (pip install 'velhanet[cluster]') [default: here]"],
        ["repeat", None, 1, "run every rule N times and count its verdicts", int],
        ["only", None, "", "grade only these rules, by their ids, comma-separated [default: every rule]"],
        ["poll", None, "5m", "how often the git students' repositories are looked at (0: never)"],
        ["sandbox", None, "auto", "on, or auto: grade in the bubblewrap sandbox (refused without it); off: without"],
        ["limit-memory", None, None, "a program's memory [default: as velhanet-grade]"],
        ["limit-cpu", None, None, "a program's CPU seconds"],
        ["limit-processes", None, None, "a program's processes", int],
        ["limit-upload", None, "16M", "the largest archive a student may upload"],
        ["limit-files", None, 2000, "files in an uploaded archive", int],
        ["limit-expanded", None, "64M", "an uploaded archive's size once unpacked"],
    ]

    def postOptions(self) -> None:
        if not self["class"]:
            raise usage.UsageError(_("--class CLASS.toml is needed: the class this server serves"))
        if not Path(self["class"]).is_file():
            raise usage.UsageError(_("--class {path}: no such file").format(path=self["class"]))
        if self["sandbox"] not in MODES:
            raise usage.UsageError(_("--sandbox must be one of {modes}").format(modes=", ".join(MODES)))
        try:
            limits = ProgramLimits(
                memory=parseSize(self["limit-memory"]) if self["limit-memory"] else DEFAULT_LIMITS.memory,
                cpu=parseSeconds(self["limit-cpu"]) if self["limit-cpu"] else DEFAULT_LIMITS.cpu,
                processes=self["limit-processes"] or DEFAULT_LIMITS.processes,
                disk=DEFAULT_LIMITS.disk,
                output=DEFAULT_LIMITS.output,
            )
            self["sandboxSettings"] = SandboxSettings(self["sandbox"], limits)
            self["uploadSize"] = parseSize(self["limit-upload"])
            self["expandedSize"] = parseSize(self["limit-expanded"])
            self["pollSeconds"] = 0.0 if self["poll"] in ("0", "off") else parseSeconds(self["poll"])
        except ValueError as error:
            raise usage.UsageError(str(error)) from None
        if self["repeat"] < 1 or self["limit-files"] < 1 or self["workers"] < 0:
            raise usage.UsageError(_("--repeat, --limit-files and --workers must be positive numbers"))


__all__ = ["Options", "makeService"]
