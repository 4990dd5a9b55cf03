"""Proof that a person is there before an unregistered local process does something sensitive.

polkit when its authority owns its name on the system bus (CheckAuthorization of the service's
action for the caller's process, the person's agent asking them); else the TTY binding (the client's
claimed terminal and session, cross-checked with /proc). A proof opens a window in Redis that
expires by itself; a call after that asks again. Every proof, given or refused, is an audit row
``<service>.presence``. What the proof is for, and in which words, is a
:class:`~kronii.edge.presence_rules.PresencePurpose`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from kronii.edge.peers import PeerIdentity, ProcFacts
from kronii.edge.polkit import PolkitClient, PolkitError
from kronii.edge.presence_rules import (
    SESSION_HEADER,
    TTY_HEADER,
    PresencePurpose,
    TtyClaim,
    polkit_refusal,
    tty_refusal,
    window_key,
)
from kronii.edge.procinfo import claimed_device, proc_facts
from kronii.foundation.audit_trail import AuditTrail

__all__ = ["Presence", "PresenceGate", "PresenceRefused", "tty_claim"]

log = logging.getLogger(__name__)


class PresenceRefused(Exception):
    """No proof of presence; ``str()`` is the sentence for the caller."""


@dataclass(frozen=True)
class Presence:
    """A person's window: the capability names it grants (the purpose's ``grants``) and how it was
    proven ("tty", "polkit", or "window" when an earlier proof's window was still open)."""

    capabilities: tuple[str, ...]
    proof: str


def tty_claim(metadata: Mapping[str, str]) -> TtyClaim | None:
    name = metadata.get(TTY_HEADER, "").strip()
    if not name:
        return None
    session_text = metadata.get(SESSION_HEADER, "").strip()
    session = int(session_text) if session_text.isdigit() else None
    return TtyClaim(name=name, device=claimed_device(name), session=session)


def _tty_label(name: str) -> str:
    # "pts/3" for the audit row: the device, not a filesystem path.
    return name.removeprefix("/dev/")[:32]


class PresenceGate:
    def __init__(
        self,
        redis: aioredis.Redis,
        polkit: PolkitClient,
        purpose: PresencePurpose,
        *,
        window_secs: float = 120.0,
        record: AuditTrail | None = None,
    ) -> None:
        self._redis = redis
        self._polkit = polkit
        self._purpose = purpose
        self._window_ms = max(1, int(window_secs * 1000))
        self._record = record

    async def window(self, peer: PeerIdentity, metadata: Mapping[str, str]) -> Presence:
        """The caller's open window, or a fresh proof; PresenceRefused with a sentence."""
        facts = proc_facts(peer.pid, peer.uid)
        if facts is None or (peer.start_ticks and facts.start_ticks != peer.start_ticks):
            await self._audit(peer, "refused", "", "the calling process is gone", {})
            raise PresenceRefused("the calling process could not be looked up, so it cannot be checked")
        key = self._purpose.window_prefix + window_key(facts)
        if await self._redis.exists(key):
            return Presence(self._purpose.grants, "window")
        method, refusal, detail = await self._prove(peer, facts, metadata)
        if refusal is not None:
            await self._audit(peer, "refused", method, refusal, detail)
            raise PresenceRefused(refusal)
        opened = json.dumps({"method": method, "pid": peer.pid, "at_ms": int(time.time() * 1000)})
        await self._redis.set(key, opened, px=self._window_ms)
        await self._audit(peer, "ok", method, "", {**detail, "window_ms": self._window_ms})
        return Presence(self._purpose.grants, method)

    async def _prove(
        self, peer: PeerIdentity, facts: ProcFacts, metadata: Mapping[str, str]
    ) -> tuple[str, str | None, dict[str, Any]]:
        detail: dict[str, Any] = {"session": facts.session}
        if await self._polkit.available():
            refusal = await self._ask_polkit(peer, facts)
            return "polkit", refusal, {**detail, "polkit_action": self._purpose.polkit_action}
        claim = tty_claim(metadata)
        if claim is not None:
            detail["tty"] = _tty_label(claim.name)
        return "tty", tty_refusal(claim, facts, self._purpose), detail

    async def _ask_polkit(self, peer: PeerIdentity, facts: ProcFacts) -> str | None:
        try:
            answer = await self._polkit.check(
                pid=peer.pid, start_ticks=facts.start_ticks, uid=peer.uid, action=self._purpose.polkit_action
            )
        except PolkitError as error:
            return str(error)
        if answer.authorized:
            return None
        return polkit_refusal(self._purpose, challenge=answer.challenge)

    async def _audit(
        self, peer: PeerIdentity, outcome: str, method: str, reason: str, detail: dict[str, Any]
    ) -> None:
        if outcome != "ok":
            log.warning(
                "%s: no proof of presence from pid %d (%s): %s",
                self._purpose.service,
                peer.pid,
                peer.exe_name,
                reason,
            )
        if self._record is None:
            return
        await self._record(
            actor=f"local:uid:{peer.uid}",
            action=self._purpose.audit_action,
            outcome=outcome,
            uid=peer.uid,
            pid=peer.pid,
            exe=peer.exe,
            method=method,
            capabilities=list(self._purpose.grants) if outcome == "ok" else [],
            reason=reason,
            **detail,
        )
