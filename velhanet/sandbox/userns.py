"""The privileges velhanet needs to set a sandbox up, for an ordinary user: L{enterUserNamespace}.

Setting a sandbox up means joining its network namespace (to route every
address to loopback and watch it) and moving it into a control group.
Root may do both. An ordinary user may not join a namespace owned by
another user namespace than its own, so L{enterUserNamespace} first moves the
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

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)
_entered = False


def enterUserNamespace(privateNetwork: bool = False) -> None:
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
