"""An honest player: greedy moves, nothing else."""

import sys

from velhanet.socha import example

example.main([*sys.argv[1:], "--greedy"])
