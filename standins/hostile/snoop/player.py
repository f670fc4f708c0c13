"""Reads its classmate's folder and every home directory, says what it saw, then plays."""

import glob
import os

from velhanet.socha import example

for pattern in ("../honest/*", "/home/*/*", "/root/*", "/work/*", "/etc/shadow"):
    seen = glob.glob(pattern)
    print(f"snoop: {pattern}: {seen[:5] or 'nothing'}", flush=True)
    for path in seen[:5]:
        if os.path.isfile(path):
            try:
                with open(path) as secret:
                    print(f"snoop: read {path}: {secret.read(40)!r}", flush=True)
            except OSError as error:
                print(f"snoop: cannot read {path}: {error}", flush=True)
example.main()
