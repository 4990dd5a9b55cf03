"""Who a call comes from: a local process (kronii.edge.peers.PeerIdentity, as the kernel reports it)
or an authenticated agent.

Plain values shared by the adapters that establish them and the API layers that check them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from kronii.capture.core.capabilities import LOCAL_DEFAULT, Capability, parse_capabilities
from kronii.edge.peers import PeerIdentity
from kronii.foundation.errors import PermissionDenied

__all__ = ["Identity", "caller_key", "require"]


@dataclass(frozen=True)
class Identity:
    """Who a call comes from: a local process through the Unix socket, or an authenticated agent.

    ``proof`` says how a local caller's read capabilities were earned (a person's window: "tty",
    "polkit", or "window" for one still open); empty otherwise."""

    kind: Literal["local", "agent"]
    client_id: str
    uid: int | None
    pid: int | None
    exe: str
    capabilities: Capability
    proof: str = ""

    @classmethod
    def local(cls, peer: PeerIdentity, capabilities: Capability = LOCAL_DEFAULT) -> Identity:
        """A client that came through the Unix socket (see ``adapters.callers.identity_for_peer``); without a
        person's proof of presence it may only request captures (LOCAL_DEFAULT)."""
        return cls("local", f"uid:{peer.uid}", peer.uid, peer.pid, peer.exe, capabilities)

    @classmethod
    def agent(cls, client_id: str, capability_names: Iterable[str]) -> Identity:
        """An agent with a live session (kronii.edge.client_sessions.Session: its client id and
        registered capabilities' names)."""
        return cls("agent", client_id, None, None, "", parse_capabilities(capability_names))

    def allows(self, needed: Capability) -> bool:
        return needed in self.capabilities

    @property
    def actor(self) -> str:
        """The audit ``actor``: ``agent:<client_id>`` or ``local:uid:<uid>``."""
        return f"agent:{self.client_id}" if self.kind == "agent" else f"local:uid:{self.uid}"


def caller_key(peer: str, identity: Identity | None) -> str:
    """Whom the circuit breaker counts a call against."""
    if identity is None:
        # Unauthenticated: the host part of the peer, so one abusive address trips alone.
        return "peer:" + peer.rsplit(":", 1)[0]
    return identity.actor if identity.kind == "agent" else f"{identity.actor}:{identity.exe}"


def require(identity: Identity, capability: Capability) -> None:
    if not identity.allows(capability):
        raise PermissionDenied(f"this client lacks the {capability.name} capability")
