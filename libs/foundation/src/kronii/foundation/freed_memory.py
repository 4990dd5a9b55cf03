"""Give the memory a process has freed back to the system.

glibc keeps what a process frees in its arenas (one per thread that allocated, up to eight per core), so
a long-running service keeps the high-water mark of its last burst resident: an embedding batch, a large
request body, the imports and set-up of its start. malloc_trim(0) hands the free pages of every arena
back (a few milliseconds for a heap of a few hundred MB). kronii's processes call it once they are up
and then once a minute. On a C library without it (musl) nothing is done."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
from collections.abc import Callable

__all__ = ["RETURN_EVERY_SECS", "keep_returning_freed_memory", "return_freed_memory"]

RETURN_EVERY_SECS = 60.0


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def return_freed_memory() -> bool:
    """Whether any memory went back to the system (False also where the C library cannot do it)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


async def keep_returning_freed_memory(stopping: asyncio.Event, every: float = RETURN_EVERY_SECS) -> None:
    """Every `every` seconds until `stopping` is set, on a worker thread (the trim holds the allocator's
    locks for its few milliseconds, never the event loop)."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), every)
        if stopping.is_set():
            return
        await asyncio.to_thread(return_freed_memory)
