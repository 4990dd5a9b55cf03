"""Who is calling the broker, from the transport alone.

- An agent: a bearer token that is a live session of a registered agent (Ed25519 sign-in; the
  registry is PostgreSQL's ``broker_clients``, sessions live in Redis).
- The desktop's person: a call that came through the broker's local socket (the kernel's peer
  credentials: the broker's own uid) and carries a person's proof of presence (polkit when it runs,
  else the TTY binding), asked only for what only the person may do (grant, WAIT).
- Anyone else the mesh admitted (a process of the same user over loopback, or the mesh token).

Nothing in a request body or header can make a caller the person: an agent's token makes it an
agent, and a call over TCP is never the person, whatever it carries.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

import redis.asyncio as aioredis
from kronii.broker.core.callers import Caller
from kronii.broker.core.facts import CallFacts
from kronii.broker.core.results import AgentSession, SignInChallenge
from kronii.edge.client_sessions import AuthError, ClientSessions, clients_table
from kronii.edge.local_door import PeerRegistry
from kronii.edge.presence import PresenceGate, PresenceRefused
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER, PresencePurpose
from kronii.foundation.errors import InvalidArgument, PermissionDenied, Unauthenticated
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["BROKER_AGENT", "GRANT_PURPOSE", "AgentRegistry", "TransportGate", "broker_clients"]

broker_clients = clients_table("broker_clients")
# The one capability an agent registers with: to request, renew and inject under a lease.
BROKER_AGENT = "AGENT"

GRANT_PURPOSE = PresencePurpose(
    service="broker",
    polkit_action="org.kronii.grant-control",
    doing="giving an agent the desktop (a grant, more time, or letting it go on)",
    to_do="give an agent the desktop",
    command="kronii control grant (or renew, wait)",
    grants=("GRANT",),
)


def _bearer(value: str) -> str:
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class AgentRegistry:
    """The broker's side of the agents' sign-in (kronii.edge.client_sessions)."""

    def __init__(self, redis: aioredis.Redis, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.clients = ClientSessions(
            redis,
            sessions,
            service="broker",
            table=broker_clients,
            capabilities=(BROKER_AGENT,),
            default_capabilities=(BROKER_AGENT,),
        )

    async def begin(self, client_id: str) -> SignInChallenge:
        try:
            issued = await self.clients.begin(client_id)
        except (AuthError, ValueError) as error:
            raise InvalidArgument(str(error), field="client_id") from None
        return SignInChallenge(issued.challenge_id, issued.nonce)

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> AgentSession:
        try:
            session = await self.clients.authenticate(challenge_id, client_id, signature)
        except AuthError as error:
            raise Unauthenticated(error.message) from None
        return AgentSession(session.client_id, session.token, int(session.expires_at.timestamp() * 1000))

    async def resolve(self, token: str) -> str | None:
        session = await self.clients.resolve(token)
        return session.client_id if session is not None else None


class TransportGate:
    def __init__(
        self,
        agents: AgentRegistry,
        peers: PeerRegistry,
        presence: PresenceGate,
        *,
        mesh_token: str | None = None,
    ) -> None:
        self._agents = agents
        self._peers = peers
        self._presence = presence
        self._mesh_token = mesh_token or ""

    async def caller(self, facts: CallFacts, *, need_person: bool = False) -> Caller:
        token = _bearer(facts.authorization)
        if token and self._mesh_token and hmac.compare_digest(token.encode(), self._mesh_token.encode()):
            return Caller("local", "kronii")
        if token:
            agent = await self._agents.resolve(token)
            if agent is None:
                raise Unauthenticated("the agent session is unknown or has expired: sign in again")
            return Caller("agent", f"agent:{agent}", agent)
        peer = self._peers.identity_for_peer(f"ipv4:{facts.peer_host}:{facts.peer_port}")
        if peer is None:
            return Caller("local", "local")
        if not need_person:
            return Caller("local", f"local:uid:{peer.uid}")
        claim: Mapping[str, str] = {TTY_HEADER: facts.tty, SESSION_HEADER: facts.session}
        try:
            await self._presence.window(peer, claim)
        except PresenceRefused as refused:
            raise PermissionDenied(str(refused)) from None
        return Caller("person", f"person:uid:{peer.uid}")
