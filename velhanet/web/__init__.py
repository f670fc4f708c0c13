"""``--web``: a live spectators' site for every family's server (``docs/architecture.md``)."""
