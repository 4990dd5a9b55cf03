"""Single-use, short-lived tokens for GetScreenshot, kept in Redis.

A token is 256 random bits handed to the caller once. Redis holds only its SHA-256 (a dump of
Redis gives nothing that opens a screenshot) with the screenshot id it was issued for, under a
TTL. Redeeming is one atomic GETDEL: the first redeem consumes the token whatever the outcome,
so a token can never be used twice, nor tried against several ids.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis.asyncio as aioredis

__all__ = ["TokenBook", "TokenGrant"]

_PREFIX = "kronii:capture:token:"


@dataclass(frozen=True)
class TokenGrant:
    """What a redeemed token was issued for."""

    screenshot_id: str
    identity: str


def _key(token: str) -> str:
    return _PREFIX + hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenBook:
    def __init__(self, redis: aioredis.Redis, ttl_secs: int = 60) -> None:
        if ttl_secs < 1:
            raise ValueError("the token lifetime must be at least 1 second")
        self._redis = redis
        self._ttl_secs = ttl_secs

    @property
    def ttl_secs(self) -> int:
        return self._ttl_secs

    async def issue(self, screenshot_id: str, identity: str) -> tuple[str, datetime]:
        """A new token for ``screenshot_id`` issued to ``identity``, and when it expires."""
        token = secrets.token_urlsafe(32)
        expires_at = datetime.now(UTC) + timedelta(seconds=self._ttl_secs)
        record = json.dumps({"screenshot_id": screenshot_id, "identity": identity})
        await self._redis.set(_key(token), record, ex=self._ttl_secs, nx=True)
        return token, expires_at

    async def redeem_grant(self, screenshot_id: str, token: str) -> TokenGrant | None:
        """Consume ``token``; the grant when it was issued for ``screenshot_id``, else None."""
        if not token or len(token) > 256:
            return None
        raw: Any = await self._redis.getdel(_key(token))
        if raw is None:
            return None
        try:
            record = json.loads(raw)
            issued_for = str(record["screenshot_id"])
            identity = str(record.get("identity", ""))
        except (ValueError, KeyError, TypeError):
            return None
        if not hmac.compare_digest(issued_for.encode("utf-8"), screenshot_id.encode("utf-8")):
            return None
        return TokenGrant(screenshot_id=issued_for, identity=identity)

    async def redeem(self, screenshot_id: str, token: str) -> bool:
        """True once for a live token issued for ``screenshot_id``; False afterwards and for any other id."""
        return await self.redeem_grant(screenshot_id, token) is not None
