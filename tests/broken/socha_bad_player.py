"""A ``socha`` player that moves the opponent's fish (a rule violation), for the player check.

python tests/broken/socha_bad_player.py PORT
"""

import sys

from socha.api.networking.game_client import GameClient, IClientHandler


class Cheater(IClientHandler):
    state = None

    def on_update(self, state):
        self.state = state

    def calculate_move(self):
        # Pretend to be the other team: its legal moves are illegal for us.
        from socha import _socha

        other = _socha.GameState(self.state.board, self.state.turn + 1, None)
        return other.possible_moves()[0]


client = GameClient(
    host="127.0.0.1",
    port=int(sys.argv[1]),
    handler=Cheater(),
    reservation=None,
    room_id=None,
    password=None,
    auto_reconnect=False,
    survive=False,
    headless=False,
)
client.join()
client.start()
