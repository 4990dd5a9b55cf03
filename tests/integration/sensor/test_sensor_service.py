"""The sensor as a process on the service runtime, against real NATS, Redis and PostgreSQL, without
a display: it still starts, says so once, reports it in /readyz, and stops cleanly on SIGTERM."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc
from kronii.launcher.infra import free_port

from tests.infra import InfraUrls
from tests.mesh import Proc, start_service


def _env(infra: InfraUrls, database: str, tmp_path: Path, http: int, grpc_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "KRONII_SENSOR_DISPLAY")}
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(tmp_path / "data"),
        KRONII_SENSOR_HTTP_PORT=str(http),
        KRONII_SENSOR_GRPC_PORT=str(grpc_port),
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    return env


@contextlib.contextmanager
def _headless(infra: InfraUrls, database: str, folder: Path) -> Iterator[tuple[Proc, str, int]]:
    with start_service(
        "sensor", _env(infra, database, folder, free_port(), free_port()), stop="kill"
    ) as sensor:
        yield sensor.proc, sensor.url, sensor.grpc_port


@pytest.fixture(scope="module")
def headless_sensor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Proc, str, int]]:
    """One sensor for the tests that only read from it."""
    with _headless(infra, migrated_database, tmp_path_factory.mktemp("sensor")) as running:
        yield running


@pytest.fixture
def own_headless_sensor(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> Iterator[tuple[Proc, str, int]]:
    """A sensor of the test's own, for a test that stops it."""
    with _headless(infra, migrated_database, tmp_path) as running:
        yield running


def test_sensor_without_display_is_ready_and_says_so_once(headless_sensor: tuple[Proc, str, int]) -> None:
    proc, url, _ = headless_sensor
    body = httpx.get(f"{url}/readyz").json()
    assert body["ready"] is True
    assert body["dependencies"]["display"]["ready"] is False
    assert body["dependencies"]["display"]["required"] is False
    assert "no display" in body["dependencies"]["display"]["detail"]
    for dependency in ("nats", "redis", "postgres"):
        assert body["dependencies"][dependency]["ready"] is True
    assert sum("no display" in line for line in proc.lines) == 1


def test_sensor_serves_metrics_health_reflection_and_matching_snapshots(
    headless_sensor: tuple[Proc, str, int],
) -> None:
    _, url, grpc_port = headless_sensor
    metrics = httpx.get(f"{url}/metrics").text
    assert 'kronii_sensor_state{state="active"}' in metrics
    assert "kronii_dependency_ready" in metrics
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=5
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        responses = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        names = {
            service.name for response in responses for service in response.list_services_response.service
        }
        assert "kronii.activity.v1.SensorService" in names
        assert "grpc.health.v1.Health" in names
        snapshot = pb_grpc.SensorServiceStub(channel).GetSnapshot(pb.GetSnapshotRequest(), timeout=5)
    http_snapshot = httpx.get(f"{url}/v1/snapshot").json()
    grpc_snapshot = MessageToDict(
        snapshot, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    assert http_snapshot["activity_state"] == grpc_snapshot["activity_state"] == "ACTIVITY_STATE_ACTIVE"
    assert http_snapshot["display_available"] is False
    for field in ("activity_state", "locked", "focus", "display_available"):
        assert http_snapshot[field] == grpc_snapshot[field]


def test_sensor_stops_on_sigterm_within_five_seconds(own_headless_sensor: tuple[Proc, str, int]) -> None:
    proc, _, _ = own_headless_sensor
    code, took = proc.terminate()
    assert code == 0, proc.output[-2000:]
    assert took < 5.0
    assert "sensor stopped" in proc.output


def test_sensor_refuses_an_invalid_setting_with_a_sentence_naming_the_variable(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    env = _env(infra, migrated_database, tmp_path, free_port(), free_port())
    env["KRONII_SENSOR_HTTP_PORT"] = "eighty"
    with start_service("sensor", env, ready=False) as sensor:
        assert sensor.proc.process.wait(30) == 2
        sensor.proc.terminate()
    assert "KRONII_SENSOR_HTTP_PORT is invalid" in sensor.proc.output
    assert "'eighty'" in sensor.proc.output


def test_sensor_without_a_bus_url_says_which_variable_is_missing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    with start_service("sensor", env, ready=False) as sensor:
        assert sensor.proc.process.wait(30) == 2
        sensor.proc.terminate()
    assert "KRONII_NATS_URL" in sensor.proc.output
    assert "is not set" in sensor.proc.output
