"""Forks without end once it is asked for its first move."""

import contextlib
import os

from velhanet.socha import example


class ForkBomb(example.ExamplePlayer):
    def chooseMove(self, state):
        while True:
            with contextlib.suppress(OSError):
                os.fork()


example.ExamplePlayer = ForkBomb
example.main()
