"""Nothing is acknowledged before it is durable.

A route that accepts work writes its row and its audit row before it answers. When PostgreSQL or
Redis cannot take them, the answer is 503 with `Retry-After` (gRPC: UNAVAILABLE), never a success
for work that may be lost, and never a 500. `StoreUnavailable` is what the services raise; the
driver errors of PostgreSQL and Redis are mapped the same way wherever they escape a route.
"""

from __future__ import annotations

import json
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import redis.exceptions
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from kronii.common.errors import Unavailable

__all__ = [
    "RETRY_AFTER_SECS",
    "AuditOutbox",
    "StoreUnavailable",
    "install_unavailable_handlers",
    "is_store_error",
    "store_error",
]

log = logging.getLogger(__name__)

RETRY_AFTER_SECS = 5


class StoreUnavailable(Unavailable):
    """The database or the queue cannot take the work now; the caller should retry."""

    def __init__(self, message: str, retry_after: int = RETRY_AFTER_SECS) -> None:
        super().__init__(message, retry_after_ms=retry_after * 1000)
        self.retry_after = retry_after


_DRIVER_ERRORS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionRefusedError,
    ConnectionResetError,
)


def is_store_error(error: BaseException) -> bool:
    if isinstance(error, (StoreUnavailable, *_DRIVER_ERRORS)):
        return True
    return isinstance(error, sqlalchemy.exc.DBAPIError) and bool(error.connection_invalidated)


def store_error(error: BaseException) -> StoreUnavailable:
    """The sentence for a driver error: which store, never the driver's text (it may carry a URL)."""
    if isinstance(error, StoreUnavailable):
        return error
    which = "Redis" if isinstance(error, redis.exceptions.RedisError) else "PostgreSQL"
    return StoreUnavailable(f"{which} is not reachable; nothing was done, try again shortly")


def install_unavailable_handlers(app: FastAPI) -> None:
    async def unavailable(_request: Request, error: Exception) -> JSONResponse:
        answer = store_error(error)
        log.warning("answered 503: %s (%s)", answer.message, type(error).__name__)
        return JSONResponse(
            {"detail": answer.message}, status_code=503, headers={"Retry-After": str(answer.retry_after)}
        )

    kinds: tuple[type[Exception], ...] = (StoreUnavailable, *_DRIVER_ERRORS)
    for kind in kinds:
        handler: Any = unavailable
        app.add_exception_handler(kind, handler)


class AuditOutbox:
    """Audit rows PostgreSQL could not take wait in a Redis list (append-only file) until it is back.

    Each row keeps its original time and carries an `outbox_id` in its detail, so a drain cut
    between its commit and its pop never writes the row twice.
    """

    def __init__(self, redis: Any, audit: Any, service: str) -> None:
        self.redis = redis
        self.audit = audit
        self.key = f"kronii:audit:outbox:{service}"

    async def keep(self, fields: dict[str, Any]) -> None:
        item = {**fields, "at": datetime.now(UTC).isoformat(), "outbox_id": uuid.uuid4().hex}
        await self.redis.rpush(self.key, json.dumps(item, default=str))

    async def waiting(self) -> int:
        return int(await self.redis.llen(self.key))

    async def drain_once(self) -> int:
        moved = 0
        while True:
            text = await self.redis.lindex(self.key, 0)
            if text is None:
                return moved
            item: dict[str, Any] = json.loads(text)
            outbox_id = item.pop("outbox_id")
            at = datetime.fromisoformat(item.pop("at"))
            if not await self.audit.has_outbox_row(outbox_id):
                detail = {**item.pop("detail", {}), "outbox_id": outbox_id}
                await self.audit.append(detail=detail, at=at, **item)
            await self.redis.lpop(self.key)
            moved += 1
