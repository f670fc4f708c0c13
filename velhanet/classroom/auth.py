"""Who may see what: ``twisted.cred``'s portal, a realm of students and teachers, sessions, CSRF, a limiter.

A request is someone only through the portal: a personal link's secret (``/sign-in/SECRET``, or
``Authorization: Bearer SECRET``) or a session cookie is a credential, its checker says whose it is
(from a hash: the secrets are not kept), and the realm gives that name its avatar, a L{Student} or a
L{Teacher}, by the role the class file gives them now (a person taken out of the class signs in no
more). Every resource then asks the avatar: a student owns their hand-ins, a teacher sees everyone's.

The session cookie is HttpOnly, ``SameSite=Lax`` (a link opened from a mail brings it to the first
page) and ``Secure`` over TLS; its session holds a CSRF token that every form that changes something
carries, and that a change asked with the cookie alone, without it, is refused for. A bearer token
needs none: a page of another site cannot set that header. Sign-in attempts are limited per address
(L{SignInLimiter}): a secret cannot be guessed, but a flood of guesses is refused early all the same.
"""

from __future__ import annotations

import hmac
import secrets
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from twisted.cred.checkers import ICredentialsChecker
from twisted.cred.credentials import ICredentials
from twisted.cred.error import UnauthorizedLogin
from twisted.cred.portal import IRealm, Portal
from twisted.internet.defer import Deferred, fail, succeed
from zope.interface import Attribute, Interface, implementer

from velhanet.classroom.classfile import TEACHER
from velhanet.classroom.links import hashed
from velhanet.classroom.store import Store

COOKIE = b"velhanet-class"


class IPerson(Interface):
    """Someone signed in: a student or a teacher of the class."""

    name = Attribute("The name the class file gives them.")
    teacher = Attribute("Whether they see the whole class.")


@implementer(IPerson)
@dataclass(frozen=True)
class Student:
    name: str
    teacher = False

    def owns(self, student: str) -> bool:
        return student == self.name


@implementer(IPerson)
@dataclass(frozen=True)
class Teacher:
    name: str
    teacher = True

    def owns(self, student: str) -> bool:
        return True


Person = Student | Teacher


class ILinkSecret(ICredentials):
    secret = Attribute("A personal link's secret, as given (the link's last part, or a bearer token).")


class ISessionCookie(ICredentials):
    token = Attribute("A session cookie's value.")


@implementer(ILinkSecret)
@dataclass(frozen=True)
class LinkSecret:
    secret: str


@implementer(ISessionCookie)
@dataclass(frozen=True)
class SessionCookie:
    token: str


@implementer(ICredentialsChecker)
class LinkSecretChecker:
    credentialInterfaces = (ILinkSecret,)

    def __init__(self, store: Store) -> None:
        self.store = store

    def requestAvatarId(self, credentials: LinkSecret) -> Deferred[bytes | tuple[()]]:
        found = self.store.personBySecret(hashed(credentials.secret))
        return succeed(found[0].encode()) if found is not None else fail(UnauthorizedLogin())


@implementer(ICredentialsChecker)
class SessionChecker:
    credentialInterfaces = (ISessionCookie,)

    def __init__(self, store: Store) -> None:
        self.store = store

    def requestAvatarId(self, credentials: SessionCookie) -> Deferred[bytes | tuple[()]]:
        found = self.store.session(hashed(credentials.token))
        return succeed(found[0].encode()) if found is not None else fail(UnauthorizedLogin())


@implementer(IRealm)
class ClassRealm:
    def __init__(self, store: Store) -> None:
        self.store = store

    def requestAvatar(self, avatarId: Any, mind: object, *interfaces: Any) -> tuple[Any, Person, Any]:
        if IPerson not in interfaces:
            raise NotImplementedError("only IPerson")
        name = avatarId.decode() if isinstance(avatarId, bytes) else str(avatarId)
        role = self.store.roleOf(name)
        if role is None:
            raise UnauthorizedLogin()
        person: Person = Teacher(name) if role == TEACHER else Student(name)
        return IPerson, person, lambda: None


def classPortal(store: Store) -> Portal:
    return Portal(ClassRealm(store), [LinkSecretChecker(store), SessionChecker(store)])


def signIn(portal: Portal, credentials: ICredentials) -> Deferred[Person]:
    """The avatar ``credentials`` are for; fails with UnauthorizedLogin."""

    def avatar(answer: tuple[Any, Any, Any]) -> Person:
        person: Person = answer[1]
        return person

    return portal.login(credentials, None, IPerson).addCallback(avatar)


class Sessions:
    """Session cookies: made at sign-in, kept as hashes with their CSRF tokens (a restart keeps them)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def open(self, person: str, when: datetime) -> str:
        """A new session for ``person``: the cookie's value."""
        token = secrets.token_urlsafe(32)
        self.store.addSession(hashed(token), person, secrets.token_urlsafe(24), when)
        return token

    def csrf(self, token: str) -> str:
        found = self.store.session(hashed(token))
        return found[1] if found is not None else ""

    def close(self, token: str) -> None:
        self.store.endSession(hashed(token))

    def checkCsrf(self, token: str, given: str) -> bool:
        expected = self.csrf(token)
        return bool(expected) and hmac.compare_digest(expected.encode(), given.encode())


def cookieHeader(token: str, secure: bool, maxAge: int = 60 * 60 * 24 * 120) -> bytes:  # SESSION_DAYS
    """The session cookie: HttpOnly, SameSite=Lax, Secure over TLS (an empty token and no age: removed)."""
    parts = [f"{COOKIE.decode()}={token}", "Path=/", "HttpOnly", "SameSite=Lax", f"Max-Age={maxAge}"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts).encode("ascii")


class SignInLimiter:
    """At most ``attempts`` sign-in attempts (a link opened, a bearer token that was wrong) per address in
    ``window`` seconds; the clock is given (the reactor's)."""

    def __init__(self, clock: Any, attempts: int = 20, window: float = 600.0) -> None:
        self.clock, self.attempts, self.window = clock, attempts, window
        self._seen: defaultdict[str, deque[float]] = defaultdict(deque)

    def allow(self, address: str) -> bool:
        """Count one attempt from ``address``; whether it is allowed."""
        now = self.clock.seconds()
        seen = self._seen[address]
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if len(seen) >= self.attempts:
            return False
        seen.append(now)
        return True

    def retryAfter(self, address: str) -> int:
        seen = self._seen.get(address)
        if not seen:
            return 0
        return max(1, int(seen[0] + self.window - self.clock.seconds()) + 1)

    def forget(self) -> None:
        """Addresses with no attempt in the window (run now and then: the table stays small)."""
        now = self.clock.seconds()
        for address in [a for a, seen in self._seen.items() if not seen or seen[-1] <= now - self.window]:
            del self._seen[address]
