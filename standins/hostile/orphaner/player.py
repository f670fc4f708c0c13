"""Starts a process that outlives it, then plays."""

import subprocess

from velhanet.socha import example

subprocess.Popen(["sleep", "600"])
example.main()
