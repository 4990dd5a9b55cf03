"""Login links and sessions in Redis (RedisSessions), or in this process's memory where there is no
Redis (MemorySessions: a restart ends every session, which is safe). Keys are a digest of the token, so
neither Redis nor a dump of it holds a token that would open the console."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict

import redis.asyncio as aioredis
from kronii.console.core.session import LoginLink, Session

__all__ = ["MemorySessions", "RedisSessions", "token_digest"]


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _link(raw: bytes | str | None, used_at: bytes | str | None) -> LoginLink | None:
    if raw is None:
        return None
    data = json.loads(raw)
    link = LoginLink(token="", issued_at=float(data["issued_at"]), expires_at=float(data["expires_at"]))
    return link.used(float(used_at)) if used_at is not None else link


def _session(session_id: str, raw: bytes | str | None) -> Session | None:
    if raw is None:
        return None
    data = json.loads(raw)
    return Session(
        session_id=session_id,
        csrf_token=str(data["csrf_token"]),
        created_at=float(data["created_at"]),
        last_seen=float(data["last_seen"]),
        idle_secs=float(data["idle_secs"]),
    )


def _session_json(session: Session) -> str:
    data = asdict(session)
    del data["session_id"]
    return json.dumps(data)


class RedisSessions:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix

    def _key(self, kind: str, token: str) -> str:
        return f"{self._prefix}:{kind}:{token_digest(token)}"

    async def keep_link(self, link: LoginLink, *, forget_after_secs: float) -> None:
        body = json.dumps({"issued_at": link.issued_at, "expires_at": link.expires_at})
        await self._redis.set(self._key("link", link.token), body, ex=math.ceil(forget_after_secs))

    async def claim_link(self, token: str, now: float) -> LoginLink | None:
        key = self._key("link", token)
        raw = await self._redis.get(key)
        if raw is None:
            return None
        ttl = await self._redis.ttl(key)
        # SET NX: of two claims at once, one sets the mark and sees the link unused.
        claimed = await self._redis.set(self._key("used", token), repr(now), nx=True, ex=max(1, int(ttl)))
        if claimed:
            return _link(raw, None)
        return _link(raw, await self._redis.get(self._key("used", token)) or repr(now))

    async def keep_session(self, session: Session) -> None:
        ttl = max(1, math.ceil(session.idle_secs))
        await self._redis.set(self._key("session", session.session_id), _session_json(session), ex=ttl)

    async def session(self, session_id: str) -> Session | None:
        return _session(session_id, await self._redis.get(self._key("session", session_id)))

    async def end_session(self, session_id: str) -> None:
        await self._redis.delete(self._key("session", session_id))


class MemorySessions:
    """The same rules in a dict; expired entries are judged by the use case and dropped on the way."""

    def __init__(self) -> None:
        self._links: dict[str, tuple[LoginLink, float]] = {}
        self._sessions: dict[str, Session] = {}

    async def keep_link(self, link: LoginLink, *, forget_after_secs: float) -> None:
        self._links[token_digest(link.token)] = (link, link.issued_at + forget_after_secs)

    async def claim_link(self, token: str, now: float) -> LoginLink | None:
        digest = token_digest(token)
        kept = self._links.get(digest)
        if kept is None or now >= kept[1]:
            self._links.pop(digest, None)
            return None
        link, forget_at = kept
        if link.used_at is None:
            self._links[digest] = (link.used(now), forget_at)
        return link

    async def keep_session(self, session: Session) -> None:
        self._sessions[token_digest(session.session_id)] = session

    async def session(self, session_id: str) -> Session | None:
        return self._sessions.get(token_digest(session_id))

    async def end_session(self, session_id: str) -> None:
        self._sessions.pop(token_digest(session_id), None)
