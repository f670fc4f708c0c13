"""Whether the sandbox works on this machine, and the privileges velhanet needs to set one up.

L{probeBubblewrap} runs ``bwrap`` once with every namespace the sandbox
uses and says, in one line, what is missing when it fails (``bwrap`` not
installed, user namespaces disabled or restricted).

Setting a sandbox up means joining its network namespace (to route every
address to loopback and watch it) and moving it into a control group.
Root may do both. An ordinary user may not join a namespace owned by
another user namespace than its own, so L{enterBench} first moves the
whole velhanet process into a new user namespace in which it is root:
every namespace bwrap then makes is a child of it. Nothing else changes:
files are still read and written as the user (uid 0 inside maps to the
user's uid), and the host network stays reachable. It must run before any
thread starts (``unshare`` refuses a threaded process), so each command
calls it first thing in its ``main``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


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
        return Availability(False, f"bwrap is not installed: {INSTALL}")
    try:
        done = subprocess.run(
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
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Availability(False, f"bwrap could not be run: {error}")
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else f"exit status {done.returncode}"
        return Availability(
            False,
            f"bwrap cannot create namespaces here ({detail}): allow unprivileged user namespaces"
            " (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap), or run as root",
        )
    return Availability(True, "", bwrap)


_libc = ctypes.CDLL(None, use_errno=True)
_entered = False


def enterBench(privateNetwork: bool = False) -> None:
    """Become root of a new user namespace (an ordinary user only; root needs nothing).

    ``privateNetwork``: also a network namespace of its own with only loopback,
    so that the main thread can join a sandbox's network and come back (the
    graders run their checks inside the program's network). Does nothing if
    unprivileged user namespaces are not available: the sandbox probe then
    says so.
    """
    global _entered
    if _entered or os.geteuid() == 0:
        return
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | (CLONE_NEWNET if privateNetwork else 0)
    if _libc.unshare(flags) != 0:
        return
    with open("/proc/self/setgroups", "w") as setgroups:
        setgroups.write("deny")
    with open("/proc/self/uid_map", "w") as uidMap:
        uidMap.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as gidMap:
        gidMap.write(f"0 {gid} 1")
    if privateNetwork:
        from velhanet.sandbox.network import loopbackUp

        loopbackUp()
    _entered = True
