"""A sandboxed program's network: loopback only, every other address refused at once, and named.

bubblewrap gives the program a network namespace with nothing but ``lo``.
Before the program starts, velhanet does three things inside it, each from a
short-lived thread that joins the namespace (``setns`` changes the calling
thread only, and an ordinary user could not bring a thread back):

1. **every address is local**: ``local 0.0.0.0/0`` and ``local ::/0`` routes
   on ``lo`` (rtnetlink; what ``ip route add local 0.0.0.0/0 dev lo`` does).
   A connection to 198.18.0.9:80 then meets no listener and is refused at
   once, instead of waiting for a timeout on a missing route;
2. **what it tried is named**: a packet socket on ``lo`` with a classic BPF
   filter that passes only packets leaving for an address outside loopback
   (the kernel drops everything else, so game traffic costs nothing here);
   L{Forbidden.parse} turns one into "connect to 198.18.0.9:80 refused: only
   the game's server is reachable";
3. **what it may reach**: listening sockets on its 127.0.0.1 made inside it,
   for velhanet to serve (the game's server, or a relay to it).

Needs ``CAP_NET_ADMIN``/``CAP_NET_RAW`` over the namespace: real root, or an
ordinary user inside the user namespace of ``userns.enterUserNamespace``.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import ipaddress
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from velhanet.i18n import _

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)

T = TypeVar("T")


def setNetworkNamespace(fd: int) -> None:
    """Move the calling thread into the network namespace open on ``fd``."""
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(
            errno, _("cannot join the sandbox's network namespace: {reason}").format(reason=os.strerror(errno))
        )


def joinNetworkOf(pid: int, work: Callable[[], T]) -> T:
    """Run ``work`` in the calling thread after moving it into the network namespace of process ``pid``.

    The thread stays there: call this only from a thread that ends afterwards (one started for it, as the
    reactor's front end does, ``program.py``), never from one that goes on with other work."""
    fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    try:
        setNetworkNamespace(fd)
    finally:
        os.close(fd)
    return work()


def insideNetworkOf(pid: int, work: Callable[[], T]) -> T:
    """Run ``work`` in a thread of its own that joins the network namespace of process ``pid``, and wait for
    it: for blocking code, whose own thread must stay where it is (``blocking.py``)."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(joinNetworkOf(pid, work))
        except BaseException as error:  # handed to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=run, name=f"netns-{pid}")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


# -- 1. every address local --------------------------------------------------------

RTM_NEWROUTE = 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
RT_TABLE_LOCAL, RTPROT_BOOT, RT_SCOPE_HOST, RTN_LOCAL = 255, 3, 254, 2
RTA_OIF = 4
NLMSG_ERROR = 2


def _localRouteMessage(family: int, ifindex: int, sequence: int) -> bytes:
    route = struct.pack("BBBBBBBBI", family, 0, 0, 0, RT_TABLE_LOCAL, RTPROT_BOOT, RT_SCOPE_HOST, RTN_LOCAL, 0)
    attribute = struct.pack("HHI", 8, RTA_OIF, ifindex)
    body = route + attribute
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
    return struct.pack("IHHII", 16 + len(body), RTM_NEWROUTE, flags, sequence, 0) + body


SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopbackUp() -> None:
    """In the current thread's namespace: ``lo`` up (a namespace velhanet made itself: ``userns``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack_from("16sH", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        if not flags & IFF_UP:
            fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


SIOCGIFADDR = 0x8915
LOOPBACK_WAIT = 5.0
"""Seconds bwrap has to configure the loopback it made (it says which process is the sandbox's before)."""


def waitForLoopback(timeout: float = LOOPBACK_WAIT) -> None:
    """In the current thread's namespace: until ``lo`` is up with 127.0.0.1, as bwrap leaves it.

    bwrap reports the sandbox's process before that process has set its
    loopback up; changing the namespace meanwhile makes bwrap's own netlink
    request fail (``Failed RTM_NEWADDR``), so velhanet waits for it.
    """
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        while True:
            with contextlib.suppress(OSError):
                flags = struct.unpack_from("16sH", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
                fcntl.ioctl(probe, SIOCGIFADDR, request)  # raises until an address is set
                if flags & IFF_UP:
                    return
            if time.monotonic() > deadline:
                raise OSError(_("the sandbox's loopback was not up within {seconds:g} s").format(seconds=timeout))
            time.sleep(0.005)


def routeEverythingToLoopback() -> None:
    """In the current thread's namespace, once bwrap set ``lo`` up: ``local 0.0.0.0/0`` and ``local ::/0`` on it."""
    waitForLoopback()
    ifindex = socket.if_nametoindex("lo")
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as netlink:
        netlink.bind((0, 0))
        for sequence, family in enumerate((socket.AF_INET, socket.AF_INET6), start=1):
            netlink.send(_localRouteMessage(family, ifindex, sequence))
            answer = netlink.recv(4096)
            kind = struct.unpack_from("H", answer, 4)[0]
            if kind == NLMSG_ERROR:
                error = -struct.unpack_from("i", answer, 16)[0]
                if error not in (0, 17):  # 17: EEXIST, already there
                    raise OSError(
                        error,
                        _("cannot route the sandbox's addresses to lo: {reason}").format(reason=os.strerror(error)),
                    )


# -- 2. what it tried, named ------------------------------------------------------

ETH_P_ALL = 0x0003
SO_ATTACH_FILTER = 26
PACKET_OUTGOING = 4
_SKF_PKTTYPE = 0xFFFFF000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE
_LDB, _LDW, _RSH, _AND, _JEQ, _RET = 0x30, 0x20, 0x74, 0x54, 0x15, 0x06
_LDX_MSH, _LDB_IND = 0xB1, 0x50
TCP, UDP = 6, 17
SYN, ACK = 0x02, 0x10
KEEP = 128
"""Bytes of a forbidden packet kept: its headers."""


def _assemble(program: list[tuple[int, str, str, int]], labels: dict[str, int]) -> bytes:
    """Classic BPF: (opcode, jump-if-true label, jump-if-false label, k); '' is the next instruction."""
    code = b""
    for pc, (op, true, false, k) in enumerate(program):
        jt = labels[true] - pc - 1 if true else 0
        jf = labels[false] - pc - 1 if false else 0
        code += struct.pack("HBBI", op, jt, jf, k & 0xFFFFFFFF)
    return code


def forbiddenPacketFilter() -> tuple[bytes, int]:
    """What the program itself sent to an address outside loopback: a TCP SYN (no ACK), or UDP.

    IPv4 to outside 127.0.0.0/8 (broadcast excepted), IPv6 to anything but
    ``::1``; the kernel's answers (a RST, ICMP) and all game traffic are dropped
    in the kernel.
    """
    program = [
        (_LDB, "", "", _SKF_PKTTYPE),  # 0
        (_JEQ, "", "drop", PACKET_OUTGOING),
        (_LDB, "", "", 0),
        (_RSH, "", "", 4),
        (_JEQ, "v4", "", 4),
        (_JEQ, "v6", "drop", 6),  # 5
        (_LDW, "", "", 16),  # 6 v4: the destination
        (_AND, "", "", 0xFF000000),
        (_JEQ, "drop", "", 0x7F000000),
        (_LDW, "", "", 16),
        (_JEQ, "drop", "", 0xFFFFFFFF),  # 10
        (_LDB, "", "", 9),
        (_JEQ, "accept", "", UDP),
        (_JEQ, "", "drop", TCP),
        (_LDX_MSH, "", "", 0),
        (_LDB_IND, "", "", 13),  # 15: the TCP flags
        (_AND, "", "", SYN | ACK),
        (_JEQ, "accept", "drop", SYN),
        (_LDW, "", "", 24),  # 18 v6: the destination, word by word against ::1
        (_JEQ, "", "v6out", 0),
        (_LDW, "", "", 28),  # 20
        (_JEQ, "", "v6out", 0),
        (_LDW, "", "", 32),
        (_JEQ, "", "v6out", 0),
        (_LDW, "", "", 36),
        (_JEQ, "drop", "v6out", 1),  # 25
        (_LDB, "", "", 6),  # 26 v6out: the next header (no extension headers expected)
        (_JEQ, "accept", "", UDP),
        (_JEQ, "", "drop", TCP),
        (_LDB, "", "", 53),
        (_AND, "", "", SYN | ACK),  # 30
        (_JEQ, "accept", "drop", SYN),
        (_RET, "", "", KEEP),  # 32 accept
        (_RET, "", "", 0),  # 33 drop
    ]
    labels = {"v4": 6, "v6": 18, "v6out": 26, "accept": 32, "drop": 33}
    return _assemble(program, labels), len(program)


def openForbiddenWatch() -> socket.socket:
    """In the current thread's namespace: the packet socket that sees only forbidden packets."""
    watch = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    code, count = forbiddenPacketFilter()
    buffer = ctypes.create_string_buffer(code)
    program = struct.pack("HL", count, ctypes.addressof(buffer))
    watch.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, program)
    watch.bind(("lo", 0))
    watch.setblocking(False)
    return watch


@dataclass(frozen=True)
class Forbidden:
    """One attempt to reach an address outside the sandbox."""

    protocol: str
    address: str
    port: int

    @classmethod
    def parse(cls, packet: bytes) -> Forbidden | None:
        if not packet:
            return None
        version = packet[0] >> 4
        if version == 4 and len(packet) >= 20:
            headerLength = (packet[0] & 0x0F) * 4
            number, address = packet[9], str(ipaddress.IPv4Address(packet[16:20]))
        elif version == 6 and len(packet) >= 40:
            headerLength, number, address = 40, packet[6], str(ipaddress.IPv6Address(packet[24:40]))
        else:
            return None
        protocol = {TCP: "tcp", UDP: "udp"}.get(number, f"ip protocol {number}")
        port = 0
        if number in (TCP, UDP) and len(packet) >= headerLength + 4:
            port = struct.unpack_from("!H", packet, headerLength + 2)[0]
        return cls(protocol, address, port)

    def where(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{host}:{self.port}" if self.port else host

    def cause(self) -> str:
        if self.protocol == "tcp":
            return _("connect to {address} refused: only the game's server is reachable").format(address=self.where())
        return _("{protocol} to {address} dropped: only the game's server is reachable").format(
            protocol=self.protocol, address=self.where()
        )


# -- 3. what it may reach ------------------------------------------------------------


def listeningSocket(host: str, port: int) -> socket.socket:
    """In the current thread's namespace: a TCP socket listening on ``host:port``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(64)
    listener.setblocking(False)
    return listener
