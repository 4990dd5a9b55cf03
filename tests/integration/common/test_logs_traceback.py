"""A service that crashes says why on its first line and keeps its traceback in the JSON log, with the
secrets inside the exception masked: a real sensor whose gRPC port is taken, and a real service
process (the common runtime, started by `launch`) whose start or HTTP route raises with a password URL
and an AWS key in the exception's message."""

from __future__ import annotations

import json
import os
import secrets
import socket
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.launcher.infra import free_port

from tests.infra import InfraUrls
from tests.mesh import Proc, running, start_service, wait_http_ready

# A service of the common runtime that fails where the environment says: at start, or in a route.
_CRASHING_SERVICE = """
import os
from fastapi import APIRouter
from kronii.foundation.settings import ServiceSettings
from kronii.runtime.launch import launch
from kronii.runtime.spec import ServiceSpec
from pydantic_settings import SettingsConfigDict


class CrashySettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_CRASHY_", extra="ignore", frozen=True)


def reach_upstream():
    raise ConnectionError(f"cannot reach {os.environ['CRASHY_UPSTREAM']}")


class CrashyApp:
    async def start(self, ctx):
        if os.environ["CRASHY_WHERE"] == "start":
            reach_upstream()

    async def stop(self):
        pass

    def routers(self):
        router = APIRouter()

        @router.get("/v1/upstream")
        async def upstream():
            reach_upstream()

        return [router]

    def add_to_grpc(self, server):
        return []

    def readiness(self):
        return {}


launch(ServiceSpec(name="crashy", settings_cls=CrashySettings, app="__main__:CrashyApp", needs=frozenset()))
"""


@pytest.fixture
def secrets_in_upstream() -> tuple[str, str, str]:
    """A password URL and an AWS access key id, fresh for each test, and the text that holds both."""
    password = "Pw" + secrets.token_hex(10)
    aws_key = "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))
    return password, aws_key, f"postgresql://kronii:{password}@db.internal:5432/kronii with key {aws_key}"


def _json_lines(proc: Proc) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.lines if line.startswith("{")]


def _crashy(where: str, upstream: str, tmp_path: Path, http_port: int = 0) -> Proc:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(
        CRASHY_WHERE=where,
        CRASHY_UPSTREAM=upstream,
        KRONII_DATA_DIR=str(tmp_path / "data"),
        KRONII_LOG_FORMAT="json",
        KRONII_CRASHY_HTTP_PORT=str(http_port or free_port()),
    )
    return Proc([sys.executable, "-c", _CRASHING_SERVICE], env)


def test_a_service_that_fails_at_start_logs_the_reason_and_a_redacted_traceback(
    secrets_in_upstream: tuple[str, str, str], tmp_path: Path
) -> None:
    password, aws_key, upstream = secrets_in_upstream
    with running(_crashy("start", upstream, tmp_path)) as proc:
        code = proc.process.wait(timeout=30)
        proc.terminate()
    failed = [line for line in _json_lines(proc) if line["level"] == "ERROR"]

    assert code == 1, proc.output[-3000:]
    assert len(failed) == 1
    assert failed[0]["msg"].startswith("crashy failed: cannot reach postgresql://kronii:")
    exc = failed[0]["exc"]
    assert exc.startswith("Traceback (most recent call last):")
    assert "in reach_upstream" in exc and "in start" in exc
    assert "ConnectionError: cannot reach postgresql://kronii:" in exc
    assert password not in proc.output and aws_key not in proc.output
    assert "[AWS_ACCESS_KEY_ID_" in exc


def test_an_http_route_that_raises_logs_a_redacted_traceback(
    secrets_in_upstream: tuple[str, str, str], tmp_path: Path
) -> None:
    password, aws_key, upstream = secrets_in_upstream
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(_crashy("route", upstream, tmp_path, port)) as proc:
        wait_http_ready(url, proc=proc)
        assert httpx.get(f"{url}/v1/upstream", timeout=10).status_code == 500
        proc.wait_for_line(lambda line: "in reach_upstream" in line, timeout=10)
        proc.terminate()
    # Whichever layer logs the failed request (the runtime's middleware, else uvicorn's "Exception in
    # ASGI application"), its line must carry the route's traceback.
    [crash] = [line for line in _json_lines(proc) if "in reach_upstream" in line.get("exc", "")]

    assert crash["level"] == "ERROR"
    assert "/v1/upstream" in crash["msg"] or "ASGI" in crash["msg"]
    assert "in upstream" in crash["exc"]
    assert "ConnectionError: cannot reach postgresql://kronii:" in crash["exc"]
    assert "[AWS_ACCESS_KEY_ID_" in crash["exc"]
    assert password not in proc.output and aws_key not in proc.output


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port held by a listening socket of this process (without SO_REUSEPORT, so gRPC cannot share it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_the_sensor_that_cannot_listen_for_grpc_logs_the_reason_and_its_traceback(
    infra: InfraUrls, taken_port: int, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_") and k != "DISPLAY"}
    env.update(
        infra.env(),
        KRONII_DATA_DIR=str(tmp_path / "data"),
        KRONII_LOG_FORMAT="json",
        KRONII_SENSOR_GRPC_PORT=str(taken_port),
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    with start_service("sensor", env, ready=False, stop="kill") as sensor:
        proc = sensor.proc
        code = proc.process.wait(timeout=30)
        proc.terminate()
    failed = [line for line in _json_lines(proc) if line["level"] == "ERROR"]

    assert code == 1, proc.output[-3000:]
    assert failed[-1]["msg"].startswith(f"sensor failed: Failed to bind to address 127.0.0.1:{taken_port}")
    assert "in start_grpc" in failed[-1]["exc"]
    assert failed[-1]["exc"].rstrip().splitlines()[-1].startswith("RuntimeError: Failed to bind")
