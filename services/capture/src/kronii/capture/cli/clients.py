"""`kronii capture clients add|list|revoke`: the agents allowed to reach the capture service over TCP.

An agent proves who it is by signing a challenge with its Ed25519 private key; the service checks the
signature against the public key registered here and grants the capabilities registered with it (by
default READ_REDACTED and REQUEST_CAPTURE). Local processes of this user need no registration: they
come through the Unix socket. Exit codes: 0 done; 2 bad arguments (an unreadable or non-Ed25519 key,
an unknown capability); 3 no such client; 5 the database or Redis is unreachable.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem
from kronii.capture.core.capabilities import AGENT_DEFAULT, Capability, names, parse_capabilities
from kronii.common.cli import exits
from kronii.common.cli.exits import CommandError

if TYPE_CHECKING:
    from kronii.common.client_sessions import ClientRecord, ClientSessions

__all__ = ["clients_command", "load_public_key"]


class KeyFileError(ValueError):
    """The public key file cannot be used; the message says why."""


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


def _complete_capability(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    known = names(~Capability(0))
    return [CompletionItem(name) for name in known if name.lower().startswith(incomplete.lower())]


@click.group("clients", context_settings={"help_option_names": ["-h", "--help"]})
def clients_command() -> None:
    """Agents allowed in over TCP with an Ed25519 key."""


@clients_command.command("add", short_help="register (or re-register) an agent's public key")
@click.argument("client_id")
@click.option(
    "--public-key", required=True, type=click.Path(dir_okay=False, allow_dash=True),
    help="file with the key: OpenSSH, PEM or base64 (- for stdin)",
)  # fmt: skip
@click.option(
    "--capability", "capabilities", multiple=True, shell_complete=_complete_capability,
    help=f"grant this capability (repeatable; default {', '.join(names(AGENT_DEFAULT))}); "
    f"one of {', '.join(names(~Capability(0)))}",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print the registered client as JSON")
def add(client_id: str, public_key: str, capabilities: tuple[str, ...], as_json: bool) -> None:
    """Register (or re-register) CLIENT_ID (the agent's name, e.g. codex-main) with its public key."""
    try:
        source = sys.stdin.buffer.read() if public_key == "-" else Path(public_key).read_bytes()
        key = load_public_key(source)
        granted = parse_capabilities(capabilities) if capabilities else AGENT_DEFAULT
    except (KeyFileError, ValueError) as error:
        raise CommandError(f"kronii: capture clients add: {error}", exits.USAGE) from None
    except OSError as error:
        raise CommandError(
            f"kronii: capture clients add: cannot read the key file: {error.strerror}", exits.USAGE
        ) from None

    async def register(registry: ClientSessions) -> None:
        record = await registry.register_client(client_id, key, names(granted))
        if as_json:
            click.echo(json.dumps(client_json(record)))
        else:
            click.echo(f"registered {record.client_id}: {', '.join(record.capabilities)}")

    _with_registry(register)


@clients_command.command("list", short_help="the registered agents and their capabilities")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of lines")
def list_clients(as_json: bool) -> None:
    """The registered agents, their state (revoked dates are local) and capabilities."""

    async def show(registry: ClientSessions) -> None:
        records = await registry.clients()
        if as_json:
            click.echo(json.dumps([client_json(record) for record in records]))
            return
        for record in records:
            click.echo(_row(record))

    _with_registry(show)


@clients_command.command("revoke", short_help="revoke an agent and end its sessions")
@click.argument("client_id")
def revoke(client_id: str) -> None:
    """Revoke CLIENT_ID and end its sessions. Exit 3 when no active client has that name."""

    async def run(registry: ClientSessions) -> None:
        if not await registry.revoke_client(client_id):
            raise CommandError(f"kronii: no active client named {client_id}", exits.NOT_FOUND)
        click.echo(f"revoked {client_id}; its sessions have ended")

    _with_registry(run)


def _with_registry(action: Callable[[ClientSessions], Awaitable[None]]) -> None:
    """Run `action` on the client registry (PostgreSQL and Redis); either down is UNREACHABLE."""
    # The database and Redis clients load here, not with the CLI: `kronii capture get` starts faster.
    import redis.asyncio as aioredis
    from kronii.capture.adapters.callers import client_sessions
    from kronii.common.db import make_engine, make_sessionmaker
    from kronii.common.status import infra_url

    database, redis_url = infra_url("postgres"), infra_url("redis")

    async def run() -> None:
        engine = make_engine(database)
        redis = aioredis.from_url(redis_url, socket_connect_timeout=3, socket_timeout=3)
        try:
            await action(client_sessions(redis, make_sessionmaker(engine)))
        finally:
            await redis.aclose()
            await engine.dispose()

    try:
        asyncio.run(run())
    except (OSError, aioredis.RedisError) as error:
        raise CommandError(
            f"kronii: capture clients: the database or Redis did not answer ({type(error).__name__})",
            exits.UNREACHABLE,
        ) from None


def client_json(record: ClientRecord) -> dict[str, Any]:
    return {
        "client_id": record.client_id,
        "public_key": base64.b64encode(record.public_key).decode(),
        "capabilities": list(record.capabilities),
        "created_at": record.created_at.isoformat(),
        "revoked_at": record.revoked_at.isoformat() if record.revoked_at else None,
    }


def _row(record: ClientRecord) -> str:
    state = f"revoked {record.revoked_at.astimezone():%Y-%m-%d %H:%M}" if record.revoked_at else "active"
    fingerprint = base64.b64encode(record.public_key).decode()[:16]
    return f"{record.client_id:<24} {state:<18} key {fingerprint}…  {', '.join(record.capabilities)}"
