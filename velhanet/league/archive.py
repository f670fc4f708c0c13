"""Players travel to the workers as content-addressed archives: no shared file system needed.

The runner packs each player version's folder once (``pack``: a gzipped tar,
files in sorted order) and hands the bytes to Dask, which copies them to the
workers that need them; a worker unpacks each version once into its own cache
(``unpacked``), under the version's name, and every game there uses that copy
(the sandbox gives each game a private copy of it again).
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

CACHE = "velhanet-league-players"


def pack(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            archive.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def cacheRoot() -> Path:
    return Path(tempfile.gettempdir()) / f"{CACHE}-{os.getuid()}"


def unpacked(version: str, archive: bytes, root: Path | None = None) -> Path:
    """The folder of player version ``version`` on this machine, unpacked the first time it is asked for."""
    root = root or cacheRoot()
    target = root / version
    if target.is_dir():
        return target
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root))
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as bundle:
        bundle.extractall(staging, filter="data")  # no absolute paths, no links out, no devices
    try:
        staging.rename(target)  # atomic: two games of one worker never see half a folder
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)  # another game unpacked it first
    return target
