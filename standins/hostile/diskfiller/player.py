"""Writes files into its own folder without end once it is asked for its first move."""

import itertools
import os

from velhanet.socha import example

HERE = os.path.dirname(os.path.abspath(__file__))


class DiskFiller(example.ExamplePlayer):
    def chooseMove(self, state):
        for n in itertools.count():
            try:
                with open(os.path.join(HERE, f"fill-{n}"), "wb") as fill:
                    for _ in range(16):
                        fill.write(b"x" * 1024 * 1024)
            except OSError:
                pass


example.ExamplePlayer = DiskFiller
example.main()
