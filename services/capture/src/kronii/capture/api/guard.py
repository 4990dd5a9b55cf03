"""Who is calling, may they, and the audit row: shared by the gRPC and HTTP layers.

A call with a live agent session (`authorization: Bearer <token>`) is that agent, with its
registered capabilities, whichever way it came in. Any other call through the Unix socket is a
local client (peer uid/pid/exe from the front door's registry) that may request captures
(LOCAL_DEFAULT, unless the operator turned that off); to read screenshots or their metadata it needs
a person's proof of presence (adapters.presence), which opens a short read-only window. Other calls
are refused. Failed calls count against the caller in the circuit breaker; an open breaker refuses
everything from that caller until it cools down.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kronii.capture.adapters.access import identity_for_peer
from kronii.capture.adapters.presence import PresenceRefused
from kronii.capture.adapters.sessions import Identity
from kronii.capture.app import CaptureApp
from kronii.capture.core.breaker import BreakerState
from kronii.capture.core.capabilities import HUMAN_WINDOW, LOCAL_DEFAULT, Capability
from kronii.common.errors import KroniiError, PermissionDenied, ResourceExhausted, Unauthenticated

log = logging.getLogger(__name__)

__all__ = ["Guard", "bearer_token"]

# Failures that say something about the caller (not about the service).
_COUNTED = frozenset({"unauthenticated", "permission_denied"})


def bearer_token(value: str | None) -> str:
    if not value:
        return ""
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _now_ms() -> int:
    return int(time.time() * 1000)


class Guard:
    def __init__(self, app: CaptureApp) -> None:
        self.app = app

    def _effective(self, capabilities: Capability) -> Capability:
        settings = self.app.settings
        if settings is None or not settings.read_raw_encrypted_enabled:
            return capabilities & ~Capability.READ_RAW_ENCRYPTED
        return capabilities

    async def identify(self, peer: str, authorization: str | None) -> Identity:
        """The caller, or Unauthenticated."""
        token = bearer_token(authorization)
        if token and self.app.clients is not None:
            session = await self.app.clients.resolve(token)
            if session is not None:
                identity = session.identity()
                return replace(identity, capabilities=self._effective(identity.capabilities))
        local = identity_for_peer(peer)
        if local is not None:
            settings = self.app.settings
            allowed = settings is None or settings.local_request_capture
            return Identity.local(local, LOCAL_DEFAULT if allowed else Capability.NONE)
        raise Unauthenticated(
            "this call needs the local socket or an agent session (authorization: Bearer <session token>)",
        )

    async def authorize(
        self, peer: str, identity: Identity, needed: Capability, metadata: Mapping[str, str]
    ) -> Identity:
        """A local caller that lacks a read capability it needs gets it from a person's window
        (open, or proven now); anyone else is returned as they are, for ``require`` to judge."""
        gate = self.app.presence
        if identity.kind != "local" or identity.allows(needed) or needed not in HUMAN_WINDOW:
            return identity
        local = identity_for_peer(peer)
        if gate is None or local is None or needed is Capability.NONE:
            return identity
        try:
            presence = await gate.window(local, metadata)
        except PresenceRefused as refused:
            raise PermissionDenied(str(refused)) from None
        return replace(
            identity, capabilities=identity.capabilities | presence.capabilities, proof=presence.proof
        )

    async def identify_or_count(self, peer: str, authorization: str | None) -> Identity:
        """identify(), behind the unauthenticated callers' breaker (which counts the failure)."""
        try:
            return await self.identify(peer, authorization)
        except KroniiError as error:
            key = self.caller_key(peer, None)
            self.admit(key)
            self.count_failure(key, error.code)
            raise

    def count_failure(self, key: str, code: str) -> None:
        """A failed call against the caller's breaker; say so (log, metric) when it trips."""
        app, now = self.app, _now_ms()
        was_open = app.breaker.state(key, now) is BreakerState.OPEN
        if app.breaker.record_failure(key, now, code) is BreakerState.OPEN and not was_open:
            if app.metrics is not None:
                app.metrics.breaker_opened.inc()
            log.warning("capture: too many failed calls from one client (%s); refusing it for a while", code)

    @staticmethod
    def caller_key(peer: str, identity: Identity | None) -> str:
        if identity is None:
            # Unauthenticated: the host part of the peer, so one abusive address trips alone.
            return "peer:" + peer.rsplit(":", 1)[0]
        return identity.actor if identity.kind == "agent" else f"{identity.actor}:{identity.exe}"

    def admit(self, key: str) -> None:
        if not self.app.breaker.allow(key, _now_ms()):
            wait = self.app.breaker.retry_after_ms(key, _now_ms())
            raise ResourceExhausted(
                f"too many failed calls from this client; try again in {max(1, wait // 1000)} s",
                retry_after_ms=wait,
            )

    @staticmethod
    def require(identity: Identity, capability: Capability) -> None:
        if not identity.allows(capability):
            raise PermissionDenied(f"this client lacks the {capability.name} capability")

    async def outcome(
        self,
        *,
        key: str,
        identity: Identity | None,
        operation: str,
        error: KroniiError | None,
        subject: str = "",
        **detail: Any,
    ) -> None:
        """Count the call for the breaker and write its audit row."""
        app = self.app
        if (
            error is not None
            and error.code in _COUNTED
            and not (identity is None and error.code == "unauthenticated")
        ):
            now = _now_ms()
            was_open = app.breaker.state(key, now) is BreakerState.OPEN
            if app.breaker.record_failure(key, now, error.code) is BreakerState.OPEN and not was_open:
                if app.metrics is not None:
                    app.metrics.breaker_opened.inc()
                log.warning(
                    "capture: too many failed calls from one client; refusing it for a while (%s)", error.code
                )
        elif error is None:
            app.breaker.record_success(key, _now_ms())
        result = "ok" if error is None else error.code
        if app.metrics is not None:
            app.metrics.access.labels(operation, result).inc()
        if app.ctx is not None:
            await app.ctx.record(
                actor=identity.actor if identity is not None else key,
                action=f"capture.{operation}",
                subject=subject,
                outcome=result,
                client_kind=identity.kind if identity is not None else "unknown",
                pid=identity.pid if identity is not None else None,
                exe=identity.exe if identity is not None else "",
                reason="" if error is None else error.message,
                **({"proof": identity.proof} if identity is not None and identity.proof else {}),
                **detail,
            )
