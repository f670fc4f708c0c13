"""velhanet's Software-Challenge server with one fault, chosen on the command line.

    python -m standins.faulty.socha_server PORT FAULT [TIME_SCALE]

Each fault breaks exactly one rule of ``docs/socha.md`` (its anchor is the
fault's name).
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any, cast
from xml.etree.ElementTree import Element

from twisted.internet import reactor
from twisted.internet.protocol import ServerFactory

from velhanet.games.interfaces import IllegalMove
from velhanet.socha.protocol import SochaFactory, SochaProtocol
from velhanet.socha.wire import tag


class NoRoomIdInJoined(SochaProtocol):
    def sendPacket(self, packet: Element) -> None:
        if packet.tag == "joined":
            packet = tag("joined", {"roomid": packet.get("roomId")})
        super().sendPacket(packet)


class SwappedColours(SochaProtocol):
    def sendPacket(self, packet: Element) -> None:
        data = packet.find("data") if packet.tag == "room" else None
        if data is not None and data.get("class") == "welcomeMessage":
            data.set("color", "TWO" if data.get("color") == "ONE" else "ONE")
        super().sendPacket(packet)


class NoLeft(SochaProtocol):
    """Closes after the result instead of sending <left/>."""

    def leftRoom(self, roomId: str) -> None:
        self.room = None
        self.closing = True
        if self.transport is not None:
            self.transport.loseConnection()


class IgnoresInvalidMoves(SochaProtocol):
    def _roomMessage(self, message: Element) -> None:
        data = message.find("data")
        room = self.room
        if room is not None and data is not None and data.get("class") == "move":
            game = room.core.game
            assert game is not None  # a move before the game starts is out of this fault's scope
            try:
                copy.copy(game).play(data)
            except IllegalMove:
                return  # dropped: no error, no result
        super()._roomMessage(message)


class IgnoresMovesOutOfTurn(SochaProtocol):
    def _roomMessage(self, message: Element) -> None:
        room = self.room
        if room is not None and room.core.game is not None:
            mover = room.core.mover()
            if mover is not None and mover.client is not self:
                return  # dropped: no violation
        super()._roomMessage(message)


class NeverSendsErrorpackets(SochaProtocol):
    def error(self, message: str, original: Element | None) -> None:
        pass


class CrashOnBadXml(SochaProtocol):
    def dataReceived(self, data: bytes) -> None:
        if b"<!DOCTYPE" in data:
            os._exit(2)
        super().dataReceived(data)


FAULTS: dict[str, Any] = {
    "socha-join": NoRoomIdInJoined,
    "socha-start": SwappedColours,
    "socha-full-game": NoLeft,
    "socha-invalid-move": IgnoresInvalidMoves,
    "socha-out-of-turn": IgnoresMovesOutOfTurn,
    "socha-hard-timeout": SochaProtocol,  # with the time limits off: see main
    "socha-unknown-reservation": NeverSendsErrorpackets,
    "socha-bad-xml": CrashOnBadXml,
}


def main() -> None:
    port, fault = int(sys.argv[1]), sys.argv[2]
    timeScale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0  # as twistd socha-server --time-scale
    lobby = SochaFactory(reactor, timeouts=fault != "socha-hard-timeout", timeScale=timeScale)
    lobby.buildProtocol = lambda addr: FAULTS[fault](lobby)  # type: ignore[method-assign]
    reactor.listenTCP(port, cast(ServerFactory, lobby), interface="127.0.0.1")
    print("ready", flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
