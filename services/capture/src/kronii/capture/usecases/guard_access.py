"""Who is calling, may they, and the audit row: shared by the gRPC and HTTP layers.

A call with a live agent session (`authorization: Bearer <token>`) is that agent, with its
registered capabilities, whichever way it came in. Any other call through the Unix socket is a
local client (peer uid/pid/exe from the front door's registry) that may request captures
(LOCAL_DEFAULT, unless the operator turned that off); to read screenshots or their metadata it needs
a person's proof of presence (kronii.edge.presence), which opens a short read-only window. Other calls
are refused. Failed calls count against the caller in the circuit breaker; an open breaker refuses
everything from that caller until it cools down. Agents sign in here too (challenge, then signature).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from kronii.capture.core.breaker import BreakerState, CircuitBreaker
from kronii.capture.core.capabilities import HUMAN_WINDOW, LOCAL_DEFAULT, Capability, parse_capabilities
from kronii.capture.core.identity import Identity, caller_key
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import ClientDirectory, PresenceCheck
from kronii.capture.settings import CaptureSettings
from kronii.edge.client_sessions import AuthError, Challenge, Session
from kronii.edge.peers import PeerIdentity
from kronii.edge.presence import PresenceRefused
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import (
    InvalidArgument,
    KroniiError,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
)

log = logging.getLogger(__name__)

__all__ = ["Guard", "bearer_token", "breaker_for"]

# Failures that say something about the caller (not about the service).
_COUNTED = frozenset({"unauthenticated", "permission_denied"})

PeerLookup = Callable[[str], PeerIdentity | None]


def bearer_token(value: str | None) -> str:
    if not value:
        return ""
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def breaker_for(settings: CaptureSettings) -> CircuitBreaker:
    return CircuitBreaker(
        settings.breaker_failures,
        int(settings.breaker_window_secs * 1000),
        int(settings.breaker_open_secs * 1000),
    )


class Guard:
    def __init__(
        self,
        *,
        settings: CaptureSettings,
        clients: ClientDirectory,
        presence: PresenceCheck,
        peers: PeerLookup,
        breaker: CircuitBreaker,
        metrics: CaptureMetrics,
        record: AuditTrail,
        clock: Clock,
    ) -> None:
        self._settings = settings
        self._clients = clients
        self._presence = presence
        self._peers = peers
        self._breaker = breaker
        self._metrics = metrics
        self._record = record
        self._clock = clock

    def _effective(self, capabilities: Capability) -> Capability:
        if not self._settings.read_raw_encrypted_enabled:
            return capabilities & ~Capability.READ_RAW_ENCRYPTED
        return capabilities

    async def identify(self, peer: str, authorization: str | None) -> Identity:
        """The caller, or Unauthenticated."""
        token = bearer_token(authorization)
        if token:
            session = await self._clients.resolve(token)
            if session is not None:
                identity = Identity.agent(session.client_id, session.capabilities)
                return replace(identity, capabilities=self._effective(identity.capabilities))
        local = self._peers(peer)
        if local is not None:
            allowed = self._settings.local_request_capture
            return Identity.local(local, LOCAL_DEFAULT if allowed else Capability.NONE)
        raise Unauthenticated(
            "this call needs the local socket or an agent session (authorization: Bearer <session token>)",
        )

    async def authorize(
        self, peer: str, identity: Identity, needed: Capability, metadata: Mapping[str, str]
    ) -> Identity:
        """A local caller that lacks a read capability it needs gets it from a person's window
        (open, or proven now); anyone else is returned as they are, for ``require`` to judge."""
        if identity.kind != "local" or identity.allows(needed) or needed not in HUMAN_WINDOW:
            return identity
        local = self._peers(peer)
        if local is None or needed is Capability.NONE:
            return identity
        try:
            presence = await self._presence.window(local, metadata)
        except PresenceRefused as refused:
            raise PermissionDenied(str(refused)) from None
        granted = parse_capabilities(presence.capabilities)
        return replace(identity, capabilities=identity.capabilities | granted, proof=presence.proof)

    async def identify_or_count(self, peer: str, authorization: str | None) -> Identity:
        """identify(), behind the unauthenticated callers' breaker (which counts the failure)."""
        try:
            return await self.identify(peer, authorization)
        except KroniiError as error:
            key = caller_key(peer, None)
            self.admit(key)
            self._count_failure(key, error.code)
            raise

    def _count_failure(self, key: str, code: str) -> None:
        """A failed call against the caller's breaker; say so (log, metric) when it trips."""
        now = self._clock.wall_ms()
        was_open = self._breaker.state(key, now) is BreakerState.OPEN
        if self._breaker.record_failure(key, now, code) is BreakerState.OPEN and not was_open:
            self._metrics.breaker_opened.inc()
            log.warning("capture: too many failed calls from one client (%s); refusing it for a while", code)

    def admit(self, key: str) -> None:
        if not self._breaker.allow(key, self._clock.wall_ms()):
            wait = self._breaker.retry_after_ms(key, self._clock.wall_ms())
            raise ResourceExhausted(
                f"too many failed calls from this client; try again in {max(1, wait // 1000)} s",
                retry_after_ms=wait,
            )

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
        self._count_outcome(key, identity, error)
        result = "ok" if error is None else error.code
        self._metrics.access.labels(operation, result).inc()
        await self._record(
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

    def _count_outcome(self, key: str, identity: Identity | None, error: KroniiError | None) -> None:
        """A success, or a failure that says something about the caller, on the caller's breaker (an
        unidentified caller's failed identification was counted by identify_or_count)."""
        if error is None:
            self._breaker.record_success(key, self._clock.wall_ms())
            return
        if error.code not in _COUNTED or (identity is None and error.code == "unauthenticated"):
            return
        now = self._clock.wall_ms()
        was_open = self._breaker.state(key, now) is BreakerState.OPEN
        if self._breaker.record_failure(key, now, error.code) is BreakerState.OPEN and not was_open:
            self._metrics.breaker_opened.inc()
            log.warning(
                "capture: too many failed calls from one client; refusing it for a while (%s)", error.code
            )

    # ---- agents' sign-in -------------------------------------------------------------------------

    async def begin_challenge(self, client_id: str) -> Challenge:
        """A nonce for the agent to sign; a malformed client id is InvalidArgument."""
        try:
            return await self._clients.begin(client_id)
        except (AuthError, ValueError) as error:  # AuthError here: the client id is malformed
            raise InvalidArgument(str(error), field="client_id") from None

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session:
        """A session for a good signature over the challenge's nonce; Unauthenticated otherwise."""
        try:
            return await self._clients.authenticate(challenge_id, client_id, signature)
        except AuthError as error:
            raise Unauthenticated(error.message) from None
        except ValueError as error:
            raise InvalidArgument(str(error), field="client_id") from None
