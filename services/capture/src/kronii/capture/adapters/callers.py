"""The capture service's own settings of kronii.edge's caller machinery: its local front door and
the registry of the peers behind it (kronii.edge.local_door), a person's proof of presence before
reading screenshots (kronii.edge.presence), and its agents' table and capabilities for their sign-in
(kronii.edge.client_sessions). Capability names cross into capture's Capability flags in
core.identity and the guard.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import redis.asyncio as aioredis
from kronii.capture.core.capabilities import AGENT_DEFAULT, CAPABILITY_NAMES, HUMAN_WINDOW, names
from kronii.edge.client_sessions import ClientSessions, clients_table
from kronii.edge.local_door import LocalFrontDoor, PeerPolicy, PeerRegistry
from kronii.edge.peers import PeerIdentity
from kronii.edge.polkit import PolkitClient
from kronii.edge.presence import PresenceGate
from kronii.edge.presence_rules import PresencePurpose
from kronii.foundation.audit_trail import AuditTrail
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = [
    "ACTION_READ_SCREENSHOTS",
    "PEERS",
    "READ_SCREENSHOTS",
    "capture_clients",
    "client_sessions",
    "front_door",
    "identity_for_peer",
    "presence_gate",
]

SERVICE = "capture"
ACTION_READ_SCREENSHOTS = "org.kronii.read-screenshots"

READ_SCREENSHOTS = PresencePurpose(
    service=SERVICE,
    polkit_action=ACTION_READ_SCREENSHOTS,
    doing="reading screenshots",
    to_do="read screenshots",
    command="kronii capture",
    grants=tuple(names(HUMAN_WINDOW)),
)

capture_clients = clients_table("capture_clients")

PEERS = PeerRegistry()


def identity_for_peer(peer: str) -> PeerIdentity | None:
    """The local client behind a gRPC ``context.peer()``, or None when the call did not come
    through the Unix socket (then it must carry an agent session)."""
    return PEERS.identity_for_peer(peer)


def front_door(
    path: Path,
    upstream: tuple[str, int],
    policy: PeerPolicy,
    *,
    peers: PeerRegistry = PEERS,
    record: AuditTrail | None = None,
    on_refused: Callable[[str], None] | None = None,
) -> LocalFrontDoor:
    return LocalFrontDoor(
        path, upstream, policy, service=SERVICE, peers=peers, record=record, on_refused=on_refused
    )


def presence_gate(
    redis: aioredis.Redis,
    polkit: PolkitClient,
    *,
    window_secs: float = 120.0,
    record: AuditTrail | None = None,
) -> PresenceGate:
    return PresenceGate(redis, polkit, READ_SCREENSHOTS, window_secs=window_secs, record=record)


def client_sessions(
    redis: aioredis.Redis,
    sessions: async_sessionmaker[AsyncSession],
    *,
    challenge_ttl_secs: int = 30,
    session_ttl_secs: int = 600,
) -> ClientSessions:
    return ClientSessions(
        redis,
        sessions,
        service=SERVICE,
        table=capture_clients,
        capabilities=CAPABILITY_NAMES,
        default_capabilities=names(AGENT_DEFAULT),
        challenge_ttl_secs=challenge_ttl_secs,
        session_ttl_secs=session_ttl_secs,
    )
