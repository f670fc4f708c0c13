"""Spins a core in a thread while it plays, and spins before every answer too.

The thread alone shares one core with the player through the interpreter's
lock, and on a busy machine an honest opponent could win a short game before
the spinner has used its CPU limit; so every answer also spins for at least
0.2 s of CPU (at most one second of wall time, well under the move's time
limit): the limit is met within about a dozen moves however loaded the
machine is, and never a time limit first.
"""

import threading
import time

from velhanet.socha import example

CPU_PER_ANSWER = 0.2
WALL_PER_ANSWER = 1.0


def spin():
    while True:
        pass


class Spinner(example.ExamplePlayer):
    def chooseMove(self, state):
        cpu, wall = time.process_time(), time.monotonic()
        while time.process_time() - cpu < CPU_PER_ANSWER and time.monotonic() - wall < WALL_PER_ANSWER:
            pass
        return super().chooseMove(state)


threading.Thread(target=spin, daemon=True).start()
example.ExamplePlayer = Spinner
example.main()
