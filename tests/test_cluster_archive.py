"""Untrusted archives extracted under the ``data`` filter's rules, on every Python 3.11.

A student's git repository is exported as a tar and unpacked (``grading.submissions``), and so is every
program a cluster's worker receives (``cluster.archive.unpacked``). Python 3.11.4 added tarfile's
extraction filters; Debian 12's Python 3.11.2 lacks them and failed every such grading with "unexpected
keyword argument 'filter'". ``extractData`` checks the same rules itself there: these tests run each case
with the filters (where this Python has them) and with velhanet's own checks, and compare the trees.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from velhanet.cluster import archive


def tarOf(*members: tuple[str, bytes, str, int]) -> bytes:
    """A tar of ``(name, type, link or content, mode)`` members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as bundle:
        for name, kind, what, mode in members:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = kind, mode, 4242, 4242
            data = b""
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = what
            elif kind == tarfile.REGTYPE:
                data = what.encode()
                info.size = len(data)
            bundle.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


WELL_FORMED = tarOf(
    ("src", tarfile.DIRTYPE, "", 0o777),
    ("src/player.py", tarfile.REGTYPE, "print('hi')\n", 0o4777),  # set-uid and writable by all: neither kept
    ("src/notes.txt", tarfile.REGTYPE, "notes\n", 0o640),
    ("/absolute.txt", tarfile.REGTYPE, "stripped of its slash\n", 0o644),
    ("run", tarfile.SYMTYPE, "src/player.py", 0o777),
    ("src/up", tarfile.SYMTYPE, "../run", 0o777),
    ("copy.py", tarfile.LNKTYPE, "src/player.py", 0o755),  # the same file: the last mode set holds
)

ESCAPES = {
    "a parent's file": tarOf(("../escaped.txt", tarfile.REGTYPE, "out\n", 0o644)),
    "a parent's file, further down": tarOf(("src/../../escaped.txt", tarfile.REGTYPE, "out\n", 0o644)),
    "a link to an absolute path": tarOf(("passwd", tarfile.SYMTYPE, "/etc/passwd", 0o777)),
    "a link out": tarOf(("out", tarfile.SYMTYPE, "../../escaped.txt", 0o777)),
    "a hard link out": tarOf(("out", tarfile.LNKTYPE, "../escaped.txt", 0o644)),
    "a path through a link of the archive": tarOf(
        ("sub", tarfile.SYMTYPE, ".", 0o777), ("sub/../escaped.txt", tarfile.REGTYPE, "out\n", 0o644)
    ),
    "a link through a link of the archive": tarOf(
        ("sub", tarfile.SYMTYPE, ".", 0o777), ("out", tarfile.SYMTYPE, "sub/../escaped.txt", 0o777)
    ),
    "a hard link to a link of the archive": tarOf(
        ("sub", tarfile.SYMTYPE, "../escaped.txt", 0o777), ("hard", tarfile.LNKTYPE, "sub", 0o644)
    ),
    "a pipe": tarOf(("pipe", tarfile.FIFOTYPE, "", 0o644)),
    "a device": tarOf(("null", tarfile.CHRTYPE, "", 0o666)),
}


def treeOf(root: Path) -> list[tuple[str, str, int, str]]:
    """Every path under ``root``: its kind, permission bits, and link or content."""
    found = []
    for path in sorted(root.rglob("*")):
        mode = path.lstat().st_mode
        relative = path.relative_to(root).as_posix()
        if stat.S_ISLNK(mode):
            found.append((relative, "link", 0, os.readlink(path)))
        elif stat.S_ISDIR(mode):
            found.append((relative, "dir", stat.S_IMODE(mode), ""))
        else:
            found.append((relative, "file", stat.S_IMODE(mode), path.read_text()))
    return found


class ExtractDataTests(SynchronousTestCase):
    def extract(self, data: bytes, filters: bool) -> Path:
        """``data`` extracted into a fresh folder, with tarfile's filters or with velhanet's own checks."""
        self.patch(archive, "HAS_FILTERS", filters)
        destination = Path(self.mktemp()) / "in"
        destination.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as bundle:
            archive.extractData(bundle, destination)
        return destination

    def ways(self) -> list[bool]:
        """velhanet's own checks always; tarfile's filters too where this Python has them."""
        return [False, True] if hasattr(tarfile, "data_filter") else [False]

    def test_aWellFormedTreeAsTheDataFilterLeavesIt(self) -> None:
        ours = self.extract(WELL_FORMED, filters=False)
        tree = treeOf(ours)
        self.assertEqual(
            tree,
            [
                ("absolute.txt", "file", 0o644, "stripped of its slash\n"),
                ("copy.py", "file", 0o755, "print('hi')\n"),
                ("run", "link", 0, "src/player.py"),
                ("src", "dir", 0o755, ""),
                ("src/notes.txt", "file", 0o640, "notes\n"),
                ("src/player.py", "file", 0o755, "print('hi')\n"),
                ("src/up", "link", 0, "../run"),
            ],
        )
        owners = {(ours / name).lstat().st_uid for name, *_ in tree}
        self.assertEqual(owners, {os.geteuid()})  # never the archive's 4242, though root extracts it
        if hasattr(tarfile, "data_filter"):
            self.assertEqual(treeOf(self.extract(WELL_FORMED, filters=True)), tree)

    def test_whatWouldEscapeIsRefusedAndNothingWritten(self) -> None:
        for filters in self.ways():
            for what, data in ESCAPES.items():
                parent = self.extract(tarOf(), filters).parent  # an empty destination, to see what lands beside it
                destination = parent / "in"
                with tarfile.open(fileobj=io.BytesIO(data)) as bundle:
                    self.assertRaises(tarfile.TarError, archive.extractData, bundle, destination)
                self.assertEqual(sorted(p.name for p in parent.iterdir()), ["in"], (what, filters))
                if not filters:  # velhanet's checks refuse before anything is written
                    self.assertEqual(list(destination.iterdir()), [], what)
