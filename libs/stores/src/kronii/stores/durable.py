"""Nothing is acknowledged before it is durable.

A route that accepts work writes its row and its audit row before it answers. When PostgreSQL or
Redis cannot take them, the answer is 503 with `Retry-After` (gRPC: UNAVAILABLE), never a success
for work that may be lost, and never a 500. `StoreUnavailable` is what the services raise; the
driver errors of PostgreSQL and Redis are mapped the same way wherever they escape a route.

A full store is one of them (`refusal_for`): a disk or quota that is full (OSError ENOSPC/EDQUOT,
PostgreSQL's disk_full from psycopg, asyncpg or SQLAlchemy), Redis refusing writes (MISCONF after a
failed save to a full disk, OOM at maxmemory). It is found anywhere in the chain of causes, so a
service that wraps the driver's error in its own is still answered 503, with a sentence that names
the store and never carries the driver's text.
"""

from __future__ import annotations

import errno
import json
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

import redis.exceptions
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from kronii.foundation.errors import KroniiError, StorageFull, Unavailable, error_body

__all__ = [
    "FULL_RETRY_AFTER_SECS",
    "RETRY_AFTER_SECS",
    "AuditOutbox",
    "StoreFull",
    "StoreUnavailable",
    "full_store_error",
    "install_unavailable_handlers",
    "is_store_error",
    "refusal_for",
    "store_error",
]

log = logging.getLogger(__name__)

RETRY_AFTER_SECS = 5
# A full disk is not freed in a few seconds: callers are told to wait longer.
FULL_RETRY_AFTER_SECS = 10


class StoreUnavailable(Unavailable):
    """The database or the queue cannot take the work now; the caller should retry."""

    def __init__(self, message: str, retry_after: int = RETRY_AFTER_SECS) -> None:
        super().__init__(message, retry_after_ms=retry_after * 1000)
        self.retry_after = retry_after


class StoreFull(StoreUnavailable, StorageFull):
    """A store that cannot write for want of room: the kind StorageFull (code "storage_full"),
    caught wherever StoreUnavailable is."""

    def __init__(self, message: str, retry_after: int = FULL_RETRY_AFTER_SECS) -> None:
        super().__init__(message, retry_after)


_DRIVER_ERRORS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionRefusedError,
    ConnectionResetError,
)


# PostgreSQL's SQLSTATE for "disk_full" (class 53, insufficient resources), as psycopg and asyncpg
# both carry it (`sqlstate`); and the server's own words where only the text is left.
_PG_DISK_FULL = "53100"
_PG_FULL_WORDS = ("no space left on device", "could not extend file", "disk quota exceeded")
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_AFTER = "the request was not completed; try again once there is room"


def full_store_error(error: BaseException) -> StoreFull | None:
    """The refusal for this one exception when it says a store is full, else None."""
    if isinstance(error, StoreFull):
        return error
    if isinstance(error, OSError) and error.errno in _FULL_ERRNOS:
        what = "its disk quota is used up" if error.errno == errno.EDQUOT else "its disk is full"
        return StoreFull(f"the service cannot write: {what}; {_AFTER}")
    if isinstance(error, redis.exceptions.ResponseError):
        text = str(error)
        if isinstance(error, redis.exceptions.OutOfMemoryError) or "OOM command not allowed" in text:
            return StoreFull(f"Redis refuses writes: it is out of memory (maxmemory); {_AFTER}")
        if "MISCONF" in text:  # also inside a pipeline's or a script's error
            return StoreFull(f"Redis refuses writes: it cannot save to its disk (full?); {_AFTER}")
        return None
    driver = error.orig if isinstance(error, sqlalchemy.exc.DBAPIError) else error
    from_postgres = driver is not error or type(driver).__module__.split(".")[0] in ("psycopg", "asyncpg")
    if getattr(driver, "sqlstate", None) == _PG_DISK_FULL or (
        from_postgres and any(words in str(driver).lower() for words in _PG_FULL_WORDS)
    ):
        return StoreFull(f"PostgreSQL cannot write: its disk is full; {_AFTER}")
    return None


def is_store_error(error: BaseException) -> bool:
    if isinstance(error, (StoreUnavailable, *_DRIVER_ERRORS)):
        return True
    if full_store_error(error) is not None:
        return True
    return isinstance(error, sqlalchemy.exc.DBAPIError) and bool(error.connection_invalidated)


def store_error(error: BaseException) -> StoreUnavailable:
    """The sentence for a driver error: which store, never the driver's text (it may carry a URL)."""
    if isinstance(error, StoreUnavailable):
        return error
    full = full_store_error(error)
    if full is not None:
        return full
    which = "Redis" if isinstance(error, redis.exceptions.RedisError) else "PostgreSQL"
    return StoreUnavailable(f"{which} is not reachable; nothing was done, try again shortly")


def _causes(error: BaseException) -> list[BaseException]:
    """The error, then what it was raised from or while handling (as a traceback shows them), and
    the members of an exception group; each once."""
    seen: list[BaseException] = []
    pending = [error]
    while pending and len(seen) < 32:
        current = pending.pop(0)
        if any(current is known for known in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        if current.__cause__ is not None:
            pending.append(current.__cause__)
        elif current.__context__ is not None and not current.__suppress_context__:
            pending.append(current.__context__)
    return seen


def refusal_for(error: BaseException) -> Unavailable | None:
    """The 503 (gRPC UNAVAILABLE) this escaped exception deserves, or None for a real failure: a
    full store anywhere in its causes, an Unavailable a service raised (wrapped or not), or a store that cannot be reached (the driver's own error, not one wrapped in another)."""
    causes = _causes(error)
    for cause in causes:
        full = full_store_error(cause)
        if full is not None:
            return full
    for cause in causes:
        if isinstance(cause, Unavailable):
            return cause
    if isinstance(error, KroniiError):
        return None
    return store_error(error) if is_store_error(error) else None


def install_unavailable_handlers(app: FastAPI) -> None:
    """503s for the driver errors that mean "not now" (see also api_edge.RefusalMiddleware, which
    finds a full store or an unreachable one behind any exception a route lets escape)."""

    async def unavailable(_request: Request, error: Exception) -> JSONResponse:
        answer = refusal_for(error) or store_error(error)
        log.warning("answered 503: %s (%s)", answer.message, type(error).__name__)
        return JSONResponse(
            error_body(answer),
            status_code=503,
            headers={"Retry-After": str(answer.retry_after_secs)},
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
