"""Protocol regression suites: trial tests that check *any* implementation of the four protocols.

Each family module holds trial test cases that talk to a target given at
run time (``velhanet.conformance.base.target()``), using velhanet's own
codecs as the reference side. Every test's docstring names the rule it
checks; ``velhanet-check FAMILY --target …`` runs a suite through trial's
runner and prints one line per rule (see ``docs/conformance.md``).
"""
