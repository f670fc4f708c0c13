"""A real ``socha==4.3.9`` player, driving ``GameClient`` directly (reference-behaviour-socha.md §5.2).

    python tests/socha_player.py PORT [SEED] [--reservation CODE] [--think SECONDS [--think-moves N]] [--greedy]

Prints RESULT <winner team> <regular> <reason> and exits 0 after <left/>.
With ``--think`` the player spends that many seconds of its own measured
time on every move (from the moment ``calculate_move`` is called) and prints
``THOUGHT <ms>`` per move; with ``--think-moves N`` only on its first N
moves (the rest at once). With ``--greedy`` it plays, instead of a random
move, one that makes its own largest swarm after the move (the Piranhas goal,
``RulesEngine.swarms_of_team``) as big as possible; ties are broken at random.
"""

import random
import sys
import time

from socha._socha import GameState, RulesEngine
from socha.api.networking.game_client import GameClient, IClientHandler


class Logic(IClientHandler):
    state: GameState | None = None

    def __init__(self, seed, think, greedy=False, thinkMoves=None):
        self.rng = random.Random(seed)
        self.think = think
        self.thinkMoves = thinkMoves
        self.greedy = greedy

    def on_update(self, state):
        self.state = state

    def calculate_move(self):
        started = time.monotonic()
        assert self.state is not None  # the server sends the state before asking for a move
        moves = self.state.possible_moves()
        move = self.greediest(self.state, moves) if self.greedy else self.rng.choice(moves)
        if self.think and (self.thinkMoves is None or self.thinkMoves > 0):
            if self.thinkMoves is not None:
                self.thinkMoves -= 1
            time.sleep(max(0.0, started + self.think - time.monotonic()))
            print("THOUGHT", round((time.monotonic() - started) * 1000), flush=True)
        return move

    def greediest(self, state, moves):
        team = RulesEngine.get_team_on_turn(state.turn)

        def largestSwarm(move):
            swarms = RulesEngine.swarms_of_team(state.perform_move(move).board, team)
            return max((len(swarm) for swarm in swarms), default=0)

        sizes = [largestSwarm(move) for move in moves]
        best = max(sizes)
        return self.rng.choice([move for move, size in zip(moves, sizes, strict=True) if size == best])

    def on_game_over(self, result):
        winner = result.winner
        fields = [getattr(winner, name, None) for name in ("team", "regular", "reason")]
        print("RESULT", *fields, flush=True)


def main():
    port = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 and not sys.argv[2].startswith("-") else 0
    reservation = sys.argv[sys.argv.index("--reservation") + 1] if "--reservation" in sys.argv else None
    think = float(sys.argv[sys.argv.index("--think") + 1]) if "--think" in sys.argv else 0.0
    thinkMoves = int(sys.argv[sys.argv.index("--think-moves") + 1]) if "--think-moves" in sys.argv else None
    client = GameClient(
        host="127.0.0.1",
        port=port,
        handler=Logic(seed, think, "--greedy" in sys.argv, thinkMoves),
        reservation=reservation,  # type: ignore[arg-type]  # socha's annotation says str; None means "no reservation"
        room_id=None,  # type: ignore[arg-type]  # likewise: None means "no room"
        password=None,  # type: ignore[arg-type]  # likewise: None means "no password"
        auto_reconnect=False,
        survive=False,
        headless=False,
    )
    client.join()
    client.start()


if __name__ == "__main__":
    main()
