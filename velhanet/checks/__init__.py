"""Checking one program against one protocol, rule by rule: ``velhanet-check``.

Each family's subpackage (``velha``, ``gambit``, ``gobang``, ``socha``,
``sochaplayer``) holds its ``rules``: trial test cases that talk to a target
given at run time (``base.target()``, made from ``settings.CheckSettings``),
with velhanet's own codecs as the reference side. Every check's docstring
names the rule it checks; ``runner.runChecks`` runs a family's checks through
trial's runner into a ``Report`` (``outcome``), which ``formats`` and
``page`` show; ``command`` is ``velhanet-check`` (see
``docs/conformance.md``). Grading a class is built on this, in
``velhanet.grading``; nothing here imports it.
"""
