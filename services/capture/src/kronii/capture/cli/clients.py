"""`kronii capture clients add|list|revoke`: the agents allowed to reach the capture service over TCP.

An agent proves who it is by signing a challenge with its Ed25519 private key; the service checks the
signature against the public key registered here and grants the capabilities registered with it (by
default READ_REDACTED and REQUEST_CAPTURE). Local processes of this user need no registration: they
come through the Unix socket. Exit codes: 0 done; 2 bad arguments (an unreadable or non-Ed25519 key,
an unknown capability); 3 no such client; 5 the database or Redis is unreachable.

The key parsing and the registry's commands are shared with `kronii broker clients`
(kronii.launcher.cli.agent_clients); what is the capture service's own is its capabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from click.shell_completion import CompletionItem
from kronii.capture.core.capabilities import AGENT_DEFAULT, Capability, names, parse_capabilities
from kronii.crypto.errors import KeyFileError
from kronii.launcher.cli import exits
from kronii.launcher.cli.agent_clients import AgentClients, load_public_key, read_public_key
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    import redis.asyncio as aioredis
    from kronii.edge.client_sessions import ClientSessions
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["CAPTURE_CLIENTS", "clients_command", "load_public_key"]


def _capture_registry(redis: aioredis.Redis, sessions: async_sessionmaker[AsyncSession]) -> ClientSessions:
    # The database and Redis clients load here, not with the CLI: `kronii capture get` starts faster.
    from kronii.capture.adapters.callers import client_sessions

    return client_sessions(redis, sessions)


CAPTURE_CLIENTS = AgentClients("capture clients", _capture_registry)


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
        key = read_public_key(public_key)
        granted = parse_capabilities(capabilities) if capabilities else AGENT_DEFAULT
    except (KeyFileError, ValueError) as error:
        raise CommandError(f"kronii: capture clients add: {error}", exits.USAGE) from None
    CAPTURE_CLIENTS.add(client_id, key, names(granted), as_json=as_json)


@clients_command.command("list", short_help="the registered agents and their capabilities")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of lines")
def list_clients(as_json: bool) -> None:
    """The registered agents, their state (revoked dates are local) and capabilities."""
    CAPTURE_CLIENTS.list_all(as_json=as_json)


@clients_command.command("revoke", short_help="revoke an agent and end its sessions")
@click.argument("client_id")
def revoke(client_id: str) -> None:
    """Revoke CLIENT_ID and end its sessions. Exit 3 when no active client has that name."""
    CAPTURE_CLIENTS.revoke(client_id)
