"""Whether the sandbox works on this machine: L{probeBubblewrap}.

It runs ``bwrap`` once with every namespace the sandbox uses and says, in one
line, what is missing when it fails (``bwrap`` not installed, user namespaces
disabled or restricted).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from functools import cache

from velhanet.i18n import N_, _
from velhanet.sandbox.processes import ToolFailed, runTool

INSTALL = N_("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)")


@dataclass(frozen=True)
class Availability:
    works: bool
    problem: str
    bwrap: str = "bwrap"


@cache
def probeBubblewrap() -> Availability:
    """Can bwrap make the sandbox here? (Once per process.)"""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Availability(False, _("bwrap is not installed: {install}").format(install=_(INSTALL)))
    try:
        done = runTool(
            [
                bwrap,
                "--ro-bind",
                "/",
                "/",
                "--unshare-all",
                "--die-with-parent",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "true",
            ],
            timeout=20,
        )
    except ToolFailed as error:
        return Availability(False, _("bwrap could not be run: {error}").format(error=error))
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else _("exit status {status}").format(status=done.returncode)
        return Availability(
            False,
            _(
                "bwrap cannot create namespaces here ({detail}): allow unprivileged user namespaces"
                " (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or run as root"
            ).format(detail=detail),
        )
    return Availability(True, "", bwrap)
