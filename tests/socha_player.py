"""A real ``socha==4.3.9`` player, driving ``GameClient`` directly (reference-behaviour-socha.md §5.2).

    python tests/socha_player.py PORT [SEED] [--reservation CODE] [--think SECONDS [--think-moves N]] [--greedy]

Prints RESULT <winner team> <regular> <reason> and exits 0 after <left/>.
With ``--think`` the player answers every move that many seconds after its
moveRequest arrived (the kernel's receive time of the bytes, SO_TIMESTAMPNS,
so that the time the library takes to read and parse, and any time the
machine keeps the process waiting before it reads, is inside the budget, as
a player that watches its clock budgets it), and prints ``THOUGHT <ms>``
per move: from that arrival to the answer, and ``WAITED <ms>``: the time
its threads waited runnable for a CPU in between (the machine's share);
with ``--think-moves N`` only on its first N moves (the rest at once). With ``--greedy`` it plays, instead of a random
move, one that makes its own largest swarm after the move (the Piranhas goal,
``RulesEngine.swarms_of_team``) as big as possible; ties are broken at random.
"""

import os
import random
import socket
import struct
import sys
import time

from socha._socha import GameState, RulesEngine
from socha.api.networking.game_client import GameClient, IClientHandler

SO_TIMESTAMPNS = 35
"""Linux's option (and control message type) for the kernel's receive time of a socket's bytes; Python has no name."""


def runQueueWait():
    """Seconds this process's threads have waited runnable for a CPU (``/proc/self/task/*/schedstat``)."""
    waited = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/schedstat") as stat:
                waited += int(stat.read().split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return waited / 1e9


class ArrivalClock:
    """The library's socket, read with ``recvmsg``: when the last moveRequest arrived, by the kernel's clock."""

    def __init__(self, sock):
        self.sock = sock
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.requestArrived = None
        """``time.time()`` of the kernel's receipt of the last moveRequest's bytes."""
        self.waitedAtRead = 0.0

    def recv(self, size):
        data, ancillary, _, _ = self.sock.recvmsg(size, socket.CMSG_SPACE(16))
        if b"moveRequest" in data:
            for level, kind, raw in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanoseconds = struct.unpack("qq", raw[:16])
                    self.requestArrived = seconds + nanoseconds / 1e9
            self.waitedAtRead = runQueueWait()
        return data

    def __getattr__(self, name):
        return getattr(self.sock, name)


class Logic(IClientHandler):
    state: GameState | None = None
    arrivals: ArrivalClock | None = None

    def __init__(self, seed, think, greedy=False, thinkMoves=None):
        self.rng = random.Random(seed)
        self.think = think
        self.thinkMoves = thinkMoves
        self.greedy = greedy

    def on_update(self, state):
        self.state = state

    def calculate_move(self):
        assert self.state is not None  # the server sends the state before asking for a move
        moves = self.state.possible_moves()
        move = self.greediest(self.state, moves) if self.greedy else self.rng.choice(moves)
        if self.think and (self.thinkMoves is None or self.thinkMoves > 0):
            if self.thinkMoves is not None:
                self.thinkMoves -= 1
            arrivals = self.arrivals
            assert arrivals is not None and arrivals.requestArrived is not None
            time.sleep(max(0.0, arrivals.requestArrived + self.think - time.time()))
            waited = runQueueWait() - arrivals.waitedAtRead
            thought = round((time.time() - arrivals.requestArrived) * 1000)
            print("THOUGHT", thought, "WAITED", round(waited * 1000), flush=True)
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
    logic = Logic(seed, think, "--greedy" in sys.argv, thinkMoves)
    client = GameClient(
        host="127.0.0.1",
        port=port,
        handler=logic,
        reservation=reservation,  # type: ignore[arg-type]  # socha's annotation says str; None means "no reservation"
        room_id=None,  # type: ignore[arg-type]  # likewise: None means "no room"
        password=None,  # type: ignore[arg-type]  # likewise: None means "no password"
        auto_reconnect=False,
        survive=False,
        headless=False,
    )
    if think:
        logic.arrivals = client.network_interface.socket = ArrivalClock(client.network_interface.socket)
    client.join()
    client.start()


if __name__ == "__main__":
    main()
