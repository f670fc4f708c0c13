"""Connects to another address than the game's server before it joins."""

import socket

from velhanet.socha import example

try:
    socket.create_connection(("198.18.0.9", 80), timeout=5).close()
    print("connector: connected to 198.18.0.9:80", flush=True)
except OSError as error:
    print(f"connector: cannot connect to 198.18.0.9:80: {error}", flush=True)
example.main()
