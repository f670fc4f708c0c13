"""Personal links: a secret per person, handed out once, of which only a hash is kept.

A link is ``URL/sign-in/SECRET``; the same secret is the person's bearer token for the API
(``Authorization: Bearer SECRET``) and ``velhanet-class hand-in --token``. A secret is 32 random
bytes (``secrets.token_urlsafe``): guessing one is hopeless, so a plain SHA-256 of it is enough to
keep (a slow hash protects weak passwords, and there is none here). ``velhanet-class links`` makes
one for each person who has none and prints ``NAME URL`` for each it made; a link made before is not
known any more (only its hash is), so it is named on standard error with how to replace it:
``velhanet-class revoke CLASS NAME``, which makes a new secret and ends the old one's sessions.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from velhanet.classroom.store import Store

SECRET_BYTES = 32


def newSecret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def hashed(secret: str) -> str:
    """What is kept of a secret (a link's, a session cookie's)."""
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def signInUrl(base: str, secret: str) -> str:
    return f"{base.rstrip('/')}/sign-in/{secret}"


def makeLink(store: Store, name: str, when: datetime) -> str:
    """A new secret for ``name`` (any older one stops working, and its sessions end); the secret."""
    secret = newSecret()
    store.setSecret(name, hashed(secret), when)
    return secret
