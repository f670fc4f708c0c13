"""Programs travel to the workers as content-addressed archives: no shared file system needed.

A run packs each program version's folder once (``pack``: a gzipped tar,
files in sorted order: a league's player, a class's submission) and hands the
bytes to Dask, which copies them to the workers that need them; a worker
unpacks each version once into its own cache (``unpacked``), under the
version's name, and every task there uses that copy (the sandbox gives each
program a private copy of it again).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path

CACHE = "velhanet-cluster-programs"


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
        bundle.extractall(staging, filter="data")  # no absolute paths, no links out, no devices
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
