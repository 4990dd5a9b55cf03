"""`kronii capture clients add|list|revoke`: the agents allowed to reach the capture service over TCP.

An agent proves who it is by signing a challenge with its Ed25519 private key; the service checks the
signature against the public key registered here and grants the capabilities registered with it (by
default READ_REDACTED and REQUEST_CAPTURE). Local processes of this user need no registration: they
come through the Unix socket. Exit codes: 0 done; 1 the database or Redis is unreachable, or no
such client; 2 bad arguments (an unreadable or non-Ed25519 key, an unknown capability).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from kronii.capture.core.capabilities import AGENT_DEFAULT, Capability, names, parse_capabilities

if TYPE_CHECKING:
    from kronii.capture.adapters.sessions import ClientRecord

__all__ = ["add_clients_parser", "load_public_key", "run_clients"]


class KeyFileError(ValueError):
    """The public key file cannot be used; the message says why."""


def load_public_key(text: bytes) -> bytes:
    """The 32 raw bytes of an Ed25519 public key given as OpenSSH (`ssh-ed25519 AAAA...`), PEM
    (`-----BEGIN PUBLIC KEY-----`), or base64 / hex of the raw 32 bytes."""
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


def add_clients_parser(capture_actions: Any) -> None:
    clients = capture_actions.add_parser("clients", help="agents allowed in with an Ed25519 key")
    sub = clients.add_subparsers(dest="clients_command", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="register (or re-register) an agent's public key")
    add.add_argument("client_id", help="the agent's name, e.g. codex-main")
    add.add_argument(
        "--public-key", required=True, help="file with the key: OpenSSH, PEM or base64 (- for stdin)"
    )
    add.add_argument(
        "--capability",
        action="append",
        default=None,
        help=f"grant this capability (repeatable; default {', '.join(names(AGENT_DEFAULT))}); "
        f"one of {', '.join(names(~Capability(0)))}",
    )
    sub.add_parser("list", help="the registered agents and their capabilities")
    revoke = sub.add_parser("revoke", help="revoke an agent and end its sessions")
    revoke.add_argument("client_id")


def run_clients(args: argparse.Namespace) -> int:
    # The database and Redis clients load here, not with the CLI: `kronii capture get` starts faster.
    import redis.asyncio as aioredis
    from kronii.capture.adapters.sessions import ClientSessions
    from kronii.common.db import make_engine, make_sessionmaker
    from kronii.common.status import infra_url

    try:
        if args.clients_command == "add":
            source = sys.stdin.buffer.read() if args.public_key == "-" else Path(args.public_key).read_bytes()
            public_key = load_public_key(source)
            capabilities = parse_capabilities(args.capability) if args.capability else AGENT_DEFAULT
    except (KeyFileError, ValueError) as error:
        print(f"kronii: capture clients add: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"kronii: capture clients add: cannot read the key file: {error.strerror}", file=sys.stderr)
        return 2
    database, redis_url = infra_url("postgres"), infra_url("redis")

    async def run() -> int:
        engine = make_engine(database)
        redis = aioredis.from_url(redis_url, socket_connect_timeout=3, socket_timeout=3)
        try:
            registry = ClientSessions(redis, make_sessionmaker(engine))
            if args.clients_command == "add":
                record = await registry.register_client(args.client_id, public_key, capabilities)
                print(f"registered {record.client_id}: {', '.join(names(record.capabilities))}")
                return 0
            if args.clients_command == "revoke":
                if await registry.revoke_client(args.client_id):
                    print(f"revoked {args.client_id}; its sessions have ended")
                    return 0
                print(f"kronii: no active client named {args.client_id}", file=sys.stderr)
                return 1
            for record in await registry.clients():
                print(_row(record))
            return 0
        finally:
            await redis.aclose()
            await engine.dispose()

    try:
        return asyncio.run(run())
    except (OSError, aioredis.RedisError) as error:
        print(
            f"kronii: capture clients: the database or Redis did not answer ({type(error).__name__})",
            file=sys.stderr,
        )
        return 1


def _row(record: ClientRecord) -> str:
    state = f"revoked {record.revoked_at:%Y-%m-%d}" if record.revoked_at else "active"
    fingerprint = base64.b64encode(record.public_key).decode()[:16]
    return f"{record.client_id:<24} {state:<18} key {fingerprint}…  {', '.join(names(record.capabilities))}"
