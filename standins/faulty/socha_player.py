"""A real ``socha==4.3.9`` player with one fault, for the player conformance tests.

    python standins/faulty/socha_player.py PORT FAULT

Each fault breaks exactly one rule of ``docs/socha.md`` (its anchor is the fault's name).
"""

import os
import socket
import sys
import time
from typing import Any

from socha._socha import GameState
from socha.api.networking.game_client import GameClient, IClientHandler

PORT, FAULT = int(sys.argv[1]), sys.argv[2]


class Player(IClientHandler):
    state: GameState | None = None

    def on_update(self, state: GameState) -> None:
        self.state = state

    def calculate_move(self) -> Any:
        assert self.state is not None  # the server sends the state before asking for a move
        if FAULT == "socha-player-moves":
            # Pretend to be the other team: its legal moves are illegal for us.
            from socha import _socha

            other = _socha.GameState(self.state.board, self.state.turn + 1, None)
            return other.possible_moves()[0]
        return self.state.possible_moves()[0]

    def on_game_left(self) -> None:
        if FAULT == "socha-player-close":
            time.sleep(12)  # keeps the connection past the server's 10 s grace, then ends normally
        if FAULT == "socha-player-exit":
            os._exit(3)


if FAULT == "socha-player-join":
    with socket.create_connection(("127.0.0.1", PORT)):
        time.sleep(12)  # connects, never joins
    sys.exit(0)

client = GameClient(
    host="127.0.0.1",
    port=PORT,
    handler=Player(),
    reservation=None,  # type: ignore[arg-type]  # socha's annotation says str; None means "no reservation"
    room_id=None,  # type: ignore[arg-type]  # likewise: None means "no room"
    password=None,  # type: ignore[arg-type]  # likewise: None means "no password"
    auto_reconnect=False,
    survive=False,
    headless=False,
)
client.join()
client.start()
