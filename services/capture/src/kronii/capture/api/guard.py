"""Who is calling, may they, and the audit row: shared by the gRPC and HTTP layers.

A call through the Unix socket is a local client (peer uid/pid/exe from the front door's registry,
capabilities LOCAL_DEFAULT, plus READ_RAW_ENCRYPTED when the operator enabled it); any other call
needs an agent session (`authorization: Bearer <token>`). Failed calls count against the caller in
the circuit breaker; an open breaker refuses everything from that caller until it cools down.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kronii.capture.adapters.access import identity_for_peer
from kronii.capture.adapters.sessions import Identity
from kronii.capture.app import CaptureApp
from kronii.capture.core.breaker import BreakerState
from kronii.capture.core.capabilities import LOCAL_DEFAULT, Capability
from kronii.capture.errors import CaptureError

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
        """The caller, or CaptureError(unauthenticated)."""
        local = identity_for_peer(peer)
        if local is not None:
            caps = LOCAL_DEFAULT
            if self.app.settings is not None and self.app.settings.read_raw_encrypted_enabled:
                caps |= Capability.READ_RAW_ENCRYPTED
            return Identity("local", f"uid:{local.uid}", local.uid, local.pid, local.exe, caps)
        token = bearer_token(authorization)
        if token and self.app.clients is not None:
            session = await self.app.clients.resolve(token)
            if session is not None:
                identity = session.identity()
                return Identity(
                    identity.kind,
                    identity.client_id,
                    identity.uid,
                    identity.pid,
                    identity.exe,
                    self._effective(identity.capabilities),
                )
        raise CaptureError(
            "unauthenticated",
            "this call needs the local socket or an agent session (authorization: Bearer <session token>)",
        )

    async def identify_or_count(self, peer: str, authorization: str | None) -> Identity:
        """identify(), behind the unauthenticated callers' breaker (which counts the failure)."""
        try:
            return await self.identify(peer, authorization)
        except CaptureError as error:
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
            raise CaptureError(
                "resource_exhausted",
                f"too many failed calls from this client; try again in {max(1, wait // 1000)} s",
                retry_after_ms=wait,
            )

    @staticmethod
    def require(identity: Identity, capability: Capability) -> None:
        if not identity.allows(capability):
            raise CaptureError("permission_denied", f"this client lacks the {capability.name} capability")

    async def outcome(
        self,
        *,
        key: str,
        identity: Identity | None,
        operation: str,
        error: CaptureError | None,
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
                **detail,
            )
