"""Writes into its classmate's folder, velhanet's own package and /tmp, says how it went, then plays."""

import os

import velhanet
from velhanet.socha import example

targets = ["../honest/velhanet-run", os.path.join(os.path.dirname(velhanet.__file__), "pwned.py"), "/tmp/pwned"]
for path in targets:
    try:
        with open(path, "w") as sabotage:
            sabotage.write("echo pwned\n")
        print(f"writer: wrote {path}", flush=True)
    except OSError as error:
        print(f"writer: cannot write {path}: {error}", flush=True)
example.main()
