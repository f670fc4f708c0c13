"""A real ``socha==4.3.9`` player, driving ``GameClient`` directly (reference-behaviour-socha.md §5.2).

    python tests/socha_player.py PORT [SEED] [--reservation CODE]

Prints RESULT <winner team> <regular> and exits 0 after <left/>.
"""

import random
import sys

from socha.api.networking.game_client import GameClient, IClientHandler


class Logic(IClientHandler):
    state = None

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def on_update(self, state):
        self.state = state

    def calculate_move(self):
        return self.rng.choice(self.state.possible_moves())

    def on_game_over(self, result):
        winner = result.winner
        print("RESULT", getattr(winner, "team", None), getattr(winner, "regular", None), flush=True)


def main():
    port = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 and not sys.argv[2].startswith("-") else 0
    reservation = sys.argv[sys.argv.index("--reservation") + 1] if "--reservation" in sys.argv else None
    client = GameClient(
        host="127.0.0.1",
        port=port,
        handler=Logic(seed),
        reservation=reservation,
        room_id=None,
        password=None,
        auto_reconnect=False,
        survive=False,
        headless=False,
    )
    client.join()
    client.start()


if __name__ == "__main__":
    main()
