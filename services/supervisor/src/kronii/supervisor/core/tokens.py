"""Section 15: signed service tokens. `kst1.<claims>.<signature>`, HMAC-SHA256 over the claims,
base64url without padding. Pure: the secret and `now` are passed in."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

__all__ = ["SCOPES", "Claims", "TokenError", "issue_token", "verify_token"]

PREFIX = "kst1"
# trigger: trigger_runtime; operate: register, spawn, pause, force, ack, heartbeat, deregister;
# read: list, get, logs. A runtime's own token carries "runtime:<id>" and may ack and heartbeat it.
SCOPES = frozenset({"trigger", "operate", "read"})


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


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


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
        "scp": sorted(scopes),
        "ws": sorted(workspaces),
        "iat": int(now),
        "exp": int(now + ttl_secs),
    }
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    signature = hmac.new(secret, f"{PREFIX}.{body}".encode(), hashlib.sha256).digest()
    return f"{PREFIX}.{body}.{_b64(signature)}"


def verify_token(secret: bytes, token: str, *, now: float) -> Claims:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenError("not a kronii service token")
    expected = hmac.new(secret, f"{PREFIX}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        given = _unb64(parts[2])
    except ValueError:
        raise TokenError("the token is malformed") from None
    # The signature first: nothing of an unsigned body is parsed.
    if not hmac.compare_digest(expected, given):
        raise TokenError("the token's signature does not match")
    try:
        claims = json.loads(_unb64(parts[1]))
    except (ValueError, json.JSONDecodeError):
        raise TokenError("the token is malformed") from None
    if not isinstance(claims, dict) or not isinstance(claims.get("sub"), str):
        raise TokenError("the token's claims are malformed")
    if float(claims.get("exp", 0)) <= now:
        raise TokenError("the token has expired")
    return Claims(
        subject=claims["sub"],
        scopes=frozenset(str(s) for s in claims.get("scp", [])),
        workspaces=frozenset(str(w) for w in claims.get("ws", [])),
        expires_at=float(claims["exp"]),
    )
