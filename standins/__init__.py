"""Programs that break the protocols on purpose, shared by the tests, the benchmarks and CI.

``faulty/``: one stand-in per family, each breaking one rule at a time when told which
(``python -m standins.faulty.gambit_server PORT FAULT``), so that a check's FAIL can be seen and
its evidence read. ``hostile/``: students' players that misbehave against the sandbox (a fork
bomb, a memory hog, a flooder…), each a folder as a student hands it in. Neither is installed
with velhanet: they live beside the tests and the benchmarks, which both use them, and belong to
neither.
"""
