"""Spins a core in a thread while it plays."""

import threading

from velhanet.socha import example


def spin():
    while True:
        pass


threading.Thread(target=spin, daemon=True).start()
example.main()
