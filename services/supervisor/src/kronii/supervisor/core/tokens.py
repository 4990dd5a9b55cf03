"""Section 15: signed service tokens, JSON Web Tokens (HS256, PyJWT) with the claims `sub`, `scopes`,
`workspaces`, `iat` and `exp`. Pure: the secret and `now` are passed in, and expiry is checked
against that `now`, never the wall clock."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

import jwt

__all__ = ["SCOPES", "Claims", "TokenError", "issue_token", "verify_token"]

# trigger: trigger_runtime; operate: register, spawn, pause, force, ack, heartbeat, deregister;
# read: list, get, logs. A runtime's own token carries "runtime:<id>" and may ack and heartbeat it.
SCOPES = frozenset({"trigger", "operate", "read"})

_ALGORITHM = "HS256"
# Tokens of kronii before the JWT form: `kst1.<claims>.<signature>`.
_OLD_PREFIX = "kst1."


class TokenError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Claims:
    subject: str
    scopes: frozenset[str]
    workspaces: frozenset[str]
    expires_at: float

    def allows_workspace(self, workspace_id: str) -> bool:
        return "*" in self.workspaces or workspace_id in self.workspaces

    def has(self, scope: str) -> bool:
        return scope in self.scopes

    def owns_runtime(self, runtime_id: str) -> bool:
        return f"runtime:{runtime_id}" in self.scopes


def _signing_key(secret: bytes) -> bytes:
    """A key for tokens alone, derived from the secret: always 32 bytes, so a 16-character secret
    (the settings' minimum) meets HS256's key length too, and distinct from the identity key."""
    return hmac.new(secret, b"service-token", hashlib.sha256).digest()


def issue_token(
    secret: bytes,
    *,
    subject: str,
    scopes: frozenset[str] | set[str],
    workspaces: frozenset[str] | set[str],
    now: float,
    ttl_secs: float,
) -> str:
    if not subject:
        raise TokenError("a token needs a subject (the caller's identity)")
    claims = {
        "sub": subject,
        "scopes": sorted(scopes),
        "workspaces": sorted(workspaces),
        "iat": int(now),
        "exp": int(now + ttl_secs),
    }
    return jwt.encode(claims, _signing_key(secret), algorithm=_ALGORITHM)


def verify_token(secret: bytes, token: str, *, now: float) -> Claims:
    claims = _signed_claims(secret, token)
    subject, scopes, workspaces, expires = (claims[name] for name in ("sub", "scopes", "workspaces", "exp"))
    well_formed = isinstance(subject, str) and _strings(scopes) and _strings(workspaces)
    if not well_formed or not isinstance(expires, int | float):
        raise TokenError("the token's claims are malformed")
    if expires <= now:
        raise TokenError("the token has expired")
    return Claims(
        subject=subject, scopes=frozenset(scopes), workspaces=frozenset(workspaces), expires_at=float(expires)
    )


def _signed_claims(secret: bytes, token: str) -> dict[str, Any]:
    """The claims of a token whose signature matches, every one it needs present."""
    if token.startswith(_OLD_PREFIX):
        raise TokenError(
            "a kst1 token of an older kronii, whose signature is no longer checked: "
            "issue a new one (kronii agents token)"
        )
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError:
        raise TokenError("not a kronii service token") from None
    if header.get("alg") != _ALGORITHM:
        raise TokenError("not a kronii service token")
    try:
        return jwt.decode(
            token,
            _signing_key(secret),
            algorithms=[_ALGORITHM],
            # Expiry is checked against the caller's `now`: PyJWT's own time checks read the wall clock.
            options={
                "verify_exp": False,
                "verify_iat": False,
                "verify_nbf": False,
                "require": ["sub", "scopes", "workspaces", "exp"],
            },
        )
    except jwt.InvalidSignatureError:
        raise TokenError("the token's signature does not match") from None
    except jwt.MissingRequiredClaimError as missing:
        raise TokenError(f"the token's claims are malformed: no {missing.claim!r}") from None
    except jwt.DecodeError:
        # PyJWT decodes the parts before it checks the signature; what does not decode was altered.
        raise TokenError(
            "the token does not decode (altered or cut short), so its signature cannot match"
        ) from None
    except jwt.InvalidTokenError:  # a signed claim PyJWT finds invalid, such as a subject that is not text
        raise TokenError("the token's claims are malformed") from None


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
