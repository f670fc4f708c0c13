"""An uploaded archive checked and unpacked within its limits, or refused with the limit it broke.

A student hands in a ``.zip`` or a ``.tar.gz`` of their folder (told apart by their first bytes, not by a
name or a header). Before anything is written the archive's size is checked; while it is unpacked every
member is checked as it comes, and the expanded size is counted from the bytes actually written, never
from what the archive claims: a zip bomb is refused while it expands, not after. Refused are:

- an archive larger than ``size``, more than ``files`` members, more than ``expanded`` bytes unpacked;
- a path that leaves the folder (absolute, ``..``, a drive or a backslash), a link whose target leaves
  it (a symbolic link pointing out, a hard link to a path outside), a device file or a FIFO;
- an archive that is neither, or damaged; a folder without ``velhanet-run`` at its top (or at the top of
  its one folder: an archive of the folder itself is the folder).

Each refusal says which limit or rule, and its value (L{Refused}). Blocking (the service runs it in a
thread); no Twisted.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from velhanet.i18n import _, ngettext
from velhanet.sandbox.limits import MIB, formatSize

RUN_FILE = "velhanet-run"
CHUNK = 65536


@dataclass(frozen=True)
class UploadLimits:
    size: int = 16 * MIB
    """Bytes of the archive as uploaded."""
    files: int = 2000
    """Members (files, folders, links) in it."""
    expanded: int = 64 * MIB
    """Bytes of all its files unpacked."""


class Refused(Exception):
    """The archive is not taken: the line says which limit or rule, and its value."""


def kindOf(data: bytes) -> str:
    """``zip`` or ``tar.gz`` from the archive's first bytes; L{Refused} for anything else."""
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    raise Refused(_("neither a .zip nor a .tar.gz archive"))


def checkSize(size: int, limits: UploadLimits) -> None:
    if size > limits.size:
        raise Refused(
            _("the archive is {size}: more than the limit of {limit}").format(
                size=formatSize(size), limit=formatSize(limits.size)
            )
        )


def tooLargeText(limits: UploadLimits) -> str:
    """An upload refused while it arrived, larger than the limit."""
    return _("the archive is larger than the limit of {limit}").format(limit=formatSize(limits.size))


def safePath(name: str) -> PurePosixPath:
    """The member's path inside the folder; L{Refused} when it would leave it."""
    path = PurePosixPath(name)
    if "\\" in name or path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise Refused(_("{name}: a path that leaves the folder is refused").format(name=name))
    return path


def linkStaysInside(member: PurePosixPath, target: str) -> bool:
    """Whether a symbolic link at ``member`` pointing at ``target`` stays inside the folder."""
    if target.startswith("/") or "\\" in target:
        return False
    depth = len(member.parent.parts)
    for part in PurePosixPath(target).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return False
    return True


class Unpacker:
    """Writes one archive's members into ``into``, counting what it writes against the limits."""

    def __init__(self, into: Path, limits: UploadLimits) -> None:
        self.into, self.limits = into, limits
        self.files = self.written = 0

    def counted(self) -> None:
        self.files += 1
        if self.files > self.limits.files:
            raise Refused(
                ngettext(
                    "the archive holds more than {n} file: the limit",
                    "the archive holds more than {n} files: the limit",
                    self.limits.files,
                ).format(n=self.limits.files)
            )

    def file(self, path: PurePosixPath, source: IO[bytes], executable: bool) -> None:
        target = self.into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as out:
            for chunk in iter(lambda: source.read(CHUNK), b""):
                self.written += len(chunk)
                if self.written > self.limits.expanded:
                    raise Refused(
                        _("the archive expands to more than the limit of {limit}: refused while it expanded").format(
                            limit=formatSize(self.limits.expanded)
                        )
                    )
                out.write(chunk)
        os.chmod(target, 0o755 if executable else 0o644)

    def folder(self, path: PurePosixPath) -> None:
        (self.into / path).mkdir(parents=True, exist_ok=True)

    def link(self, path: PurePosixPath, target: str) -> None:
        if not linkStaysInside(path, target):
            raise Refused(_("{name}: a link out of the folder is refused").format(name=str(path)))
        where = self.into / path
        where.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, where)


def _zipMembers(data: bytes, unpacker: Unpacker) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            unpacker.counted()
            path = safePath(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                unpacker.link(path, archive.read(info)[:4096].decode("utf-8", "replace"))
            elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                raise Refused(_("{name}: a device file or FIFO is refused").format(name=info.filename))
            elif info.is_dir():
                unpacker.folder(path)
            else:
                with archive.open(info) as source:
                    unpacker.file(path, source, bool(mode & stat.S_IXUSR))


def _tarMembers(data: bytes, unpacker: Unpacker) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz") as archive:  # a stream: members as they come
        for member in archive:
            unpacker.counted()
            path = safePath(member.name)
            if member.issym():
                unpacker.link(path, member.linkname)
            elif member.islnk():
                inside = safePath(member.linkname)
                if not (unpacker.into / inside).is_file():
                    raise Refused(_("{name}: a link out of the folder is refused").format(name=member.name))
                unpacker.counted()
                with open(unpacker.into / inside, "rb") as original:
                    unpacker.file(path, original, bool(member.mode & stat.S_IXUSR))
            elif member.isdir():
                unpacker.folder(path)
            elif member.isfile():
                source = archive.extractfile(member)
                assert source is not None
                unpacker.file(path, source, bool(member.mode & stat.S_IXUSR))
            else:
                raise Refused(_("{name}: a device file or FIFO is refused").format(name=member.name))


def unpack(data: bytes, into: Path, limits: UploadLimits) -> Path:
    """Unpack ``data`` into the new folder ``into``; the folder a program runs from (``into``, or its one
    folder when the archive holds the folder itself). L{Refused} leaves nothing behind."""
    checkSize(len(data), limits)
    kind = kindOf(data)
    into.mkdir(parents=True)
    unpacker = Unpacker(into, limits)
    try:
        try:
            (_zipMembers if kind == "zip" else _tarMembers)(data, unpacker)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError, NotImplementedError) as error:
            raise Refused(_("the archive is damaged: {error}").format(error=error)) from None
        return runFolder(into)
    except Refused:
        shutil.rmtree(into, ignore_errors=True)
        raise


def runFolder(into: Path) -> Path:
    """The folder holding ``velhanet-run``: ``into``, or the one folder it holds."""
    if (into / RUN_FILE).is_file():
        return into
    entries = [entry for entry in into.iterdir() if not entry.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and (entries[0] / RUN_FILE).is_file():
        return entries[0]
    raise Refused(_("no {file} at the top of the folder (or of the one folder in the archive)").format(file=RUN_FILE))
