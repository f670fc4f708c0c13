"""A Software-Challenge server that closes the connection after the result instead of sending <left/>.

python -m tests.broken.socha_server PORT
"""

from __future__ import annotations

import sys

from twisted.internet import reactor

from velhanet.socha.lobby import Lobby, SochaProtocol


class NoLeft(SochaProtocol):
    def leftRoom(self, roomId: str) -> None:
        self.room = None
        self.closing = True
        if self.transport is not None:
            self.transport.loseConnection()


def main() -> None:
    lobby = Lobby(reactor)
    lobby.buildProtocol = lambda addr: NoLeft(lobby)  # type: ignore[method-assign]
    reactor.listenTCP(int(sys.argv[1]), lobby, interface="127.0.0.1")  # type: ignore[attr-defined]
    print("ready", flush=True)
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
