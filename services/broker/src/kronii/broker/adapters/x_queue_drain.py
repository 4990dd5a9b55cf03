"""Keeps the injector's X connections read while no action runs: they select every master's raw
input, and an X server buffers what a client does not read without limit. A daemon thread empties
them every second when the injector is idle (it never waits for the injector's lock). What it reads
is not judged: between actions the watcher's thread is the one that sees the person."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

__all__ = ["QueueDrain"]

DRAIN_EVERY_S = 1.0


class _Readable(Protocol):
    def read(self) -> bool: ...


class QueueDrain:
    def __init__(
        self, lock: threading.Lock, queues: Sequence[_Readable], every_s: float = DRAIN_EVERY_S
    ) -> None:
        self._lock = lock
        self._queues = tuple(queues)
        self._every_s = every_s
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="broker-inject-drain", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None

    def _run(self) -> None:
        while not self._stopping.wait(self._every_s):
            if not self._lock.acquire(blocking=False):
                continue  # an action runs: it reads the queue itself
            try:
                for queue in self._queues:
                    queue.read()
            except Exception:  # the connection closed under us: the injector is stopping
                return
            finally:
                self._lock.release()
