"""The twistd plugin, its options, the service it makes, and real peers playing over loopback."""

from __future__ import annotations

import re
import signal
import socket
import struct
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, inlineCallbacks
from twisted.internet.error import ProcessTerminated
from twisted.internet.protocol import ProcessProtocol
from twisted.internet.testing import MemoryReactorClock
from twisted.logger import capturedLogs, formatEvent
from twisted.plugin import IPlugin, getPlugins
from twisted.python import usage
from twisted.python.failure import Failure
from twisted.trial.unittest import SynchronousTestCase, TestCase

from velhanet.velha import service as serviceModule
from velhanet.velha import wire
from velhanet.velha.service import VelhaService, broadcastAddresses, logTrace
from velhanet.velha.tap import Options, makeService

from .processes import ENVIRONMENT, ROOT, twistd

SERIES_OVER = re.compile(r"series (won|lost|draw) \d-\d")


class OptionsTests(SynchronousTestCase):
    def parse(self, *args: str) -> Options:
        options = Options()
        options.parseOptions(list(args))
        return options

    def test_defaults(self) -> None:
        options = self.parse("--nick", "Bo")
        self.assertEqual(options["port"], 20181)
        self.assertEqual(options["accept"], "ask")
        self.assertEqual(options["announce"], [])
        self.assertEqual(options["log-file"], "velha-Bo.log")

    def test_botAcceptsByDefault(self) -> None:
        self.assertEqual(self.parse("--nick", "Bo", "--bot")["accept"], "always")
        self.assertEqual(self.parse("--nick", "Bo", "--bot", "--accept", "never")["accept"], "never")

    def test_announceList(self) -> None:
        options = self.parse("--nick", "Bo", "--announce", "127.0.0.1, 127.0.0.2")
        self.assertEqual(options["announce"], ["127.0.0.1", "127.0.0.2"])

    def test_badNicksRefused(self) -> None:
        for nick in ("a|b", "x" * 21, "Zé"):
            self.assertRaises(usage.UsageError, self.parse, "--nick", nick)
        self.assertRaises(usage.UsageError, self.parse)
        self.assertRaises(usage.UsageError, self.parse, "--nick", "Bo", "--accept", "maybe")

    def test_makeService(self) -> None:
        """The service listens where the options say, announces there, and says goodbye on stop."""
        fake = UdpReactor()
        options = self.parse("--nick", "Bo", "--bot", "--port", "30303", "--interface", "127.0.0.9")
        options["announce"] = ["127.0.0.8"]
        service = makeService(options, reactor=fake)
        self.assertIsInstance(service, VelhaService)
        service.startService()
        ((port, protocol, interface),) = fake.udp
        self.assertEqual((port, interface), (30303, "127.0.0.9"))
        self.assertIs(protocol, service.peer.datagrams)  # type: ignore[union-attr]
        self.assertTrue(fake.transport.broadcast)
        self.assertEqual(fake.transport.written, [(b"01007Bo", ("127.0.0.8", 30303))])
        protocol.datagramReceived(b"01008Ana", ("127.0.0.8", 30303))  # the peer answers through it
        self.assertEqual(fake.transport.written[-1], (b"02007Bo", ("127.0.0.8", 30303)))
        service.stopService()
        self.assertEqual(fake.transport.written[-1], (b"03007Bo", ("127.0.0.8", 30303)))
        self.assertTrue(fake.transport.stopped)
        self.assertEqual(fake.getDelayedCalls(), [])

    def test_broadcastAddresses(self) -> None:
        """Every interface's broadcast address once, after 255.255.255.255; interfaces without one skipped."""
        brd = {"eth0": "198.18.0.255", "eth1": "198.18.0.255", "wlan0": "198.18.0.127", "tun0": "0.0.0.0"}

        def ioctl(fd: int, request: int, arg: bytes) -> bytes:
            self.assertEqual(request, serviceModule.SIOCGIFBRDADDR)
            name = arg.rstrip(b"\0").decode()
            if name not in brd:
                raise OSError(99, "no broadcast address")  # as for lo
            return arg[:16] + struct.pack("HH4s", socket.AF_INET, 0, socket.inet_aton(brd[name])) + arg[24:]

        names = ["lo", "eth0", "eth1", "wlan0", "tun0"]
        self.patch(serviceModule.socket, "if_nameindex", lambda: list(enumerate(names, 1)))
        self.patch(serviceModule.fcntl, "ioctl", ioctl)
        self.assertEqual(broadcastAddresses(), ["255.255.255.255", "198.18.0.255", "198.18.0.127"])

    def test_broadcastAddressesWithoutInterfaces(self) -> None:
        def noInterfaces() -> list[tuple[int, str]]:
            raise OSError("no interface list here")

        self.patch(serviceModule.socket, "if_nameindex", noInterfaces)
        self.assertEqual(broadcastAddresses(), ["255.255.255.255"])

    def test_traceLinesAsBefore(self) -> None:
        """The bot's trace line, word for word as before the tracers were shared."""
        with capturedLogs() as events:
            logTrace("udp")("out", "198.18.0.2", b"04007Bo", wire.Invite("Bo"))
            logTrace("tcp")("in", "Ana", b"070061\n", wire.MatchStart(1))
        self.assertEqual(
            [formatEvent(event) for event in events],
            [f"-> udp 198.18.0.2 b'04007Bo' {wire.Invite('Bo')}", f"<- tcp Ana b'070061\\n' {wire.MatchStart(1)}"],
        )
        self.assertEqual(events[0]["log_namespace"], "velhanet.velha.service.VelhaService")


class FakeUdpTransport:
    def __init__(self) -> None:
        self.written: list[tuple[bytes, tuple[str, int]]] = []
        self.broadcast = False
        self.stopped = False

    def write(self, data: bytes, addr: tuple[str, int]) -> None:
        self.written.append((data, addr))

    def setBroadcastAllowed(self, enabled: bool) -> None:
        self.broadcast = enabled

    def stopListening(self) -> None:
        self.stopped = True


class UdpReactor(MemoryReactorClock):
    """A memory reactor that also takes one UDP listener (``MemoryReactor`` has no ``listenUDP``)."""

    def __init__(self) -> None:
        super().__init__()
        self.udp: list[tuple[int, Any, str]] = []
        self.transport = FakeUdpTransport()

    def listenUDP(self, port: int, protocol: Any, interface: str = "", maxPacketSize: int = 8192) -> FakeUdpTransport:
        self.udp.append((port, protocol, interface))
        protocol.makeConnection(self.transport)
        return self.transport


class PluginTests(SynchronousTestCase):
    def test_velhaPluginRegistered(self) -> None:
        from twisted.application.service import IServiceMaker

        names = {p.tapname: p for p in getPlugins(IServiceMaker) if IPlugin.providedBy(p)}
        self.assertIn("velha", names)
        self.assertEqual(names["velha"].options, Options)


def freeUdpPort(*hosts: str) -> int:
    """A UDP port the OS gives us on the first of ``hosts`` that is free on all of them (peers share it)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as first:
            first.bind((hosts[0], 0))
            port = int(first.getsockname()[1])
            try:
                for host in hosts[1:]:
                    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
                        other.bind((host, port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no UDP port free on all of {hosts}")


class ChildDied(AssertionError):
    """A peer exited while the test waited for it."""


class Peer(ProcessProtocol):
    """One ``twistd -n velha`` child logging to standard output: waits end the moment it dies."""

    def __init__(self, testCase: TestCase, name: str, *args: str) -> None:
        self.name = name
        self.output = ""
        self.waiting: list[tuple[re.Pattern[str], int, Deferred[None]]] = []
        self.ended: Deferred[BaseException] = Deferred()
        """Fires with why the peer ended (``ProcessDone`` or ``ProcessTerminated``)."""
        self.reason: Failure | None = None
        command = twistd("velha", *args)
        reactor.spawnProcess(self, command[0], command, env=ENVIRONMENT, path=str(ROOT))
        testCase.addCleanup(self.kill)

    def outReceived(self, data: bytes) -> None:
        self.output += data.decode("utf-8", "replace")
        for waiter in list(self.waiting):
            pattern, start, found = waiter
            if pattern.search(self.output, start):
                self.waiting.remove(waiter)
                found.callback(None)

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        self.reason = reason
        waiting, self.waiting = self.waiting, []
        for pattern, _, found in waiting:
            found.errback(ChildDied(f"{self.name} exited before printing {pattern.pattern!r}:\n{self.output}"))
        assert reason.value is not None
        self.ended.callback(reason.value)

    def waitFor(self, pattern: str, after: int = 0) -> Deferred[None]:
        """Fires once the output (from offset ``after``) matches ``pattern``; fails at once if the peer dies."""
        found: Deferred[None] = Deferred()
        compiled = re.compile(pattern)
        if compiled.search(self.output, after):
            found.callback(None)
        elif self.reason is not None:
            found.errback(ChildDied(f"{self.name} had exited before printing {pattern!r}:\n{self.output}"))
        else:
            self.waiting.append((compiled, after, found))
        return found.addTimeout(60, reactor)

    def signal(self, name: str) -> Deferred[BaseException]:
        if self.reason is None:
            self.transport.signalProcess(name)  # type: ignore[union-attr]
        return self.ended

    def kill(self) -> Deferred[BaseException] | None:
        return self.signal("KILL") if self.reason is None else None


def velhaArgs(nick: str, interface: str, announce: str, port: int, *more: str) -> list[str]:
    return ["--nick", nick, "--interface", interface, "--announce", announce, "--port", str(port), *more]


@inlineCallbacks
def startPair(testCase: TestCase, anaHost: str, boHost: str, moveDelay: str):  # type: ignore[no-untyped-def]
    """Ana, once she listens and has announced herself; then Bo, who invites her when he hears her.

    Both bots share a UDP port the OS found free on both addresses (the
    protocol sends to the port it listens on). Returns Ana, Bo, and Bo's
    arguments (to start him again).
    """
    port = freeUdpPort(anaHost, boHost)
    common = ["--bot", "--move-delay", moveDelay, "--trace"]
    ana = Peer(testCase, "Ana", *velhaArgs("Ana", anaHost, boHost, port, *common))
    yield ana.waitFor(f"-> udp {re.escape(boHost)} b'01008Ana'")
    boArgs = velhaArgs("Bo", boHost, anaHost, port, "--invite", "Ana", *common)
    return ana, Peer(testCase, "Bo", *boArgs), boArgs


class TwoRealPeersTests(TestCase):
    """Two ``twistd -n velha --bot`` processes on 127.0.0.1 and 127.0.0.2 play a whole series.

    A peer that dies fails the test at once.
    """

    timeout = 90

    @inlineCallbacks
    def test_completeSeriesOverLoopback(self):
        ana, bo, _ = yield startPair(self, "127.0.0.1", "127.0.0.2", moveDelay="0.05")
        yield ana.waitFor(SERIES_OVER.pattern)
        yield bo.waitFor(SERIES_OVER.pattern)
        texts = ana.output, bo.output
        for text in texts:
            self.assertIn("match against", text)
        # Real UDP and TCP went both ways: MSG04/05/06 and the TCP MSG07.
        self.assertIn("b'04007Bo'", texts[1])
        self.assertRegex(texts[0], r"b'05\d{3}Ana\|\d+'")
        self.assertIn("b'06007Ok'", texts[1])
        self.assertRegex(texts[1], r"<- tcp Ana b'07006[12]'")
        # Both stop cleanly on SIGTERM (twistd then re-raises it as its exit
        # status), Bo saying goodbye with MSG03 first.
        for peer in (bo, ana):
            ended = yield peer.signal("TERM")
            self.assertIsInstance(ended, ProcessTerminated)
            self.assertEqual(ended.signal, signal.SIGTERM)
            self.assertIn("Server Shut Down.", peer.output)
        self.assertIn("b'03007Bo'", bo.output)


class KilledPeerTests(TestCase):
    """A peer killed with SIGKILL mid-match: the survivor says so, stays up, and plays the next one.

    (On 127.0.0.41 and .42, so that it can run beside L{TwoRealPeersTests}.)
    """

    timeout = 180

    @inlineCallbacks
    def test_survivorPlaysAgain(self):
        ana, bo, boArgs = yield startPair(self, "127.0.0.41", "127.0.0.42", moveDelay="0.3")
        yield ana.waitFor(r"<- tcp Bo b'08")
        killedAt = len(ana.output)
        yield bo.kill()  # SIGKILL: no MSG10, no MSG03, the kernel resets the connection
        yield ana.waitFor("match ended", after=killedAt)
        self.assertIsNone(ana.reason)  # the survivor is still up
        Peer(self, "Bo again", *boArgs)
        yield ana.waitFor(SERIES_OVER.pattern, after=killedAt)


class PeerLauncherTests(TestCase):
    timeout = 30

    def test_aDeadPeerFailsTheWaitAtOnce(self) -> Deferred[Any]:
        """A peer that exits (here: a nick twistd refuses) fails the wait then, not after its timeout."""
        peer = Peer(self, "Bad", "--nick", "a|b")
        return self.assertFailure(peer.waitFor("never printed"), ChildDied)
