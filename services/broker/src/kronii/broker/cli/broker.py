"""`kronii broker clients add|list|revoke|keygen`, `kronii broker audit`, `kronii broker shadow-dir`:
the input broker's side for agents and for the automation already on this machine.

- `clients`: the agents that may sign in to the broker with an Ed25519 key (PostgreSQL's
  `broker_clients`; sessions in Redis), shared with `kronii capture clients`
  (kronii.launcher.cli.agent_clients). `keygen` makes a key where the agents' client and the xdotool
  shim look for it, and registers it.
- `audit`: the automation compatibility audit of this machine (docs/AUTOMATION_COMPAT.md).
- `shadow-dir`: the directory of the `xdotool` shadow, for `export PATH="$(kronii broker shadow-dir):$PATH"`.

Exit codes (kronii.launcher.cli.exits): 0 done; 1 the key file already exists, or no migrations yet;
2 bad arguments (an unreadable or non-Ed25519 key, a bad client id); 3 no such client; 5 the database
or Redis is unreachable.

The database, Redis, the key library and the audit load inside the commands: `kronii broker --help`
and shell completion need only click."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from kronii.crypto.errors import KeyFileError
from kronii.launcher.cli import exits
from kronii.launcher.cli.agent_clients import AgentClients, client_json, read_public_key
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    import redis.asyncio as aioredis
    from kronii.edge.client_sessions import ClientSessions
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["BROKER_CLIENTS", "broker_command", "default_key_path", "main", "shadow_dir"]


def _broker_registry(redis: aioredis.Redis, sessions: async_sessionmaker[AsyncSession]) -> ClientSessions:
    from kronii.broker.adapters.callers import AgentRegistry

    return AgentRegistry(redis, sessions).clients


BROKER_CLIENTS = AgentClients("broker clients", _broker_registry)


def default_key_path(client_id: str) -> Path:
    """Where the agents' client and the xdotool shim look for ``client_id``'s private key when
    KRONII_BROKER_KEY_FILE does not say: $XDG_CONFIG_HOME/kronii/broker/<client id>.key."""
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "kronii" / "broker" / f"{client_id}.key"


def shadow_dir() -> Path:
    """The directory holding the `xdotool` shadow script: <data dir>/broker/shadow."""
    from kronii.foundation.settings import KroniiSettings, load_settings

    return Path(load_settings(KroniiSettings).data_dir) / "broker" / "shadow"


@click.group(
    "broker",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 failed, 2 usage, 3 not found, 5 unreachable.",
)
def broker_command() -> None:
    """Agents' keys, the automation audit and the xdotool shadow (the input broker)."""


@broker_command.group("clients", context_settings={"help_option_names": ["-h", "--help"]})
def clients_command() -> None:
    """Agents allowed to sign in to the broker with an Ed25519 key."""


@clients_command.command("add", short_help="register (or re-register) an agent's public key")
@click.argument("client_id")
@click.option(
    "--key", "--public-key", "key_file", required=True, type=click.Path(dir_okay=False, allow_dash=True),
    help="file with the public key: OpenSSH, PEM or base64 (- for stdin)",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print the registered client as JSON")
def add(client_id: str, key_file: str, as_json: bool) -> None:
    """Register (or re-register) CLIENT_ID (the agent's name, e.g. codex-main) with its public key;
    re-registering replaces the key and ends the agent's sessions."""
    try:
        key = read_public_key(key_file)
    except KeyFileError as error:
        raise CommandError(f"kronii: broker clients add: {error}", exits.USAGE) from None
    BROKER_CLIENTS.add(client_id, key, as_json=as_json)


@clients_command.command("list", short_help="the registered agents")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of lines")
def list_clients(as_json: bool) -> None:
    """The registered agents and their state (revoked dates are local; --json's are UTC)."""
    BROKER_CLIENTS.list_all(as_json=as_json)


@clients_command.command("revoke", short_help="revoke an agent and end its sessions")
@click.argument("client_id")
def revoke(client_id: str) -> None:
    """Revoke CLIENT_ID and end its sessions. Exit 3 when no active client has that name."""
    BROKER_CLIENTS.revoke(client_id)


@clients_command.command("keygen", short_help="make an agent a new key and register it")
@click.argument("client_id")
@click.option(
    "--key-file", type=click.Path(dir_okay=False), default=None,
    help="where to write the private key (default $XDG_CONFIG_HOME/kronii/broker/CLIENT_ID.key, where the "
    "agents' client and the xdotool shim look)",
)  # fmt: skip
@click.option("--force", is_flag=True, help="replace a key file that exists (the old key stops working)")
@click.option("--json", "as_json", is_flag=True, help="print the registered client and the key file as JSON")
def keygen(client_id: str, key_file: str | None, force: bool, as_json: bool) -> None:
    """Make CLIENT_ID a new Ed25519 key, write the private key only you can read (0600), and register
    its public key. The file appears only once the key is registered."""
    if not client_id or Path(client_id).name != client_id or client_id in (".", ".."):
        raise CommandError(
            f"kronii: broker clients keygen: {client_id!r} cannot name a key file", exits.USAGE
        )
    path = Path(key_file) if key_file else default_key_path(client_id)
    if path.exists() and not force:
        raise CommandError(
            f"kronii: broker clients keygen: {path} exists: use it (`kronii broker clients add {client_id} "
            "--key PUBFILE` for its public key), or replace it with --force",
            exits.FAILED,
        )
    private, public = _new_key()
    scratch = _write_private(path, private)
    try:
        record = BROKER_CLIENTS.register(client_id, public)
        os.replace(scratch, path)
    finally:
        scratch.unlink(missing_ok=True)
    if as_json:
        click.echo(json.dumps({**client_json(record), "key_file": str(path)}))
        return
    click.echo(f"registered {record.client_id}: {', '.join(record.capabilities)}")
    click.echo(f"private key: {path} (only you can read it)")


def _new_key() -> tuple[bytes, bytes]:
    """A new Ed25519 key: the private key as PEM (PKCS#8), the public key's 32 raw bytes."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return private, key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _write_private(path: Path, private: bytes) -> Path:
    """The key in a 0600 file beside ``path``, created by us alone (never through a link)."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(private)
    except OSError as error:
        raise CommandError(
            f"kronii: broker clients keygen: cannot write {path}: {error.strerror}", exits.FAILED
        ) from None
    return scratch


@broker_command.command(
    "audit", short_help="which automation tools are here, and how each can go through the broker"
)
@click.option(
    "--write", "write_to", type=click.Path(dir_okay=False), default=None, metavar="FILE",
    help="write the document to FILE (e.g. docs/AUTOMATION_COMPAT.md) instead of printing it",
)  # fmt: skip
def audit(write_to: str | None) -> None:
    """The automation compatibility audit of this machine, as Markdown: every tool that can inject
    input, whether it is installed or running here, its risk and how to route it through the broker."""
    from kronii.broker.cli.compat import audit_markdown

    document = audit_markdown()
    if write_to is None:
        click.echo(document, nl=not document.endswith("\n"))
        return
    try:
        Path(write_to).write_text(document)
    except OSError as error:
        raise CommandError(
            f"kronii: broker audit: cannot write {write_to}: {error.strerror}", exits.FAILED
        ) from None
    click.echo(f"wrote the automation audit to {write_to}", err=True)


@broker_command.command(
    "shadow-dir", short_help="print the directory of the xdotool shadow (put it first on PATH)"
)
def shadow_dir_command() -> None:
    """Write the `xdotool` shadow (it runs kronii's shim with this Python) and print its directory:
    `export PATH="$(kronii broker shadow-dir):$PATH"` sends xdotool's input through the broker."""
    from kronii.broker.cli.xdotool_shim import write_shadow_script

    directory = shadow_dir()
    try:
        write_shadow_script(directory, sys.executable)
    except OSError as error:
        raise CommandError(
            f"kronii: broker shadow-dir: cannot write the shadow in {directory}: {error.strerror}",
            exits.FAILED,
        ) from None
    click.echo(str(directory))


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii broker ...` as `kronii` runs it (same errors and exit codes); a leading "broker" is
    optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["broker"]:
        arguments = arguments[1:]
    return kronii_main(["broker", *arguments])
