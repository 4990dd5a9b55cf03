"""The retries around a service's dependencies (tenacity): the NATS connection keeps trying with a
doubling pause until it answers or the service stops, and the embedded PostgreSQL gets its
`kronii` database once the server accepts connections, or the start fails with the reason."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from kronii.common import infra
from kronii.common.infra import EmbeddedInfra, InfraError, InfraPorts
from kronii.common.service import _Runtime


def _runtime() -> Any:
    return SimpleNamespace(stopping=asyncio.Event())


async def test_a_dependency_is_tried_again_with_a_doubling_pause_until_it_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = 0

    async def connect() -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ConnectionRefusedError("nobody listens")

    with caplog.at_level(logging.WARNING, logger="kronii.common.service"):
        await asyncio.wait_for(_Runtime._retry(_runtime(), "nats", connect), 5)
    assert calls == 3
    assert [record.getMessage() for record in caplog.records] == [
        "nats is not reachable yet (nobody listens); retrying in 0.2 s",
        "nats is not reachable yet (nobody listens); retrying in 0.4 s",
    ]


async def test_a_stop_ends_the_retries_without_another_try() -> None:
    runtime = _runtime()
    calls = 0

    async def connect() -> None:
        nonlocal calls
        calls += 1
        runtime.stopping.set()
        raise ConnectionRefusedError("nobody listens")

    started = time.monotonic()
    await asyncio.wait_for(_Runtime._retry(runtime, "nats", connect), 5)
    assert calls == 1
    assert time.monotonic() - started < 0.15  # the pause was cut short, not slept out


async def test_a_service_told_to_stop_before_connecting_does_not_try() -> None:
    runtime = _runtime()
    runtime.stopping.set()

    async def connect() -> None:
        raise AssertionError("tried although stopping")

    await asyncio.wait_for(_Runtime._retry(runtime, "nats", connect), 1)


class _Connection:
    def __init__(self, executed: list[str]) -> None:
        self.executed = executed

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str) -> Any:
        self.executed.append(sql)
        return SimpleNamespace(fetchone=lambda: None)


def _child(alive: bool) -> Any:
    return SimpleNamespace(alive=lambda: alive)


def test_the_database_is_created_once_postgres_accepts_connections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executed: list[str] = []
    refusals = iter([True, True, False])

    def connect(**_: Any) -> _Connection:
        if next(refusals):
            raise psycopg.OperationalError("the database system is starting up")
        return _Connection(executed)

    monkeypatch.setattr(psycopg, "connect", connect)
    EmbeddedInfra(tmp_path, InfraPorts())._ensure_database(_child(True), 1, "pw")
    assert executed[-1] == "CREATE DATABASE kronii"


def test_a_postgres_that_died_while_starting_fails_at_once_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0

    def connect(**_: Any) -> _Connection:
        nonlocal calls
        calls += 1
        raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(psycopg, "connect", connect)
    with pytest.raises(InfraError, match="postgres is not accepting connections: connection refused"):
        EmbeddedInfra(tmp_path, InfraPorts())._ensure_database(_child(False), 1, "pw")
    assert calls == 1


def test_a_postgres_that_never_accepts_fails_after_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0

    def connect(**_: Any) -> _Connection:
        nonlocal calls
        calls += 1
        raise psycopg.OperationalError("connection refused")

    monkeypatch.setattr(psycopg, "connect", connect)
    monkeypatch.setattr(infra, "DATABASE_WAIT_SECS", 0.35)
    started = time.monotonic()
    with pytest.raises(InfraError, match="not accepting connections"):
        EmbeddedInfra(tmp_path, InfraPorts())._ensure_database(_child(True), 1, "pw")
    assert 0.3 <= time.monotonic() - started < 2
    assert calls >= 3  # tried every 0.1 s until the wait was over
