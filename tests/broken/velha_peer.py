"""A JogoVelha bot peer that never answers MSG01.

python -m tests.broken.velha_peer INTERFACE ANNOUNCE
"""

from __future__ import annotations

import sys

from twisted.internet import reactor

from velhanet.velha import wire
from velhanet.velha.lobby import Lobby
from velhanet.velha.service import VelhaService
from velhanet.velha.tap import Options

_original = Lobby.datagramReceived


def deafToHello(self: Lobby, data: bytes, host: str) -> None:
    try:
        if isinstance(wire.decodeDatagram(data), wire.Hello):
            return
    except wire.MalformedMessage:
        pass
    _original(self, data, host)


def main() -> None:
    Lobby.datagramReceived = deafToHello  # type: ignore[method-assign]
    options = Options()
    options.parseOptions(
        ["--nick", "Deaf", "--bot", "--interface", sys.argv[1], "--announce", sys.argv[2], "--move-delay", "0.05"]
    )
    service = VelhaService(options, reactor)
    service.startService()
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)  # type: ignore[attr-defined]
    print("ready", flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
