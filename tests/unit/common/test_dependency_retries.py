"""The retries around a service's dependencies (tenacity): the NATS connection keeps trying with a
doubling pause until it answers or the service stops, and the start of the embedded PostgreSQL goes on
once pg_isready says it accepts connections, or fails with the reason."""

from __future__ import annotations

import asyncio
import logging
import time
from types import SimpleNamespace
from typing import Any

import pytest
from kronii.launcher import embedded_postgres
from kronii.launcher.embedded_postgres import wait_accepting
from kronii.launcher.embedded_server import InfraError
from kronii.runtime.connections import retry_until_stopped


async def test_a_dependency_is_tried_again_with_a_doubling_pause_until_it_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = 0

    async def connect() -> None:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ConnectionRefusedError("nobody listens")

    with caplog.at_level(logging.WARNING, logger="kronii.runtime.service"):
        await asyncio.wait_for(retry_until_stopped("nats", connect, stopping=asyncio.Event()), 5)
    assert calls == 3
    assert [record.getMessage() for record in caplog.records] == [
        "nats is not reachable yet (nobody listens); retrying in 0.2 s",
        "nats is not reachable yet (nobody listens); retrying in 0.4 s",
    ]


async def test_a_stop_ends_the_retries_without_another_try() -> None:
    stopping = asyncio.Event()
    calls = 0

    async def connect() -> None:
        nonlocal calls
        calls += 1
        stopping.set()
        raise ConnectionRefusedError("nobody listens")

    started = time.monotonic()
    await asyncio.wait_for(retry_until_stopped("nats", connect, stopping=stopping), 5)
    assert calls == 1
    assert time.monotonic() - started < 0.15  # the pause was cut short, not slept out


async def test_a_service_told_to_stop_before_connecting_does_not_try() -> None:
    stopping = asyncio.Event()
    stopping.set()

    async def connect() -> None:
        raise AssertionError("tried although stopping")

    await asyncio.wait_for(retry_until_stopped("nats", connect, stopping=stopping), 1)


def _child(alive: bool) -> Any:
    return SimpleNamespace(alive=lambda: alive)


def _answers(*verdicts: tuple[bool, str]) -> tuple[list[int], Any]:
    """pg_isready's answers in turn (the last one repeats), and a list counting the questions."""
    asked: list[int] = []

    def accepts(port: int) -> tuple[bool, str]:
        asked.append(port)
        return verdicts[min(len(asked), len(verdicts)) - 1]

    return asked, accepts


def test_the_start_goes_on_once_postgres_accepts_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, accepts = _answers(
        (False, "rejecting connections"), (False, "no response"), (True, "accepting connections")
    )
    monkeypatch.setattr(embedded_postgres, "postgres_accepts", accepts)
    wait_accepting(_child(True), 5432)
    assert asked == [5432, 5432, 5432]


def test_a_postgres_that_died_while_starting_fails_at_once_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, accepts = _answers((False, "no response"))
    monkeypatch.setattr(embedded_postgres, "postgres_accepts", accepts)
    with pytest.raises(InfraError, match=r"^postgres is not accepting connections: no response$"):
        wait_accepting(_child(False), 1)
    assert len(asked) == 1


def test_a_postgres_that_never_accepts_fails_after_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, accepts = _answers((False, "rejecting connections"))
    monkeypatch.setattr(embedded_postgres, "postgres_accepts", accepts)
    monkeypatch.setattr(embedded_postgres, "DATABASE_WAIT_SECS", 0.35)
    started = time.monotonic()
    with pytest.raises(InfraError, match="not accepting connections: rejecting connections"):
        wait_accepting(_child(True), 1)
    assert 0.3 <= time.monotonic() - started < 2
    assert len(asked) >= 3  # asked every 0.1 s until the wait was over
