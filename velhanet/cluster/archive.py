"""Programs travel to the workers as content-addressed archives: no shared file system needed.

A run packs each program version's folder once (``pack``: a gzipped tar,
files in sorted order: a league's player, a class's submission) and hands the
bytes to Dask, which copies them to the workers that need them; a worker
unpacks each version once into its own cache (``unpacked``), under the
version's name, and every task there uses that copy (the sandbox gives each
program a private copy of it again).
"""

from __future__ import annotations

import copy
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path

CACHE = "velhanet-cluster-programs"

HAS_FILTERS = hasattr(tarfile, "data_filter")
"""Python 3.11.4 added tar extraction filters (PEP 706); 3.11.0 to 3.11.3, Debian 12's among them, lack them."""


class UnsafeMember(tarfile.TarError):
    """A member that the ``data`` filter refuses: an absolute or escaping name or link, a device, a pipe."""


def extractData(bundle: tarfile.TarFile, destination: Path) -> None:
    """Extract ``bundle`` into ``destination`` under the rules of tarfile's ``data`` filter: nothing outside
    the destination, no links out of it, no devices or pipes, no set-id bits or others' write bits, no owner
    taken from the archive. A student's repository or folder is untrusted; on a Python without the filters
    the same rules are checked here, every member before anything is written."""
    if HAS_FILTERS:
        bundle.extractall(destination, filter="data")
        return
    root = os.path.realpath(destination)
    members = bundle.getmembers()
    links = {walked for member in members if member.issym() and (walked := _walked(member.name)) is not None}
    bundle.extractall(destination, members=[_dataMember(member, root, links) for member in members])


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def _walked(path: str, links: frozenset[str] | set[str] = frozenset()) -> str | None:
    """``path`` (relative, slashes) with its ``.`` and ``..`` taken as written; None if it goes through one of
    ``links`` (the archive's own symbolic links): the kernel follows those, and where they lead is not known
    until they are written, so a check made before anything is written must refuse such a path."""
    walked: list[str] = []
    for part in path.split("/"):
        if walked and "/".join(walked) in links:
            return None
        if part == "..":
            if walked:
                walked.pop()
        elif part not in ("", "."):
            walked.append(part)
    return "/".join(walked)


def _dataMember(member: tarfile.TarInfo, root: str, links: set[str]) -> tarfile.TarInfo:
    """A copy of ``member`` as the ``data`` filter would let it through; L{UnsafeMember} if it would not."""
    name = member.name.lstrip("/")
    if os.path.isabs(name) or not _inside(root, os.path.join(root, name)):
        raise UnsafeMember(f"{member.name!r} would be extracted outside the destination")
    if _walked(name, links) is None:
        raise UnsafeMember(f"{member.name!r} goes through a link of the archive")
    if member.isdev():
        raise UnsafeMember(f"{member.name!r} is a device or a pipe")
    if member.issym():
        if os.path.isabs(member.linkname):
            raise UnsafeMember(f"{member.name!r} links to the absolute path {member.linkname!r}")
        target = os.path.join(os.path.dirname(name), member.linkname)
        if not _inside(root, os.path.join(root, target)) or _walked(target, links) is None:
            raise UnsafeMember(f"{member.name!r} links outside the destination")
    if member.islnk():
        target = member.linkname.lstrip("/")
        if not _inside(root, os.path.join(root, target)) or _walked(target, links) in (None, *links):
            raise UnsafeMember(f"{member.name!r} links outside the destination")
    safe = copy.copy(member)
    safe.name = name
    safe.uid, safe.gid, safe.uname, safe.gname = os.geteuid(), os.getegid(), "", ""
    mode = member.mode & 0o755  # no set-id or sticky bits, nobody else writes
    if member.isreg() or member.islnk():
        mode |= 0o600
        if not mode & 0o100:
            mode &= ~0o011  # executable by others only if by its owner
    elif member.isdir():
        mode |= 0o700
    safe.mode = mode
    return safe


def pack(folder: Path, hidden: bool = True) -> bytes:
    """The folder as a gzipped tar, its files in sorted order (``hidden`` False: without the files and folders
    whose names begin with a dot, ``.git`` among them, as a student hands a folder in)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            if not hidden and any(part.startswith(".") for part in path.relative_to(folder).parts):
                continue
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def cacheRoot() -> Path:
    return Path(tempfile.gettempdir()) / f"{CACHE}-{os.getuid()}"


def unpacked(version: str, archive: bytes, root: Path | None = None) -> Path:
    """The folder of program version ``version`` on this machine, unpacked the first time it is asked for."""
    root = root or cacheRoot()
    target = root / version
    if target.is_dir():
        return target
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root))
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as bundle:
        extractData(bundle, staging)
    try:
        staging.rename(target)  # atomic: two tasks of one worker never see half a folder
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # another task unpacked it first
    return target


def folderVersion(folder: Path) -> str:
    """Twelve hex digits naming the folder's content: every file's relative path, executable bit and bytes."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        relative = path.relative_to(folder).as_posix()
        executable = bool(path.stat().st_mode & stat.S_IXUSR)
        digest.update(f"{relative}\0{int(executable)}\0{path.stat().st_size}\0".encode())
        with path.open("rb") as content:
            for block in iter(lambda: content.read(1 << 16), b""):
                digest.update(block)
    return digest.hexdigest()[:12]
