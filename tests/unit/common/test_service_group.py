"""Several services in one process and one event loop (kronii.runtime.service_group): a service that fails is
started again while the others keep answering, one that keeps failing stops the group with a non-zero code,
SIGTERM stops them all, and every log line still names its service."""

from __future__ import annotations

import asyncio
import collections
import io
import json
import logging
import os
import signal
from collections.abc import Iterable

import grpc
import httpx
import pytest
from fastapi import APIRouter
from kronii.foundation.logs import JsonFormatter, LinePrefixFormatter
from kronii.foundation.settings import ServiceSettings, SettingsError, load_settings
from kronii.launcher.infra import free_port
from kronii.launcher.processes import split_sink
from kronii.runtime.context import ServiceContext
from kronii.runtime.service_group import ServiceGroup
from kronii.runtime.spec import DependencyStatus, ServiceSpec
from kronii.runtime.up_settings import LauncherSettings
from pydantic_settings import SettingsConfigDict

STARTS: collections.Counter[str] = collections.Counter()
STOPS: collections.Counter[str] = collections.Counter()
log = logging.getLogger("kronii.test.service_group")


class FakeSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_FAKE_", extra="ignore", frozen=True)


class FakeApp:
    """Fails its first `failures` starts, then serves nothing but the runtime's own routes."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.name = ""

    async def start(self, ctx: ServiceContext) -> None:
        self.name = ctx.name
        STARTS[ctx.name] += 1
        log.info("starting, try %d", STARTS[ctx.name])
        if STARTS[ctx.name] <= self.failures:
            raise RuntimeError(f"{ctx.name} cannot start (try {STARTS[ctx.name]})")

    async def stop(self) -> None:
        STOPS[self.name] += 1

    def routers(self) -> Iterable[APIRouter]:
        return []

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        return []

    def readiness(self) -> dict[str, DependencyStatus]:
        return {}


def steady_app() -> FakeApp:
    return FakeApp(failures=0)


def flaky_app() -> FakeApp:
    return FakeApp(failures=2)


def broken_app() -> FakeApp:
    return FakeApp(failures=1_000_000)


def _member(name: str, factory: str) -> tuple[ServiceSpec, ServiceSettings]:
    # The module as pytest imported it, so the factories share this module's counters.
    spec = ServiceSpec(name=name, settings_cls=FakeSettings, app=f"{__name__}:{factory}", needs=frozenset())
    return spec, FakeSettings(host="127.0.0.1", http_port=free_port(), grpc_port=0, shutdown_timeout_secs=3)


@pytest.fixture(autouse=True)
def fresh_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRONII_SCHEMA_READY_FILE", raising=False)
    STARTS.clear()
    STOPS.clear()


def _url(member: tuple[ServiceSpec, ServiceSettings], path: str = "/healthz") -> str:
    return f"http://127.0.0.1:{member[1].http_port}{path}"


async def _answers(client: httpx.AsyncClient, url: str) -> bool:
    try:
        return (await client.get(url)).status_code == 200
    except httpx.HTTPError:
        return False


async def _wait_answers(client: httpx.AsyncClient, url: str, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not await _answers(client, url):
            await asyncio.sleep(0.05)


async def test_a_service_that_fails_to_start_is_restarted_while_the_other_keeps_answering() -> None:
    steady, flaky = _member("steady", "steady_app"), _member("flaky", "flaky_app")
    group = ServiceGroup([steady, flaky], restart_pause_secs=0.3)
    running = asyncio.create_task(group.run())
    async with httpx.AsyncClient(timeout=2) as client:
        await _wait_answers(client, _url(steady))
        steady_runtime = group.runtime("steady")
        # While the flaky one fails twice and waits between tries, the steady one answers every time.
        async with asyncio.timeout(10):
            while not await _answers(client, _url(flaky, "/readyz")):
                assert await _answers(client, _url(steady)), "the steady service stopped answering"
                assert not running.done()
                await asyncio.sleep(0.05)
        assert STARTS["flaky"] == 3
        assert STARTS["steady"] == 1
        assert group.runtime("steady") is steady_runtime
    group.request_stop()
    assert await asyncio.wait_for(running, 10) == 0


async def test_a_service_failing_past_its_restart_budget_makes_the_group_exit_non_zero() -> None:
    steady, broken = _member("steady", "steady_app"), _member("broken", "broken_app")
    group = ServiceGroup([steady, broken], restart_pause_secs=0.05, max_restarts=2, restart_window_secs=60)
    code = await asyncio.wait_for(group.run(), 20)
    assert code == 1
    # The first start and two restarts; the third failure is past the budget.
    assert STARTS["broken"] == 3
    assert STOPS == {"steady": 1}, "the steady service was not stopped cleanly"
    async with httpx.AsyncClient(timeout=1) as client:
        assert not await _answers(client, _url(steady)), "the group exited but a service still answers"


async def test_sigterm_stops_every_service_of_the_group() -> None:
    first, second = _member("first", "steady_app"), _member("second", "steady_app")
    group = ServiceGroup([first, second])
    running = asyncio.create_task(group.run())
    async with httpx.AsyncClient(timeout=2) as client:
        await _wait_answers(client, _url(first))
        await _wait_answers(client, _url(second))
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
        assert not await _answers(client, _url(first))
        assert not await _answers(client, _url(second))
    assert STARTS == {"first": 1, "second": 1}
    assert STOPS == {"first": 1, "second": 1}
    # The group gave the signal back: a SIGTERM now would not reach a stopped group's handler.
    assert not asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)


async def test_each_log_line_of_a_shared_process_names_its_service() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(LinePrefixFormatter(JsonFormatter("services"), "services"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        alpha, beta = _member("alpha", "steady_app"), _member("beta", "flaky_app")
        group = ServiceGroup([alpha, beta], restart_pause_secs=0.05)
        running = asyncio.create_task(group.run())
        async with httpx.AsyncClient(timeout=2) as client:
            await _wait_answers(client, _url(beta, "/readyz"))
        group.request_stop()
        await asyncio.wait_for(running, 10)
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)
    shown: list[tuple[str, str]] = []
    split = split_sink(lambda name, line: shown.append((name, line)), ["alpha", "beta"])
    for line in out.getvalue().splitlines():
        split("services", line)
    starts = [(name, json.loads(line)) for name, line in shown if "starting" in line]
    assert sorted((name, entry["service"], entry["msg"]) for name, entry in starts) == [
        ("alpha", "alpha", "starting, try 1"),
        ("beta", "beta", "starting, try 1"),
        ("beta", "beta", "starting, try 2"),
        ("beta", "beta", "starting, try 3"),
    ]


def test_an_unknown_service_processes_value_is_refused_with_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KRONII_SERVICE_PROCESSES", "pooled")
    with pytest.raises(SettingsError) as refused:
        load_settings(LauncherSettings)
    assert "KRONII_SERVICE_PROCESSES" in refused.value.message
    assert "'shared' or 'separate'" in refused.value.message
    monkeypatch.delenv("KRONII_SERVICE_PROCESSES")
    assert load_settings(LauncherSettings).service_processes == "shared"
