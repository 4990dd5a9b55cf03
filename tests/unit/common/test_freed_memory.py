"""Memory a process has freed goes back to the system (glibc's malloc_trim), once and then periodically."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from kronii.foundation import freed_memory
from kronii.foundation.freed_memory import keep_returning_freed_memory, return_freed_memory


def _resident_mb() -> float:
    status = Path("/proc/self/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_memory_freed_by_a_burst_on_another_thread_goes_back_to_the_system() -> None:
    kept: list[bytes] = []

    def burst() -> None:
        # 60 MB in blocks glibc serves from the thread's own arena; one in a hundred is kept, so the
        # freed pages sit between live blocks and only a trim can give them back.
        blocks = [bytes(1000) + bytes([i % 256]) for i in range(60_000)]
        kept.extend(blocks[::100])

    worker = threading.Thread(target=burst)
    worker.start()
    worker.join()
    before = _resident_mb()
    assert return_freed_memory() is True
    assert before - _resident_mb() > 30, (before, _resident_mb())
    assert len(kept) == 600


def test_without_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: None)
    assert return_freed_memory() is False


async def test_the_memory_is_returned_every_period_until_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []

    def trim(pad: int) -> int:
        calls.append(pad)
        return 1

    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: trim)
    stopping = asyncio.Event()
    task = asyncio.create_task(keep_returning_freed_memory(stopping, every=0.05))
    await asyncio.sleep(0.18)
    stopping.set()
    await asyncio.wait_for(task, 1)
    assert 2 <= len(calls) <= 4 and set(calls) == {0}
