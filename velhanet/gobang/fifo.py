"""Named pipes for Gobang: their names, safe creation and opening (Twisted's I/O on them: ``fifotransport``).

Rules (``docs/gobang.md``):

- FIFOs are ``DIR/gbs.NNNNN`` (server) and ``DIR/gbc.NNNNN`` (clients), the
  pid zero-padded to at least 5 digits.
- Mode 0622 on both (set with chmod, whatever the umask): other users'
  clients must be able to write into the server FIFO, and a server run by
  another user into a client FIFO. Only the owner reads.
- Every open uses ``O_NOFOLLOW`` and is checked with ``fstat`` to be a FIFO,
  so a symlink or a regular file planted under a FIFO name is refused.
- Our own name can only be stale (the pid is ours now): it is removed and
  created anew. Names of other live processes are never touched.
- A reader opens its FIFO ``O_RDWR | O_NONBLOCK``: it is then one of the
  writers itself, so writers coming and going never cause EOF storms.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from velhanet.gobang.wire import Refused
from velhanet.i18n import N_, _

FIFO_MODE = 0o622

OPEN_REFUSALS = {
    errno.ENOENT: N_("{path} does not exist"),
    errno.ENXIO: N_("{path} exists but nobody reads it"),
    errno.ELOOP: N_("{path} is a symbolic link"),
    errno.EACCES: N_("{path} may not be written by us"),
}
"""Why someone else's FIFO cannot be opened for writing, by the error of the open."""


def fifoPath(directory: str | Path, prefix: str, pid: int) -> Path:
    return Path(directory) / f"{prefix}.{pid:05d}"


def createFifo(path: Path) -> None:
    """Make our own FIFO, replacing a stale one (our pid's name can only be stale)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    os.mkfifo(path, FIFO_MODE)
    os.chmod(path, FIFO_MODE)  # the umask (0077 under a daemonized twistd) must not narrow it


def removeFifo(path: Path) -> None:
    """Remove our FIFO's name if it is still a FIFO we own."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISFIFO(info.st_mode) and info.st_uid == os.geteuid():
        path.unlink()


def _checkFifo(fd: int, path: Path) -> os.stat_result:
    info = os.fstat(fd)
    if not stat.S_ISFIFO(info.st_mode):
        os.close(fd)
        raise Refused(_("{path} is not a FIFO").format(path=path))
    return info


def openForReading(path: Path) -> int:
    """Our own FIFO, read-write and non-blocking (no EOF when writers go)."""
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW)
    _checkFifo(fd, path)
    return fd


def openForWriting(path: Path, ownerPid: int | None = None) -> int:
    """Someone else's FIFO, write-only and non-blocking; refused with a reason if unsafe.

    With ``ownerPid``, the FIFO must belong to the user who runs that process.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as error:
        known = OPEN_REFUSALS.get(error.errno or 0)
        reason = _(known).format(path=path) if known else f"{path} {error.strerror or error}"
        raise Refused(reason) from None
    info = _checkFifo(fd, path)
    if ownerPid is not None:
        uid = processUid(ownerPid)
        if uid is None:
            os.close(fd)
            raise Refused(_("no process {pid} is running").format(pid=ownerPid))
        if info.st_uid != uid:
            os.close(fd)
            raise Refused(
                _("{path} belongs to uid {owner}, but process {pid} runs as uid {uid}").format(
                    path=path, owner=info.st_uid, pid=ownerPid, uid=uid
                )
            )
    return fd


def processUid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except (FileNotFoundError, ProcessLookupError):
        return None


def isAlive(pid: int) -> bool:
    """Does process ``pid`` still run? A zombie (dead, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 : stat.rfind(")") + 3] not in ("Z", "X")


def pidsWithLowBits(bits: int) -> list[int]:
    """Running processes whose pid's low 16 bits are ``bits`` (only used for Kill, so a scan is fine)."""
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) & 0xFFFF == bits]


def killRefusal(directory: Path, bits: int, serverUid: int) -> str | None:
    """Why a Kill carrying these pid bits is not proven to come from a client of ours (None: it is).

    The pid inside a word is only a claim: anyone who can write the server
    FIFO (mode 0622) can put any pid there. The claim is proven when exactly
    one running process has those bits, that process runs as the server's
    user or root, and it owns the matching client FIFO ``gbc.NNNNN``, a real
    FIFO (not a link) whose owner is that process's user. Only that user (or
    root) can create such a FIFO, so another user cannot borrow the pid of a
    root process, and a process that never opened a client FIFO (a daemon, a
    kernel thread) cannot be named.
    """
    candidates = pidsWithLowBits(bits)
    if not candidates:
        return _("no running process has pid bits {bits}").format(bits=bits)
    if len(candidates) > 1:
        return _("pid bits {bits} match several processes: {pids}").format(bits=bits, pids=sorted(candidates))
    pid = candidates[0]
    uid = processUid(pid)
    if uid is None:
        return _("process {pid} has ended").format(pid=pid)
    if uid not in (serverUid, 0):
        return _(
            "process {pid} runs as uid {uid}; only the server's user (uid {serverUid}) or root may stop it"
        ).format(pid=pid, uid=uid, serverUid=serverUid)
    path = fifoPath(directory, "gbc", pid)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return _("process {pid} has no client FIFO {path}: a Kill must come from a Gobang client").format(
            pid=pid, path=path
        )
    if not stat.S_ISFIFO(info.st_mode):
        return _("{path} is not a FIFO").format(path=path)
    if info.st_uid != uid:
        return _("{path} belongs to uid {owner}, not to the user of process {pid} (uid {uid})").format(
            path=path, owner=info.st_uid, pid=pid, uid=uid
        )
    return None


def clientFifoFor(directory: Path, bits: int) -> tuple[Path, int]:
    """The one client FIFO whose pid has these low 16 bits, and that pid."""
    matches = []
    for path in directory.glob("gbc.*"):
        suffix = path.name[4:]
        if suffix.isdigit() and int(suffix) & 0xFFFF == bits:
            matches.append((path, int(suffix)))
    if not matches:
        raise Refused(_("no client FIFO gbc.* for pid {bits} in {directory}").format(bits=bits, directory=directory))
    if len(matches) > 1:
        names = sorted(match.name for match, _pid in matches)
        raise Refused(_("pid bits {bits} match several client FIFOs: {names}").format(bits=bits, names=names))
    return matches[0]
