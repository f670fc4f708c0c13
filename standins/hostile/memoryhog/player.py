"""Allocates memory without end once it is asked for its first move."""

from velhanet.socha import example


class MemoryHog(example.ExamplePlayer):
    def chooseMove(self, state):
        hoard = []
        while True:
            hoard.append(bytearray(8 * 1024 * 1024))


example.ExamplePlayer = MemoryHog
example.main()
