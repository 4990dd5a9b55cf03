"""Who a call comes from: a local process (as the kernel reports it) or an authenticated agent.

Plain values shared by the adapters that establish them and the API layers that check them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from kronii.capture.core.capabilities import LOCAL_DEFAULT, Capability
from kronii.common.errors import PermissionDenied

__all__ = ["Identity", "PeerIdentity", "caller_key", "require"]


@dataclass(frozen=True)
class PeerIdentity:
    """A local client as the kernel reports it. ``exe`` is empty when /proc would not tell;
    ``start_ticks`` (0 when unknown) tells the process from a later one that reuses its pid."""

    uid: int
    pid: int
    exe: str
    start_ticks: int = 0

    @property
    def exe_name(self) -> str:
        """The executable's file name, for log lines (which never carry a path)."""
        return os.path.basename(self.exe) if self.exe else "?"

    @property
    def actor(self) -> str:
        return f"uid:{self.uid}"


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
        """A client that came through the Unix socket (see ``access.identity_for_peer``); without a
        person's proof of presence it may only request captures (LOCAL_DEFAULT)."""
        return cls("local", f"uid:{peer.uid}", peer.uid, peer.pid, peer.exe, capabilities)

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
