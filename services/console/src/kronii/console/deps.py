"""What every page of the console is given once at start (the contract the pages are built against):
the settings, the clock, the bus, the other services by name, Redis, PostgreSQL and the audit log.

A page's `build(deps)` makes its use cases from these; its routes reach them through `page_state`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import redis.asyncio as aioredis
from kronii.console.ports import ServiceNotAnswering
from kronii.console.settings import ConsoleSettings
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.stores.bus import Bus
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["SERVICE_NAMES", "ConsoleDeps", "ServiceClients", "ServiceNotAnswering"]

# The services a page may ask, by the name `kronii up` gives them.
SERVICE_NAMES = ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision")


class ServiceClients(Protocol):
    """JSON over HTTP to another kronii service by name. Every failure (no answer, a refusal, a body
    that is not JSON) raises ServiceNotAnswering with a sentence; nothing else escapes."""

    async def get_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any: ...

    async def post_json(self, service: str, path: str, body: Any = None) -> Any: ...

    async def delete_json(self, service: str, path: str, params: Mapping[str, Any] | None = None) -> Any: ...


@dataclass(frozen=True)
class ConsoleDeps:
    settings: ConsoleSettings
    clock: Clock
    services: ServiceClients
    # The audit log: `await deps.record(actor=..., action="console.<action>", subject=..., outcome=..., **detail)`.
    record: AuditTrail
    bus: Bus | None = None
    redis: aioredis.Redis | None = None
    engine: AsyncEngine | None = None
