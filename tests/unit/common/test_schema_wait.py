"""Under `kronii up` the services start while the migrations run: each waits for the launcher's
schema-ready file before its start touches a table (a fresh data dir once lost the pipeline to
`relation "pipeline_plugins" does not exist`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kronii.runtime.connections import wait_for_schema


async def test_a_service_waits_for_the_schema_file_then_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "schema.ready"
    monkeypatch.setenv("KRONII_SCHEMA_READY_FILE", str(marker))
    stopping = asyncio.Event()
    waiting = asyncio.create_task(wait_for_schema(stopping))
    await asyncio.sleep(0.3)
    assert not waiting.done()  # no schema yet: it waits
    marker.touch()
    await asyncio.wait_for(waiting, 2)


async def test_a_stop_ends_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SCHEMA_READY_FILE", str(tmp_path / "never"))
    stopping = asyncio.Event()
    waiting = asyncio.create_task(wait_for_schema(stopping))
    stopping.set()
    await asyncio.wait_for(waiting, 2)


async def test_outside_kronii_up_nothing_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRONII_SCHEMA_READY_FILE", raising=False)
    await asyncio.wait_for(wait_for_schema(asyncio.Event()), 1)
