"""Hostile writers against the Gobang server's FIFOs (issue 13): Kill claims and planted client FIFOs.

The server FIFO is writable by everyone (mode 0622), so the pid inside a
word is only a claim. These tests run the real service on real FIFOs in a
temporary directory; words come from real processes where the proof
depends on who runs them. Tests that need a second user run a process as
``nobody`` (uid 65534), which only root can do.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twisted.internet import reactor
from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import deferLater
from twisted.trial.unittest import TestCase

from velhanet.gobang import fifo, fifotransport
from velhanet.gobang.service import GobangService
from velhanet.gobang.wire import ClientOp, ClientWord, encodeClient

from .test_gobang import serverOptions, stopIfRunning

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534
NEEDS_ROOT = None if os.geteuid() == 0 else "needs root, to run a process as a second user"
COMPILER = shutil.which("cc") or shutil.which("gcc")
NEEDS_ROOT_AND_CC = NEEDS_ROOT or (None if COMPILER else "needs a C compiler, for a client another user can run")


def agentCommand(directory: Path, serverPid: int, opcode: int) -> list[str]:
    return [sys.executable, "-m", "velhanet.checks.gobang.agent", str(directory), str(serverPid), str(opcode)]


class KillProofTests(TestCase):
    """Opcode 15 stops the server only when the claimed pid is proven (docs/security.md)."""

    timeout = 60

    def setUp(self) -> None:
        # Like /tmp: every user's clients make their FIFOs here (trial's own temp dirs are private).
        self.dir = Path(tempfile.mkdtemp(prefix="velhanet-kill-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.dir.chmod(0o1777)
        self.service = GobangService(serverOptions(self.dir), reactor)
        self.stops: list[str] = []
        self.service.lobby.stopServer = lambda: self.stops.append("stopped")  # never stop trial's reactor
        self.refusals: list[str | None] = []
        original = self.service.killRefusal

        def recorded(bits: int) -> str | None:
            refusal = original(bits)
            self.refusals.append(refusal)
            return refusal

        self.service.lobby.killRefusal = recorded
        self.service.startService()
        self.addCleanup(stopIfRunning, self.service)

    def spawn(self, command: list[str], user: int | None = None) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT), GOBANG_AGENT_TIMEOUT="20"),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
        # cleanups run last added first: kill (a no-op once the process has exited), then reap it
        self.addCleanup(lambda: process.wait())
        self.addCleanup(process.kill)
        return process

    @inlineCallbacks
    def untilDecided(self, count: int = 1):  # type: ignore[no-untyped-def]
        for _ in range(200):
            if len(self.refusals) >= count:
                return
            yield deferLater(reactor, 0.05, lambda: None)
        self.fail("the server never handled the Kill word")

    def writeWord(self, word: ClientWord) -> None:
        """Write one word into the server FIFO, as any local user can."""
        fd = os.open(self.service.path, os.O_WRONLY | os.O_NONBLOCK)  # type: ignore[arg-type]
        try:
            os.write(fd, encodeClient(word, self.service.order))
        finally:
            os.close(fd)

    @inlineCallbacks
    def test_forgedPidOfARootProcess(self):
        """The reported attack: Kill with the pid of a root process that is no Gobang client."""
        self.writeWord(ClientWord(1, ClientOp.KILL))  # pid 1 runs as root
        yield self.untilDecided()
        self.assertEqual(self.stops, [])
        self.assertIn("no client FIFO", self.refusals[0] or "")

    @inlineCallbacks
    def test_clientOfTheServersUserMayKill(self):
        agent = self.spawn(agentCommand(self.dir, os.getpid(), ClientOp.KILL))
        yield self.untilDecided()
        self.assertEqual(self.refusals, [None])
        self.assertEqual(self.stops, ["stopped"])
        agent.kill()

    @inlineCallbacks
    def test_killNamingAPlayerIsForgedUnlessProven(self):
        """A Kill naming a signed-on player (whose FIFO name is gone after the first answer) proves nothing:
        anyone who can write the server FIFO can put that pid in a word. Before: the server stopped."""
        black = self.spawn(agentCommand(self.dir, os.getpid(), ClientOp.SIGNON_BLACK))
        for _ in range(200):
            if black.pid & 0xFFFF in self.service.lobby.bySender:
                break
            yield deferLater(reactor, 0.05, lambda: None)
        for _ in range(200):
            if not fifo.fifoPath(self.dir, "gbc", black.pid).exists():
                break
            yield deferLater(reactor, 0.05, lambda: None)
        self.writeWord(ClientWord(black.pid & 0xFFFF, ClientOp.KILL))
        yield self.untilDecided()
        self.assertEqual(self.stops, [])
        self.assertIn("has no client FIFO", self.refusals[0] or "")

    @inlineCallbacks
    def test_anotherUserCannotBorrowARootPid(self):
        """A FIFO named after a root process but made by another user proves nothing."""
        planted = fifo.fifoPath(self.dir, "gbc", 1)
        self.spawn(["mkfifo", "-m", "622", str(planted)], user=NOBODY).wait()
        self.assertEqual(planted.lstat().st_uid, NOBODY)
        self.writeWord(ClientWord(1, ClientOp.KILL))
        yield self.untilDecided()
        self.assertEqual(self.stops, [])
        self.assertIn("belongs to uid 65534", self.refusals[0] or "")

    test_anotherUserCannotBorrowARootPid.skip = NEEDS_ROOT  # type: ignore[attr-defined]

    @inlineCallbacks
    def test_anotherUsersClientCannotKill(self):
        """The C test client, run by ``nobody``: its own FIFO, its own pid, but not the server's user."""
        assert COMPILER is not None
        binary = self.dir / "gobang_client"
        subprocess.run([COMPILER, "-O", "-o", str(binary), str(ROOT / "tests" / "gobang_client.c")], check=True)
        client = self.spawn([str(binary), str(self.dir), str(os.getpid()), str(int(ClientOp.KILL))], user=NOBODY)
        yield self.untilDecided()
        self.assertEqual(self.stops, [])
        self.assertIn(f"process {client.pid} runs as uid {NOBODY}", self.refusals[0] or "")
        self.assertEqual(fifo.fifoPath(self.dir, "gbc", client.pid).lstat().st_uid, NOBODY)
        client.kill()

    test_anotherUsersClientCannotKill.skip = NEEDS_ROOT_AND_CC  # type: ignore[attr-defined]


class PlantedClientFifoTests(TestCase):
    """Signons whose client FIFO is not what it should be: refused, nothing written, the server goes on."""

    timeout = 60

    def setUp(self) -> None:
        self.dir = Path(self.mktemp()).resolve()
        self.dir.mkdir()
        self.service = GobangService(serverOptions(self.dir), reactor)
        self.service.startService()
        self.addCleanup(stopIfRunning, self.service)
        self.sleeper = subprocess.Popen(["sleep", "60"])  # a live process whose pid the signon claims
        self.addCleanup(self.sleeper.wait)
        self.addCleanup(self.sleeper.kill)

    def signon(self) -> None:
        fd = os.open(self.service.path, os.O_WRONLY | os.O_NONBLOCK)  # type: ignore[arg-type]
        try:
            os.write(fd, encodeClient(ClientWord(self.sleeper.pid & 0xFFFF, ClientOp.SIGNON_BLACK), self.service.order))
        finally:
            os.close(fd)

    @inlineCallbacks
    def assertRefused(self):
        self.signon()
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            yield deferLater(reactor, 0.05, lambda: None)
        self.assertEqual(self.service.lobby.bySender, {})
        self.assertEqual(self.service.lobby.games, {})
        self.assertTrue(self.service.running)

    @inlineCallbacks
    def test_symlinkToAnotherFile(self):
        victim = self.dir / "victim"
        victim.write_bytes(b"")
        fifo.fifoPath(self.dir, "gbc", self.sleeper.pid).symlink_to(victim)
        yield self.assertRefused()
        self.assertEqual(victim.read_bytes(), b"")  # the server wrote nothing through the link

    @inlineCallbacks
    def test_regularFile(self):
        planted = fifo.fifoPath(self.dir, "gbc", self.sleeper.pid)
        planted.write_bytes(b"")
        yield self.assertRefused()
        self.assertEqual(planted.read_bytes(), b"")

    @inlineCallbacks
    def test_anotherUsersFifo(self):
        """A FIFO owned by another user than the process the signon names."""
        planted = fifo.fifoPath(self.dir, "gbc", self.sleeper.pid)
        os.mkfifo(planted, 0o622)
        os.chown(planted, NOBODY, NOBODY)
        reader = os.open(planted, os.O_RDONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, reader)
        yield self.assertRefused()
        self.assertEqual(os.read(reader, 16), b"")  # nothing was written into it (and no writer is left)

    test_anotherUsersFifo.skip = NEEDS_ROOT  # type: ignore[attr-defined]


class FullServerFifoTests(TestCase):
    """A writer that keeps the server FIFO full makes an honest client's word wait, never fail.

    Before: the client's non-blocking write got EAGAIN and it quit with "The server is gone".
    """

    timeout = 20

    @inlineCallbacks
    def test_wordWaitsForRoom(self):
        directory = Path(self.mktemp()).resolve()
        directory.mkdir()
        path = directory / "gbs.00001"
        os.mkfifo(path)
        reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, reader)
        flooder = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        self.addCleanup(os.close, flooder)
        filled = 0
        try:
            while True:
                filled += os.write(flooder, b"\xff" * 4096)
        except BlockingIOError:
            pass
        lost: list[str] = []
        writer = fifotransport.FifoWriter(fifo.openForWriting(path), lambda: lost.append("gone"), reactor=reactor)
        self.addCleanup(writer.discard)
        writer.writeNow(b"WORD")  # the pipe is full: buffered
        yield deferLater(reactor, 0.2, lambda: None)
        self.assertEqual(lost, [])
        received = b""
        for _ in range(100):
            with contextlib.suppress(BlockingIOError):
                received += os.read(reader, 65536)
            if received.endswith(b"WORD"):
                break
            yield deferLater(reactor, 0.02, lambda: None)
        self.assertEqual(len(received), filled + 4)
        self.assertTrue(received.endswith(b"WORD"))
        self.assertEqual(lost, [])
