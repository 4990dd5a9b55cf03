"""The console's sign-in, as pure decisions: a one-time login link, the session it opens, and the CSRF
token every state change carries. Tokens are made by the caller (secrets in the use case) and times
are passed in, so every rule here is a table a test can walk.

A login link is good once and for a short time; the session it opens lives while it is used (an idle
expiry, not an absolute one) and carries its own CSRF token. Tokens are compared in constant time."""

from __future__ import annotations

import hmac
from dataclasses import dataclass, replace
from enum import StrEnum

__all__ = [
    "LINK_SENTENCES",
    "TOKEN_BYTES",
    "LinkVerdict",
    "LoginLink",
    "Session",
    "SessionVerdict",
    "judge_link",
    "judge_session",
    "same_token",
    "token_looks_valid",
]

# 256 bits of randomness for every link, session and CSRF token (secrets.token_urlsafe(32)).
TOKEN_BYTES = 32
# token_urlsafe(32) is 43 characters of the URL-safe base64 alphabet.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True)
class LoginLink:
    token: str
    issued_at: float
    expires_at: float
    used_at: float | None = None

    def used(self, now: float) -> LoginLink:
        return replace(self, used_at=now)


@dataclass(frozen=True)
class Session:
    session_id: str
    csrf_token: str
    created_at: float
    last_seen: float
    idle_secs: float

    def seen(self, now: float) -> Session:
        return replace(self, last_seen=now)

    def expires_at(self) -> float:
        return self.last_seen + self.idle_secs


class LinkVerdict(StrEnum):
    GOOD = "good"
    UNKNOWN = "unknown"  # never issued, or forgotten since it expired
    USED = "used"
    EXPIRED = "expired"


class SessionVerdict(StrEnum):
    GOOD = "good"
    MISSING = "missing"  # no cookie, or a cookie no session has
    EXPIRED = "expired"


# Why a link is refused, in the words the 403 page says.
LINK_SENTENCES = {
    LinkVerdict.UNKNOWN: "this login link is not one the console issued, or it expired and was forgotten",
    LinkVerdict.USED: "this login link was already used: each link opens one session",
    LinkVerdict.EXPIRED: "this login link expired: links are good for a short time",
}


def judge_link(link: LoginLink | None, now: float) -> LinkVerdict:
    """A link opens a session once, before it expires."""
    if link is None:
        return LinkVerdict.UNKNOWN
    if link.used_at is not None:
        return LinkVerdict.USED
    if now >= link.expires_at:
        return LinkVerdict.EXPIRED
    return LinkVerdict.GOOD


def judge_session(session: Session | None, now: float) -> SessionVerdict:
    """A session is good while it was used within its idle time."""
    if session is None:
        return SessionVerdict.MISSING
    if now >= session.expires_at():
        return SessionVerdict.EXPIRED
    return SessionVerdict.GOOD


def same_token(expected: str, given: str | None) -> bool:
    """Whether `given` is `expected`, in time that does not depend on where they differ."""
    if not given or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def token_looks_valid(token: str | None) -> bool:
    """A token the console could have made: the right length and alphabet (anything else is not
    looked up at all, so a hostile cookie or link never reaches the store)."""
    return token is not None and 40 <= len(token) <= 64 and set(token) <= _TOKEN_CHARS
