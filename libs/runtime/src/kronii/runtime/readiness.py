"""Nothing is acknowledged while the service says it is not ready.

Each service's runtime holds one `ReadinessGate`. Before the service has started (and once it is
stopping) every HTTP route but the health and documentation ones answers 503 with Retry-After and a
sentence (`StillStarting`), whatever the route's own code would have done with half its parts. A
route or gRPC method that acknowledges work it keeps only in memory (the pipeline's triggers, the
vision engine's plans, capture's requests) calls `require_ready()` first: while a required
dependency is not ready (what /readyz says, probed at most every `max_age_secs`), it is refused with
503 / UNAVAILABLE instead of an acknowledgement the service may not keep.

The gate reaches the route through a context variable that the runtime's HTTP middleware and gRPC
interceptor set for each call, so services in one process each see their own, and code run outside
a service (unit tests of a router) sees none and is not gated.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from kronii.edge.access import OPEN_HTTP_PATHS
from kronii.edge.api_edge import error_response
from kronii.edge.grpc_guard import rewrapped
from kronii.foundation.errors import StillStarting, Unavailable
from kronii.runtime.spec import DependencyStatus

__all__ = [
    "MAX_AGE_SECS",
    "GateInterceptor",
    "GateMiddleware",
    "ReadinessGate",
    "require_ready",
]

# How old a readiness verdict may be when a write asks for it.
MAX_AGE_SECS = 0.5
_DOC_PATHS = ("/docs", "/openapi.json", "/redoc")

Probe = Callable[[], Awaitable[dict[str, DependencyStatus]]]

_current: contextvars.ContextVar[ReadinessGate | None] = contextvars.ContextVar("kronii_gate", default=None)


class ReadinessGate:
    """`started` and `stopping` tell the service's phase; `probe` is its /readyz verdict."""

    def __init__(
        self,
        name: str,
        probe: Probe,
        *,
        started: Callable[[], bool],
        stopping: Callable[[], bool] = lambda: False,
        max_age_secs: float = MAX_AGE_SECS,
    ) -> None:
        self.name = name
        self.started = started
        self.stopping = stopping
        self._probe = probe
        self._max_age = max_age_secs
        self._status: dict[str, DependencyStatus] = {}
        self._at = -1e18
        self._probing: asyncio.Lock | None = None

    def note(self, status: dict[str, DependencyStatus]) -> None:
        """A verdict just probed (by /readyz, /metrics or the gate itself)."""
        self._status, self._at = status, time.monotonic()

    def starting_refusal(self) -> StillStarting | None:
        if self.stopping():
            return StillStarting(f"the {self.name} service is stopping; nothing was done, try again shortly")
        if not self.started():
            return StillStarting(
                f"the {self.name} service is still starting; nothing was done, try again in a moment"
            )
        return None

    async def refusal(self) -> Unavailable | None:
        """Why work may not be acknowledged now, or None."""
        starting = self.starting_refusal()
        if starting is not None:
            return starting
        if time.monotonic() - self._at > self._max_age:
            self._probing = self._probing or asyncio.Lock()
            async with self._probing:  # one probe for the writes that arrive together
                if time.monotonic() - self._at > self._max_age:
                    self.note(await self._probe())
        missing = sorted(name for name, item in self._status.items() if item.required and not item.ready)
        if not missing:
            return None
        return Unavailable(
            f"the {self.name} service is not ready ({', '.join(missing)}: see /readyz); "
            "nothing was accepted, try again shortly"
        )


async def require_ready() -> None:
    """Raise the 503 (gRPC UNAVAILABLE) for work the service cannot acknowledge now; does nothing
    outside a service's call."""
    gate = _current.get()
    if gate is None:
        return
    refusal = await gate.refusal()
    if refusal is not None:
        raise refusal


def _open_path(path: str) -> bool:
    return path in OPEN_HTTP_PATHS or path.startswith(_DOC_PATHS)


_Asgi = Callable[[Any, Any, Any], Awaitable[None]]


class GateMiddleware:
    """Pure ASGI: binds the gate for the request, and answers 503 before the service has started."""

    def __init__(self, app: _Asgi, gate: ReadinessGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or _open_path(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        refusal = self.gate.starting_refusal()
        if refusal is not None:
            await error_response(refusal)(scope, receive, send)
            return
        token = _current.set(self.gate)
        try:
            await self.app(scope, receive, send)
        finally:
            _current.reset(token)


def _bound(gate: ReadinessGate) -> Callable[[Any, bool, bool], Any]:
    def wrap(behaviour: Any, _streaming_in: bool, _streaming_out: bool) -> Any:
        def call(request: Any, context: Any) -> Any:
            # The behaviour's coroutine or generator runs in this call's context (a copy per RPC).
            _current.set(gate)
            return behaviour(request, context)

        return call

    return wrap


class GateInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc ships no stubs
    """Binds the gate for each call (gRPC serves only once the service has started)."""

    def __init__(self, gate: ReadinessGate) -> None:
        self.gate = gate

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return rewrapped(handler, _bound(self.gate))
