"""Spins every core in threads while it plays."""

import os
import threading

from velhanet.socha import example


def spin():
    while True:
        pass


for _ in range(os.cpu_count() or 2):
    threading.Thread(target=spin, daemon=True).start()
example.main()
