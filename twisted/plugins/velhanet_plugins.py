"""twistd plugins for velhanet: each one only points at a ``*_tap`` module.

No ``__init__.py`` lives in ``twisted/`` or ``twisted/plugins/``: Twisted
finds this file by scanning every ``twisted/plugins`` directory on sys.path.
"""

from __future__ import annotations
