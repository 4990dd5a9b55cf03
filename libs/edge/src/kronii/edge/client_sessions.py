"""Agents' sign-in: registered Ed25519 public keys, challenge-response, and short sessions in Redis.

An agent asks for a challenge (a 32-byte nonce valid 30 s, usable once), signs the nonce with its
private key and sends the signature back; a good signature from a registered, unrevoked client
opens a session (a bearer token, 10 minutes by default) carrying the client's capabilities.
Redis holds the SHA-256 of session tokens, never the tokens. Revoking a client ends its sessions.

Each service keeps its own clients: its table (:func:`clients_table`, e.g. ``capture_clients``), its
Redis keys (``kronii:<service>:challenge:``, ``...:session:``, ``...:client-sessions:``) and its
capabilities, which this module handles as names (the service maps them to its own flags).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import redis.asyncio as aioredis
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import ARRAY, Column, DateTime, LargeBinary, MetaData, Table, Text, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = [
    "AuthError",
    "AuthReason",
    "Challenge",
    "ClientRecord",
    "ClientSessions",
    "Session",
    "clients_table",
    "sign_challenge",
]

NONCE_BYTES = 32
ED25519_KEY_BYTES = 32
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:@-]{1,64}$")


def clients_table(name: str, metadata: MetaData | None = None) -> Table:
    """A service's registered agents (the migration that creates ``name`` gives it these columns)."""
    return Table(
        name,
        metadata if metadata is not None else MetaData(),
        Column("client_id", Text, primary_key=True),
        Column("public_key", LargeBinary, nullable=False),
        Column("capabilities", ARRAY(Text), nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("revoked_at", DateTime(timezone=True)),
    )


AuthReason = Literal[
    "bad_client_id",
    "unknown_client",
    "revoked_client",
    "challenge_unknown_or_used",
    "challenge_for_another_client",
    "bad_signature",
]


class AuthError(Exception):
    """Authentication failed. ``reason`` is a stable code for audit rows and circuit breakers;
    ``str()`` is a sentence safe to return to the caller."""

    def __init__(self, reason: AuthReason, message: str) -> None:
        super().__init__(message)
        self.reason: AuthReason = reason
        self.message = message


@dataclass(frozen=True)
class Challenge:
    challenge_id: str
    nonce: bytes
    expires_at: datetime


@dataclass(frozen=True)
class Session:
    """A live session; ``capabilities`` are the client's registered capability names."""

    token: str
    client_id: str
    expires_at: datetime
    capabilities: tuple[str, ...]


@dataclass(frozen=True)
class ClientRecord:
    client_id: str
    public_key: bytes
    capabilities: tuple[str, ...]
    created_at: datetime
    revoked_at: datetime | None


def _record(row: Any) -> ClientRecord:
    return ClientRecord(
        row.client_id,
        bytes(row.public_key),
        tuple(row.capabilities),
        row.created_at,
        row.revoked_at,
    )


def sign_challenge(private_key: Ed25519PrivateKey, nonce: bytes) -> bytes:
    """What an agent sends back: its Ed25519 signature over the challenge nonce exactly."""
    return private_key.sign(nonce)


def _check_client_id(client_id: str) -> None:
    if not _CLIENT_ID.fullmatch(client_id):
        raise ValueError("a client id is 1-64 characters of letters, digits and . _ : @ -")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _known_names(requested: Iterable[str], known: Sequence[str]) -> tuple[str, ...]:
    """Names (any case, surrounding blanks ignored) in ``known``'s order; an unknown one is a ValueError."""
    wanted: set[str] = set()
    for raw in requested:
        name = raw.strip().upper()
        if name not in known:
            raise ValueError(f"unknown capability {raw!r}; known capabilities are {', '.join(known)}.")
        wanted.add(name)
    return tuple(name for name in known if name in wanted)


class ClientSessions:
    """A service's client registry (PostgreSQL ``table``), challenges and sessions (Redis).

    ``capabilities`` are every capability name the service knows, in the order it stores and shows
    them; ``default_capabilities`` are those a client registered without any gets."""

    def __init__(
        self,
        redis: aioredis.Redis,
        sessions: async_sessionmaker[AsyncSession],
        *,
        service: str,
        table: Table,
        capabilities: Sequence[str],
        default_capabilities: Sequence[str],
        challenge_ttl_secs: int = 30,
        session_ttl_secs: int = 600,
    ) -> None:
        if challenge_ttl_secs < 1 or session_ttl_secs < 1:
            raise ValueError("challenge and session lifetimes must be at least 1 second")
        self._redis = redis
        self._sessions = sessions
        self._table = table
        self._known = tuple(capabilities)
        self._default = _known_names(default_capabilities, self._known)
        self._challenge_prefix = f"kronii:{service}:challenge:"
        self._session_prefix = f"kronii:{service}:session:"
        self._client_sessions_prefix = f"kronii:{service}:client-sessions:"
        self._challenge_ttl = challenge_ttl_secs
        self._session_ttl = session_ttl_secs

    # -- registry --------------------------------------------------------------------------------

    async def register_client(
        self, client_id: str, public_key_bytes: bytes, capabilities: Iterable[str] | None = None
    ) -> ClientRecord:
        """Register (or re-register, which un-revokes and replaces the key) an agent's public key,
        with ``capabilities`` (the service's defaults when None)."""
        _check_client_id(client_id)
        if len(public_key_bytes) != ED25519_KEY_BYTES:
            raise ValueError("an Ed25519 public key is 32 raw bytes")
        Ed25519PublicKey.from_public_bytes(public_key_bytes)  # rejects bytes that are not a key
        granted = self._default if capabilities is None else _known_names(capabilities, self._known)
        now = datetime.now(UTC)
        table = self._table
        statement = pg_insert(table).values(
            client_id=client_id,
            public_key=public_key_bytes,
            capabilities=list(granted),
            created_at=now,
            revoked_at=None,
        )
        statement = statement.on_conflict_do_update(
            index_elements=[table.c.client_id],
            set_={"public_key": public_key_bytes, "capabilities": list(granted), "revoked_at": None},
        )
        async with self._sessions() as session, session.begin():
            await session.execute(statement)
        # A new key must not inherit sessions proven with the old one.
        await self._end_sessions(client_id)
        return ClientRecord(client_id, public_key_bytes, granted, now, None)

    async def revoke_client(self, client_id: str) -> bool:
        """Revoke a client and end its sessions; False when no such (unrevoked) client exists."""
        table = self._table
        async with self._sessions() as session, session.begin():
            result = await session.execute(
                update(table)
                .where(table.c.client_id == client_id, table.c.revoked_at.is_(None))
                .values(revoked_at=datetime.now(UTC))
            )
        await self._end_sessions(client_id)
        return bool(getattr(result, "rowcount", 0))

    async def client(self, client_id: str) -> ClientRecord | None:
        async with self._sessions() as session:
            row = (
                await session.execute(select(self._table).where(self._table.c.client_id == client_id))
            ).first()
        return None if row is None else _record(row)

    async def clients(self) -> list[ClientRecord]:
        """Every registered client, revoked ones included, by id."""
        async with self._sessions() as session:
            rows = (await session.execute(select(self._table).order_by(self._table.c.client_id))).all()
        return [_record(row) for row in rows]

    # -- challenge-response ----------------------------------------------------------------------

    async def begin(self, client_id: str) -> Challenge:
        """A fresh challenge for ``client_id``. Unknown clients get one too, so that ``begin`` does
        not tell which client ids exist; they fail at :meth:`authenticate`."""
        try:
            _check_client_id(client_id)
        except ValueError as error:
            raise AuthError("bad_client_id", str(error)) from None
        challenge_id = secrets.token_urlsafe(18)
        nonce = secrets.token_bytes(NONCE_BYTES)
        expires_at = datetime.now(UTC) + timedelta(seconds=self._challenge_ttl)
        record = json.dumps({"client_id": client_id, "nonce": base64.b64encode(nonce).decode("ascii")})
        await self._redis.set(self._challenge_prefix + challenge_id, record, ex=self._challenge_ttl)
        return Challenge(challenge_id, nonce, expires_at)

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session:
        """Check the signature over the challenge's nonce and open a session.

        The challenge is consumed by the first attempt, good or bad: a replay, or a second guess
        after a wrong signature, finds nothing.
        """
        raw: Any = await self._redis.getdel(self._challenge_prefix + challenge_id) if challenge_id else None
        if raw is None:
            raise AuthError("challenge_unknown_or_used", "the challenge is unknown, expired or already used")
        record = json.loads(raw)
        if record["client_id"] != client_id:
            raise AuthError("challenge_for_another_client", "the challenge was issued to another client")
        nonce = base64.b64decode(record["nonce"])
        client = await self.client(client_id)
        if client is None:
            raise AuthError("unknown_client", "the client is not registered")
        if client.revoked_at is not None:
            raise AuthError("revoked_client", "the client's key has been revoked")
        try:
            Ed25519PublicKey.from_public_bytes(client.public_key).verify(signature, nonce)
        except InvalidSignature:
            raise AuthError(
                "bad_signature", "the signature does not match the client's registered key"
            ) from None
        return await self._open_session(client)

    async def _open_session(self, client: ClientRecord) -> Session:
        token = secrets.token_urlsafe(32)
        digest = _digest(token)
        expires_at = datetime.now(UTC) + timedelta(seconds=self._session_ttl)
        record = json.dumps(
            {
                "client_id": client.client_id,
                "capabilities": list(client.capabilities),
                "expires_at": expires_at.isoformat(),
            }
        )
        index = self._client_sessions_prefix + client.client_id
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self._session_prefix + digest, record, ex=self._session_ttl)
            pipe.sadd(index, digest)
            pipe.expire(index, self._session_ttl)
            await pipe.execute()
        return Session(token, client.client_id, expires_at, client.capabilities)

    async def resolve(self, token: str) -> Session | None:
        """The live session of a bearer token, or None."""
        if not token or len(token) > 256:
            return None
        raw: Any = await self._redis.get(self._session_prefix + _digest(token))
        if raw is None:
            return None
        record = json.loads(raw)
        return Session(
            token,
            str(record["client_id"]),
            datetime.fromisoformat(record["expires_at"]),
            tuple(str(name) for name in record["capabilities"]),
        )

    async def end_session(self, token: str) -> None:
        await self._redis.delete(self._session_prefix + _digest(token))

    async def _end_sessions(self, client_id: str) -> None:
        index = self._client_sessions_prefix + client_id
        digests: Any = await self._redis.smembers(index)
        keys = [self._session_prefix + (d.decode() if isinstance(d, bytes) else str(d)) for d in digests]
        if keys:
            await self._redis.delete(*keys)
        await self._redis.delete(index)
