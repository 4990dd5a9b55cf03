"""Only a person approves a plan: the call must come through the vision engine's local socket (the
kernel names the calling process) with a proof of presence (polkit's org.kronii.approve-plan when
polkitd runs, else the TTY binding of kronii.edge.presence). An agent's process, a TCP caller or a
mesh token is never a person."""

from __future__ import annotations

from kronii.edge.local_door import PeerRegistry
from kronii.edge.presence import PresenceGate, PresenceRefused
from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER, PresencePurpose
from kronii.foundation.errors import PermissionDenied
from kronii.vision.core.commands import CallFacts

__all__ = ["APPROVE_PURPOSE", "PersonGate"]

APPROVE_PURPOSE = PresencePurpose(
    service="vision",
    polkit_action="org.kronii.approve-plan",
    doing="approving a plan of desktop actions",
    to_do="approve a plan",
    command="kronii vision approve",
    grants=("APPROVE",),
)

NOT_LOCAL = (
    "only a person approves a plan, through the vision engine's local socket: run "
    "`kronii vision approve PLAN` in a terminal, or use the desktop notification"
)


class PersonGate:
    def __init__(self, peers: PeerRegistry, presence: PresenceGate | None) -> None:
        self._peers = peers
        self._presence = presence

    async def person(self, facts: CallFacts) -> str:
        peer = self._peers.identity_for_peer(f"ipv4:{facts.peer_host}:{facts.peer_port}")
        if peer is None or self._presence is None:
            raise PermissionDenied(NOT_LOCAL)
        claim = {TTY_HEADER: facts.tty, SESSION_HEADER: facts.session}
        try:
            await self._presence.window(peer, claim)
        except PresenceRefused as refused:
            raise PermissionDenied(str(refused)) from None
        return f"person:uid:{peer.uid}"
