"""Live updates for the pages: what the bus hands in (a topic and a small dict of names, ids and
states) goes to every page listening to that topic, each through its own bounded queue, so a page that
does not keep up loses its oldest updates (it re-fetches its fragment anyway) and never holds memory or
the bus back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LiveHub", "LiveUpdate"]

QUEUE_SIZE = 64


@dataclass(frozen=True)
class LiveUpdate:
    topic: str
    data: dict[str, Any]


@dataclass(eq=False)
class _Listener:
    topics: frozenset[str]
    queue: asyncio.Queue[LiveUpdate] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))


class LiveHub:
    def __init__(
        self,
        topics: Iterable[str],
        *,
        on_count: Callable[[int], None] = lambda count: None,
        on_drop: Callable[[], None] = lambda: None,
    ) -> None:
        self.topics = frozenset(topics)
        self._listeners: set[_Listener] = set()
        self._on_count = on_count
        self._on_drop = on_drop

    @property
    def listening(self) -> int:
        return len(self._listeners)

    def publish(self, update: LiveUpdate) -> None:
        for listener in list(self._listeners):
            if update.topic not in listener.topics:
                continue
            if listener.queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    listener.queue.get_nowait()
                self._on_drop()
            listener.queue.put_nowait(update)

    @contextlib.asynccontextmanager
    async def listen(self, topics: Iterable[str]) -> AsyncIterator[asyncio.Queue[LiveUpdate]]:
        """A queue of the updates on `topics` while the page is connected; removed when it leaves."""
        listener = _Listener(frozenset(topics) & self.topics)
        self._listeners.add(listener)
        self._on_count(len(self._listeners))
        try:
            yield listener.queue
        finally:
            self._listeners.discard(listener)
            self._on_count(len(self._listeners))
