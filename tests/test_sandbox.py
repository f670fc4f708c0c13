"""The sandbox's parts alone: no bubblewrap, no namespace, no cgroup of the machine.

The command line it builds, the supervisor's last word, the packet filter
(run here through a small classic-BPF interpreter on crafted packets), the
cgroup layouts on a fake tree, the causes a student reads, and the
supervision's decisions from fake counters. ``tests/test_sandbox_hostile.py``
runs the real thing.
"""

from __future__ import annotations

import argparse
import io
import ipaddress
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.error import ProcessDone
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase, TestCase

import velhanet
from tests.reactorwatch import ReactorWatch
from velhanet.sandbox import availability, cgroups, jail, launch, network
from velhanet.sandbox.limits import (
    GIB,
    MIB,
    ProgramLimits,
    SandboxSettings,
    addSandboxArguments,
    formatSize,
    parseSeconds,
    parseSize,
    settingsFrom,
)
from velhanet.sandbox.monitor import Supervision, enforcementOf, rlimitOptions
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.sandbox.sandbox import Sandbox, SandboxUnavailable
from velhanet.sandbox.verdict import CPU, MEMORY, NETWORK, PROCESSES, Verdict, limitCause

ROOT = Path(__file__).resolve().parent.parent
ON_FD_3 = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3);"
    " os.execv('/bin/sh', ['sh', '-c', sys.argv[2], 'velhanet-supervisor', *sys.argv[3:]])"
)
"""``python -c ON_FD_3 FD SCRIPT COMMAND…``: the supervisor's script with its status descriptor 3 on FD."""


class LimitsTests(SynchronousTestCase):
    def test_sizesAndDurations(self) -> None:
        self.assertEqual(
            [parseSize(t) for t in ("512M", "2G", "1.5GiB", "65536", "64k")],
            [512 * MIB, 2 * GIB, int(1.5 * GIB), 65536, 64 * 1024],
        )
        self.assertEqual([parseSeconds(t) for t in ("20", "20s", "5m", "1.5h")], [20, 20, 300, 5400])
        for bad in ("", "lots", "-1M", "0"):
            self.assertRaises(ValueError, parseSize, bad)
        self.assertRaises(ValueError, parseSeconds, "0s")
        self.assertEqual(
            [formatSize(n) for n in (512 * MIB, 2 * GIB, 1536 * 1024, 300)],
            ["512 MiB", "2 GiB", "1.5 MiB", "300 bytes"],
        )

    def test_optionsAndTheirDefaultsInTheHelp(self) -> None:
        parser = argparse.ArgumentParser()
        addSandboxArguments(parser)
        help = parser.format_help()
        for option, default in (("--limit-memory", "2 GiB"), ("--limit-cpu", "600 s"), ("--limit-disk", "256 MiB")):
            self.assertIn(option, help)
            self.assertIn(f"(default: {default})", " ".join(help.split()))
        settings = settingsFrom(parser.parse_args(["--sandbox", "on", "--limit-memory", "256M", "--limit-cpu", "5"]))
        self.assertEqual((settings.mode, settings.limits.memory, settings.limits.cpu), ("on", 256 * MIB, 5.0))
        self.assertRaises(ValueError, settingsFrom, parser.parse_args(["--limit-processes", "0"]))


class JailTests(SynchronousTestCase):
    def argv(self, **kwargs: object) -> list[str]:
        return jail.bwrapArgv(jail.Jail(**kwargs), infoFd=4, blockFd=5, hostEnvironment={"PATH": "/usr/bin"})  # type: ignore[arg-type]

    def pairs(self, argv: list[str], option: str) -> list[tuple[str, str]]:
        return [(argv[i + 1], argv[i + 2]) for i, word in enumerate(argv) if word == option]

    def test_everyNamespaceNoCapabilityAReadOnlyRoot(self) -> None:
        argv = self.argv(command=["./bot", "--port", "1"])
        for option in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--as-pid-1"):
            self.assertIn(option, argv)
        self.assertEqual(argv[argv.index("--cap-drop") + 1], "ALL")
        self.assertEqual(argv[argv.index("--uid") + 1], str(jail.SANDBOX_UID))
        self.assertIn(("/usr", "/usr"), self.pairs(argv, "--ro-bind"))
        remount = argv.index("--remount-ro")
        self.assertEqual(argv[remount + 1], "/")
        self.assertLess(max(i for i, w in enumerate(argv) if w in ("--tmpfs", "--bind", "--ro-bind")), remount)
        self.assertEqual(argv[-3:], ["./bot", "--port", "1"])  # after the supervisor and its $0

    def test_secretsHiddenHomesAbsent(self) -> None:
        argv = self.argv(command=["true"])
        binds = self.pairs(argv, "--ro-bind")
        for secret in jail.SECRETS:
            if Path(secret).exists():
                self.assertIn(("/dev/null", secret), binds)
        mounted = {target for _, target in binds} | set(self.pairs(argv, "--bind"))
        for home in ("/home", "/root", str(ROOT)):
            self.assertNotIn(home, mounted)
        package = str(Path(velhanet.__file__).resolve().parent)
        self.assertIn((package, package), binds)  # what a python -m velhanet… player imports, read-only

    def test_folderIsAPrivateCopyOfTheDiskLimitsSize(self) -> None:
        folder = Path("/srv/class/ana")
        argv = self.argv(
            command=["python3", "player.py"], folder=folder, diskBytes=32 * MIB, shared=[Path("/srv/fifos")]
        )
        self.assertIn((str(folder), jail.SOURCE), self.pairs(argv, "--ro-bind"))
        tmpfs = [argv[i + 1] for i, word in enumerate(argv) if word == "--tmpfs"]
        self.assertIn(str(folder), tmpfs)
        sizes = [argv[i + 1] for i, word in enumerate(argv) if word == "--size"]
        self.assertEqual(sizes, [str(32 * MIB)] * 2)  # /tmp and the folder
        self.assertIn(("/srv/fifos", "/srv/fifos"), self.pairs(argv, "--bind"))
        environment = dict(self.pairs(argv, "--setenv"))
        self.assertEqual((environment["HOME"], environment["VELHANET_CWD"]), (str(folder), str(folder)))
        self.assertTrue(environment["PATH"].startswith(str(Path(sys.executable).parent)))

    def test_rlimitsWhenNoGroupEnforces(self) -> None:
        limits = ProgramLimits(memory=256 * MIB, cpu=5, processes=32, disk=16 * MIB)
        self.assertEqual(rlimitOptions(limits, withGroup=True), [f"--fsize={16 * MIB}"])
        fallback = rlimitOptions(limits, withGroup=False)
        self.assertEqual(fallback, [f"--fsize={16 * MIB}", f"--data={256 * MIB}", "--cpu=5:6", "--nproc=32"])
        argv = self.argv(command=["./bot"], rlimits=fallback)
        self.assertEqual(argv[-7:], ["prlimit", *fallback, "--", "./bot"])

    def test_supervisorsWord(self) -> None:
        self.assertEqual(jail.parseStatus("exit 0 left 2\n"), (0, 2, False))
        self.assertEqual(jail.parseStatus("exit 137 left 0"), (137, 0, False))
        self.assertEqual(jail.parseStatus("copyfailed\n"), (None, 0, True))
        self.assertEqual(jail.parseStatus(""), (None, 0, False))  # killed before it could say anything

    def test_standardInputOnlyForAProgramVelhanetTalksTo(self) -> None:
        self.assertNotIn(("VELHANET_STDIN", "1"), self.pairs(self.argv(command=["./bot"]), "--setenv"))
        self.assertIn(("VELHANET_STDIN", "1"), self.pairs(self.argv(command=["./engine"], stdin=True), "--setenv"))

    def test_supervisorPassesStandardInputThroughWhenAsked(self) -> None:
        """The supervisor itself, outside bwrap: without its last ``kill -1``, which only a PID namespace contains."""
        script = jail.SUPERVISOR.replace("kill -KILL -1 2>/dev/null", ":")
        self.assertNotEqual(script, jail.SUPERVISOR)
        for passed, expected in (("1", b"uci\n"), ("", b"")):
            status, statusEnd = os.pipe()
            self.addCleanup(os.close, status)
            done = subprocess.run(
                [sys.executable, "-c", ON_FD_3, str(statusEnd), script, "cat"],
                input=b"uci\n",
                capture_output=True,
                pass_fds=[statusEnd],
                env={"PATH": "/usr/bin:/bin", "VELHANET_CWD": "/tmp", "VELHANET_STDIN": passed},
                timeout=20,
            )
            os.close(statusEnd)
            self.assertEqual((done.returncode, done.stdout), (0, expected), done.stderr)
            self.assertEqual(jail.parseStatus(os.read(status, 1000).decode())[0], 0)  # outside, "left" counts the host

    def test_programFolder(self) -> None:
        cwd = ROOT
        self.assertEqual(
            jail.programFolder(["python3", "standins/hostile/snoop/player.py"], cwd), ROOT / "standins/hostile/snoop"
        )
        self.assertEqual(jail.programFolder([sys.executable, "-m", "velhanet.socha.example", "--port", "1"], cwd), None)
        self.assertEqual(jail.programFolder(["/usr/bin/env", "true"], cwd), None)


def runFilter(code: bytes, packet: bytes, packetType: int) -> int:
    """A classic-BPF interpreter for the instructions the filter uses: how many bytes it keeps."""
    program = [struct.unpack_from("HBBI", code, offset) for offset in range(0, len(code), 8)]
    a = x = pc = 0
    while True:
        op, jt, jf, k = program[pc]
        pc += 1
        if op == 0x30:  # ldb [k]
            a = packetType if k == network._SKF_PKTTYPE else packet[k]
        elif op == 0x20:  # ld [k]
            a = struct.unpack_from("!I", packet, k)[0]
        elif op == 0xB1:  # ldx 4*([k]&0xf)
            x = (packet[k] & 0x0F) * 4
        elif op == 0x50:  # ldb [x+k]
            a = packet[x + k]
        elif op == 0x74:
            a >>= k
        elif op == 0x54:
            a &= k
        elif op == 0x15:
            pc += jt if a == k else jf
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"opcode {op:#x}")


def ipv4(destination: str, protocol: int, transport: bytes, source: str = "127.0.0.1") -> bytes:
    header = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + len(transport),
        0,
        0,
        64,
        protocol,
        0,
        socket.inet_aton(source),
        socket.inet_aton(destination),
    )
    return header + transport


def tcp(port: int, flags: int) -> bytes:
    return struct.pack("!HHIIBBHHH", 40000, port, 0, 0, 0x50, flags, 0, 0, 0)


def ipv6(destination: str, protocol: int, transport: bytes) -> bytes:
    header = struct.pack(
        "!IHBB16s16s",
        0x60000000,
        len(transport),
        protocol,
        64,
        ipaddress.IPv6Address("::1").packed,
        ipaddress.IPv6Address(destination).packed,
    )
    return header + transport


class ChildTransport:
    """What a SandboxedProgram writes to its process."""

    def __init__(self) -> None:
        self.written: list[tuple[int, bytes]] = []
        self.stdinClosed = False

    def writeToChild(self, fd: int, data: bytes) -> None:
        self.written.append((fd, data))

    def closeStdin(self) -> None:
        self.stdinClosed = True


class ConversationTests(SynchronousTestCase):
    """A program spawned with a reader: its standard output goes to the reader, ``write`` to its input."""

    def test_outputToTheReaderInputFromWrite(self) -> None:
        read: list[bytes] = []
        program = SandboxedProgram(None, None, None, 100, reader=read.append)
        transport = ChildTransport()
        program.makeConnection(transport)
        program.write(b"uci\n")
        program.childDataReceived(1, b"id name fake\nuciok\n")
        program.childDataReceived(2, b"a warning\n")
        self.assertEqual(read, [b"id name fake\nuciok\n"])
        self.assertEqual(transport.written, [(0, b"uci\n")])
        self.assertIn(b"a warning", program.tail)
        program.closeStdin()
        self.assertTrue(transport.stdinClosed)
        program.write(b"stop\n")  # a late line after the end of its input is dropped
        program.processEnded(Failure(ProcessDone(0)))
        program.write(b"quit\n")  # it ended: nothing is written
        self.assertEqual(transport.written, [(0, b"uci\n")])
        self.assertEqual(self.successResultOf(program.ended).status, 0)

    def test_withoutAReaderTheOutputIsKept(self) -> None:
        program = SandboxedProgram(None, None, None, 100)
        program.makeConnection(ChildTransport())
        program.childDataReceived(1, b"hello\n")
        self.assertEqual(program.tail, b"hello\n")


class LastAttemptTests(SynchronousTestCase):
    def test_anAttemptJustBeforeTheEndIsInTheVerdict(self) -> None:
        """A program that tries a forbidden address and exits before the next look is told so all the same."""
        watch, kernel = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(watch.close)
        self.addCleanup(kernel.close)
        watch.setblocking(False)
        kernel.send(ipv4("198.18.0.9", 6, tcp(80, network.SYN)))
        supervision = Supervision(ProgramLimits(), None, [])
        supervision.pid, supervision.watch = os.getpid(), watch
        verdict = supervision.verdict(1)
        self.assertEqual(verdict.cause, "killed: connect to 198.18.0.9:80 refused: only the game's server is reachable")


class ForbiddenPacketTests(SynchronousTestCase):
    """Only what the program itself sent out of loopback passes the filter, and is named."""

    def setUp(self) -> None:
        self.code, count = network.forbiddenPacketFilter()
        self.assertEqual(len(self.code), 8 * count)

    def passes(self, packet: bytes, outgoing: bool = True) -> bool:
        return runFilter(self.code, packet, network.PACKET_OUTGOING if outgoing else 0) > 0

    def test_connectionsAndDatagramsOutOfLoopback(self) -> None:
        syn = ipv4("198.18.0.9", 6, tcp(80, network.SYN))
        self.assertTrue(self.passes(syn))
        self.assertEqual(network.Forbidden.parse(syn), network.Forbidden("tcp", "198.18.0.9", 80))
        self.assertEqual(
            network.Forbidden.parse(syn).cause(),  # type: ignore[union-attr]
            "connect to 198.18.0.9:80 refused: only the game's server is reachable",
        )
        datagram = ipv4("198.18.0.7", 17, struct.pack("!HHHH", 5000, 53, 8, 0))
        self.assertTrue(self.passes(datagram))
        self.assertIn("udp to 198.18.0.7:53 dropped", network.Forbidden.parse(datagram).cause())  # type: ignore[union-attr]
        v6 = ipv6("2001:db8::1", 6, tcp(443, network.SYN))
        self.assertTrue(self.passes(v6))
        self.assertEqual(network.Forbidden.parse(v6).where(), "[2001:db8::1]:443")  # type: ignore[union-attr]

    def test_gameTrafficAnswersAndBroadcastDropped(self) -> None:
        self.assertFalse(self.passes(ipv4("127.0.0.1", 6, tcp(13050, network.SYN))))  # the game's server
        self.assertFalse(self.passes(ipv4("127.0.0.5", 17, struct.pack("!HHHH", 1, 2, 8, 0))))
        self.assertFalse(self.passes(ipv4("198.18.0.9", 6, tcp(40000, network.SYN | network.ACK))))  # an answer
        self.assertFalse(self.passes(ipv4("198.18.0.9", 6, tcp(80, 0x04))))  # the kernel's RST
        self.assertFalse(self.passes(ipv4("198.18.0.9", 1, b"\x03\x03\x00\x00")))  # ICMP
        self.assertFalse(self.passes(ipv4("255.255.255.255", 17, struct.pack("!HHHH", 1, 20181, 8, 0))))
        self.assertFalse(self.passes(ipv6("::1", 6, tcp(13050, network.SYN))))
        self.assertFalse(self.passes(ipv4("198.18.0.9", 6, tcp(80, network.SYN)), outgoing=False))  # seen twice on lo


class ControlGroupTests(SynchronousTestCase):
    """Both layouts on a fake tree: limits written, counters read, the group and its parent removed."""

    limits = ProgramLimits(memory=256 * MIB, processes=32)

    def test_v1(self) -> None:
        root = Path(self.mktemp())
        for controller in ("memory", "pids", "cpuacct"):
            (root / controller).mkdir(parents=True)
            (root / controller / "cgroup.procs").write_text("")
        group = cgroups.createGroup("abc", self.limits, root)
        assert isinstance(group, cgroups.GroupV1)
        memory, pids, cpu = (group.directories[c] for c in ("memory", "pids", "cpuacct"))
        self.assertEqual(memory, root / "memory" / "velhanet" / "velhanet-abc")
        self.assertEqual((memory / "memory.limit_in_bytes").read_text(), f"{256 * MIB}\n")
        self.assertEqual((pids / "pids.max").read_text(), "32\n")
        (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
        (memory / "memory.max_usage_in_bytes").write_text("1000\n")
        (pids / "pids.events").write_text("max 3\n")
        (pids / "pids.current").write_text("5\n")
        (cpu / "cpuacct.usage").write_text("2500000000\n")
        usage = group.usage()
        self.assertEqual(
            (usage.cpuSeconds, usage.memoryPeak, usage.oomKills, usage.processLimitHits), (2.5, 1000, 1, 3)
        )
        # Busy (as a group is while its killed processes finish): tried again on the clock, never waited for.
        clock = Clock()
        cgroups.removeEventually(group, clock)
        self.assertTrue(memory.is_dir())
        self.assertEqual(len(clock.getDelayedCalls()), 1)
        for directory in (memory, pids, cpu):  # the kernel's files go with the directory; a fake tree's do not
            for child in directory.iterdir():
                child.unlink()
        clock.advance(cgroups.RETRY_SECONDS)
        self.assertEqual(clock.getDelayedCalls(), [])
        self.assertNotIn(group, cgroups._lingering)
        self.assertEqual(
            [list((root / c).iterdir()) for c in ("memory", "pids", "cpuacct")],
            [[root / c / "cgroup.procs"] for c in ("memory", "pids", "cpuacct")],
        )

    def test_v2AndNone(self) -> None:
        root = Path(self.mktemp())
        root.mkdir()
        (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        group = cgroups.createGroup("abc", self.limits, root)
        assert isinstance(group, cgroups.GroupV2)
        directory = group.directories["unified"]
        self.assertEqual((directory / "memory.max").read_text(), f"{256 * MIB}\n")
        (directory / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1\n")
        (directory / "memory.events").write_text("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n")
        (directory / "pids.events").write_text("max 0\n")
        usage = group.usage()
        self.assertEqual((usage.cpuSeconds, usage.oomKills, usage.processLimitHits), (1.5, 1, 0))
        self.assertIn("cgroup v2", enforcementOf(group, self.limits))
        empty = Path(self.mktemp())
        empty.mkdir()
        self.assertIsNone(cgroups.createGroup("abc", self.limits, empty))  # no hierarchy at all: setrlimit
        self.assertIn("setrlimit", enforcementOf(None, self.limits))


class FakeGroup(cgroups.ControlGroup):
    def __init__(self) -> None:
        super().__init__({"unified": Path("/nowhere")})
        self.counters = cgroups.Usage()

    def usage(self) -> cgroups.Usage:
        return self.counters


class SupervisionTests(SynchronousTestCase):
    """When the watcher stops a program, and what it says then."""

    limits = ProgramLimits(memory=256 * MIB, cpu=5, processes=32, disk=16 * MIB, output=64 * 1024)

    def supervised(self) -> tuple[Supervision, FakeGroup]:
        group = FakeGroup()
        supervision = Supervision(self.limits, group, [])
        supervision.pid = 1
        return supervision, group

    def test_eachCounterItsCause(self) -> None:
        for counters, limit in (
            (cgroups.Usage(oomKills=1), MEMORY),
            (cgroups.Usage(processLimitHits=1), PROCESSES),
            (cgroups.Usage(cpuSeconds=5.0), CPU),
        ):
            supervision, group = self.supervised()
            self.assertFalse(supervision.check())
            group.counters = counters
            self.assertTrue(supervision.check())
            verdict = supervision.verdict(None)
            self.assertEqual((verdict.limit, verdict.cause), (limit, limitCause(limit, self.limits)))
            self.assertTrue(verdict.brokeALimit)
        self.assertEqual(limitCause(MEMORY, self.limits), "killed: memory limit 256 MiB exceeded")
        self.assertEqual(limitCause(PROCESSES, self.limits), "killed: more than 32 processes")
        self.assertEqual(limitCause(CPU, self.limits), "killed: 5 s of CPU used")

    def test_aForbiddenConnectionStopsItAnameLookupIsOnlyTold(self) -> None:
        supervision, group = self.supervised()
        inside, outside = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(inside.close)
        self.addCleanup(outside.close)
        outside.setblocking(False)
        supervision.watch = outside
        inside.send(ipv4("198.18.0.53", 17, struct.pack("!HHHH", 5000, 53, 8, 0)))
        self.assertFalse(supervision.check())
        inside.send(ipv4("198.18.0.9", 6, tcp(80, network.SYN)))
        inside.send(ipv4("198.18.0.9", 6, tcp(80, network.SYN)))  # a retry: named once
        self.assertTrue(supervision.check())
        verdict = supervision.verdict(None)
        self.assertEqual(verdict.limit, NETWORK)
        self.assertEqual(verdict.cause, "killed: connect to 198.18.0.9:80 refused: only the game's server is reachable")
        self.assertEqual(verdict.notes(), ["udp to 198.18.0.53:53 dropped: only the game's server is reachable"])

    def test_exitStatusesOfTheFallbackAndNotes(self) -> None:
        supervision = Supervision(self.limits, None, [])
        supervision.pid = 1
        self.assertEqual(supervision.verdict(128 + 24).limit, CPU)  # SIGXCPU from setrlimit
        supervision = Supervision(self.limits, None, [])
        verdict = supervision.verdict(1, tail=b"Traceback ...\nMemoryError\n")
        self.assertEqual(verdict.cause, "memory limit 256 MiB reached: an allocation was refused")
        verdict = Supervision(self.limits, None, []).verdict(0, leftovers=2, outputCut=64 * 1024)
        self.assertFalse(verdict.brokeALimit)
        self.assertEqual(verdict.summary(), "output cut at 64 KiB; left 2 processes running after it exited (killed)")
        self.assertEqual(Verdict.fromDict(verdict.asDict()).summary(), verdict.summary())
        copy = Supervision(self.limits, None, []).verdict(None, copyFailed=True)
        self.assertEqual(copy.cause, "not started: its folder does not fit in the disk limit of 16 MiB")


class AvailabilityTests(SynchronousTestCase):
    """auto: a one-line warning; on: refused with that line; off: nothing asked."""

    def test_modes(self) -> None:
        missing = availability.Availability(False, "bwrap is not installed: install bubblewrap (…)")
        self.patch(availability, "probeBubblewrap", lambda: missing)
        self.patch(sys.modules["velhanet.sandbox.sandbox"], "probeBubblewrap", lambda: missing)
        said: list[str] = []
        auto = Sandbox.forCommand(SandboxSettings("auto"), said.append)
        self.assertFalse(auto.active)
        self.assertEqual(
            said, ["warning: programs run without a sandbox: bwrap is not installed: install bubblewrap (…)"]
        )
        with self.assertRaises(SandboxUnavailable) as refused:
            Sandbox.forCommand(SandboxSettings("on"), said.append)
        self.assertIn("--sandbox on: bwrap is not installed", str(refused.exception))
        self.assertEqual(
            Sandbox.forCommand(SandboxSettings("off"), said.append).describe(), "no sandbox (--sandbox off)"
        )
        self.assertEqual(len(said), 1)

    def test_aMissingBwrapIsSaidWithHowToInstallIt(self) -> None:
        self.patch(availability.shutil, "which", lambda name: None)
        availability.probeBubblewrap.cache_clear()
        self.addCleanup(availability.probeBubblewrap.cache_clear)
        found = availability.probeBubblewrap()
        self.assertFalse(found.works)
        self.assertIn("apt-get install bubblewrap", found.problem)


class NetworkSetUpTests(TestCase):
    """The network of a sandboxed program is made off the reactor's thread, which keeps answering meanwhile."""

    timeout = 120

    def test_theReactorAnswersWhileASandboxsNetworkIsMade(self) -> Deferred[None]:
        """The set-up is made slow on purpose (half a second before the routes, as a slow bwrap would be):
        the reactor ticks every 10 ms all along, its own thread missing no more than a few ticks, and the
        program then runs in its network as usual."""
        sandbox = Sandbox.forCommand(SandboxSettings("on"), say=lambda line: None)
        slowRoutes = network.routeEverythingToLoopback
        setUpThreads: list[str] = []

        def routeSlowly() -> None:
            setUpThreads.append(threading.current_thread().name)
            time.sleep(0.5)
            slowRoutes()

        self.patch(launch, "routeEverythingToLoopback", routeSlowly)
        watch = ReactorWatch(reactor)
        watch.start()
        self.addCleanup(watch.stop)
        output = io.BytesIO()

        async def run() -> None:
            program = spawn(sandbox, reactor, ["/bin/sh", "-c", "echo started"], output=output)
            began = reactor.seconds()
            await program.ready
            madeIn = reactor.seconds() - began
            verdict = await program.ended
            watch.stop()
            self.assertEqual(verdict.status, 0)
            self.assertIn(b"started", program.tail)
            self.assertEqual(len(setUpThreads), 1)
            self.assertTrue(setUpThreads[0].startswith("sandbox-setup-"), setUpThreads)
            self.assertGreaterEqual(madeIn, 0.5)
            during = [tick for tick, _ in watch.ticks if began <= tick <= began + madeIn]
            self.assertGreater(len(during), 25, "it ticked while the network was made")
            self.assertLessEqual(watch.missed(), 5, f"longest stall {watch.longest():.3f} s")

        return Deferred.fromCoroutine(run())
