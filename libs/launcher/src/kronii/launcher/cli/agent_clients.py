"""What every service's `clients` commands share: reading an agent's Ed25519 public key, and adding,
listing and revoking agents in the service's registry (kronii.edge.client_sessions), each service
naming its own registry with a factory (`kronii capture clients`: `capture_clients`; `kronii broker
clients`: `broker_clients`).

Light on purpose: `kronii --help` and shell completion import the commands that use this module. The
key parser, the database and Redis load inside the functions that need them."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from kronii.crypto.errors import KeyFileError
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    import redis.asyncio as aioredis
    from kronii.edge.client_sessions import ClientRecord, ClientSessions
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = [
    "AgentClients",
    "RegistryFactory",
    "client_json",
    "client_line",
    "load_public_key",
    "read_public_key",
]

# The service's registry on the database and Redis the command opened.
RegistryFactory = Callable[["aioredis.Redis", "async_sessionmaker[AsyncSession]"], "ClientSessions"]
_T = TypeVar("_T")


def load_public_key(text: bytes) -> bytes:
    """The 32 raw bytes of an Ed25519 public key given as OpenSSH (`ssh-ed25519 AAAA...`), PEM
    (`-----BEGIN PUBLIC KEY-----`), or base64 / hex of the raw 32 bytes."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    stripped = text.strip()
    key: Any = None
    try:
        if stripped.startswith(b"ssh-"):
            key = serialization.load_ssh_public_key(stripped)
        elif stripped.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(stripped)
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"the key cannot be read: {error}") from None
    if key is not None:
        if not isinstance(key, Ed25519PublicKey):
            raise KeyFileError(
                f"the key is a {type(key).__name__.removeprefix('_')}, not an Ed25519 public key"
            )
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    for decode in (bytes.fromhex, base64.b64decode):
        try:
            raw = decode(stripped.decode("ascii"))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            continue
        if len(raw) == 32:
            return bytes(raw)
    raise KeyFileError("not an Ed25519 public key (expected OpenSSH, PEM, or 32 raw bytes in base64 or hex)")


def read_public_key(source: str) -> bytes:
    """The raw public key in the file ``source`` (- for standard input)."""
    try:
        text = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as error:
        raise KeyFileError(f"cannot read the key file: {error.strerror}") from None
    return load_public_key(text)


def client_json(record: ClientRecord) -> dict[str, Any]:
    return {
        "client_id": record.client_id,
        "public_key": base64.b64encode(record.public_key).decode(),
        "capabilities": list(record.capabilities),
        "created_at": record.created_at.isoformat(),
        "revoked_at": record.revoked_at.isoformat() if record.revoked_at else None,
    }


def client_line(record: ClientRecord) -> str:
    """One agent as a person reads it: its id first (scripts cut it), its state with a local date."""
    state = f"revoked {record.revoked_at.astimezone():%Y-%m-%d %H:%M}" if record.revoked_at else "active"
    fingerprint = base64.b64encode(record.public_key).decode()[:16]
    return f"{record.client_id:<24} {state:<18} key {fingerprint}…  {', '.join(record.capabilities)}"


@dataclass(frozen=True)
class AgentClients:
    """One service's registry of agents' keys, as its commands reach it. ``command`` names the
    commands in sentences ("capture clients"); ``factory`` builds the registry."""

    command: str
    factory: RegistryFactory

    def register(self, client_id: str, key: bytes, capabilities: Sequence[str] | None = None) -> ClientRecord:
        """Register (or re-register) ``client_id`` with its raw public key; a malformed id is USAGE."""

        async def register(registry: ClientSessions) -> ClientRecord:
            return await registry.register_client(client_id, key, capabilities)

        try:
            return self.run(register)
        except ValueError as error:
            raise CommandError(f"kronii: {self.command} add: {error}", exits.USAGE) from None

    def add(
        self, client_id: str, key: bytes, capabilities: Sequence[str] | None = None, *, as_json: bool = False
    ) -> None:
        record = self.register(client_id, key, capabilities)
        if as_json:
            click.echo(json.dumps(client_json(record)))
        else:
            click.echo(f"registered {record.client_id}: {', '.join(record.capabilities)}")

    def list_all(self, *, as_json: bool = False) -> None:
        async def everyone(registry: ClientSessions) -> list[ClientRecord]:
            return await registry.clients()

        records = self.run(everyone)
        if as_json:
            click.echo(json.dumps([client_json(record) for record in records]))
            return
        if not records:
            click.echo(f"no agents registered (add one with `kronii {self.command} add`)", err=True)
            return
        for record in records:
            click.echo(client_line(record))

    def revoke(self, client_id: str) -> None:
        """Revoke ``client_id`` and end its sessions; NOT_FOUND when no active client has that name."""

        async def revoke(registry: ClientSessions) -> bool:
            return await registry.revoke_client(client_id)

        if not self.run(revoke):
            raise CommandError(f"kronii: no active client named {client_id}", exits.NOT_FOUND)
        click.echo(f"revoked {client_id}; its sessions have ended")

    def run(self, action: Callable[[ClientSessions], Awaitable[_T]]) -> _T:
        """``action`` on the registry (PostgreSQL and Redis, as `kronii up` runs them or as
        KRONII_DATABASE_URL and KRONII_REDIS_URL say); either one down is UNREACHABLE."""
        import redis.asyncio as aioredis
        from kronii.launcher.status import infra_url
        from kronii.stores.db import make_engine, make_sessionmaker

        database, redis_url = infra_url("postgres"), infra_url("redis")

        async def run() -> _T:
            engine = make_engine(database)
            redis = aioredis.from_url(redis_url, socket_connect_timeout=3, socket_timeout=3)
            try:
                return await action(self.factory(redis, make_sessionmaker(engine)))
            finally:
                await redis.aclose()
                await engine.dispose()

        try:
            return asyncio.run(run())
        except Exception as error:
            sentence = self._store_sentence(error)
            if sentence is None:
                raise
            raise sentence from None

    def _store_sentence(self, error: Exception) -> CommandError | None:
        """A store that did not answer, or a database without the registry's table, as a sentence."""
        import redis.asyncio as aioredis
        from kronii.stores.durable import is_store_error

        if isinstance(error, OSError | aioredis.RedisError) or is_store_error(error):
            return CommandError(
                f"kronii: {self.command}: the database or Redis did not answer ({type(error).__name__})",
                exits.UNREACHABLE,
            )
        if type(getattr(error, "orig", None)).__name__ == "UndefinedTable":
            return CommandError(
                f"kronii: {self.command}: the database has no table of agents yet: run `kronii migrate`",
                exits.FAILED,
            )
        return None
