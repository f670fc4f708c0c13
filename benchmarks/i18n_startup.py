"""What speaking a language costs at start-up: importing velhanet.i18n and loading a catalog.

    python benchmarks/i18n_startup.py [--runs 30]

Each run is a fresh Python process (as a command starts) that imports
``velhanet.i18n``, chooses a language (``use``), and translates one text; the
process measures those steps itself with ``time.perf_counter``, so the
interpreter's own start is left out. English (no catalog: gettext's
``NullTranslations``) and each catalog alternate, run after run, so a busy
moment of the machine falls on all of them; the table gives the median and
the ratio to English. A last row says what a command's whole start costs, for
scale: ``gambit-client --help``'s wall time, median of the same runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

MEASURE = """
import time
began = time.perf_counter()
from velhanet import i18n
imported = time.perf_counter()
i18n.use({code!r})
loaded = time.perf_counter()
i18n._("standard output")
translated = time.perf_counter()
print(imported - began, loaded - imported, translated - loaded)
"""


def measure(code: str) -> tuple[float, float, float]:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE.format(code=code)], capture_output=True, text=True, check=True
    ).stdout
    imported, loaded, translated = (float(part) for part in out.split())
    return imported, loaded, translated


def commandStart() -> float:
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from velhanet.gambit.client import main; main()", "--help"],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    codes = ("en", "pt", "es", "de")
    samples: dict[str, list[tuple[float, float, float]]] = {code: [] for code in codes}
    starts: list[float] = []
    for _run in range(runs):
        for code in codes:
            samples[code].append(measure(code))
        starts.append(commandStart())
    english = statistics.median(sum(sample) for sample in samples["en"])
    print(f"{'language':<10}{'import ms':>10}{'use ms':>10}{'first _ ms':>12}{'total ms':>10}{'÷ en':>8}")
    for code in codes:
        imported, loaded, translated = (statistics.median(part) * 1000 for part in zip(*samples[code], strict=True))
        total = statistics.median(sum(sample) for sample in samples[code])
        print(
            f"{code:<10}{imported:>10.2f}{loaded:>10.2f}{translated:>12.3f}{total * 1000:>10.2f}{total / english:>8.2f}"
        )
    print(f"for scale: gambit-client --help, whole process, median {statistics.median(starts) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
