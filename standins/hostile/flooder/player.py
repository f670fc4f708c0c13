"""Prints 64 KiB of output with every move."""

from velhanet.socha import example


class Flooder(example.ExamplePlayer):
    def chooseMove(self, state):
        print("flood " * 11000, flush=True)
        return super().chooseMove(state)


example.ExamplePlayer = Flooder
example.main()
