"""velhanet's tests read velhanet in English, its source language, whatever the machine's locale.

The language comes from the environment (``LANGUAGE`` first, as gettext reads
it); a test of another language asks for it explicitly (``--language``, or an
environment of its own for a program it starts).
"""

import os

os.environ["LANGUAGE"] = "en"
