"""A NATS server without JetStream: the bus says so at connect, and a service that needs JetStream
(the sensor keeps a stream of activity events) stops at start with one sentence, not a traceback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.launcher.embedded_nats import nats_server_binary
from kronii.launcher.infra import free_port
from kronii.stores.bus import Bus, JetStreamUnavailable

from tests.desktop import stop_process, wait_until
from tests.infra import InfraUrls
from tests.mesh import start_service


def _port_answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def nats_without_jetstream() -> Iterator[str]:
    """A real nats-server started without -js; yields its URL."""
    port = free_port()
    server = subprocess.Popen(
        [str(nats_server_binary()), "-a", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _port_answers(port), timeout_s=10.0, interval_s=0.05, what="nats-server")
        yield f"nats://127.0.0.1:{port}"
    finally:
        stop_process(server, timeout_s=5.0)


def _sentence(url: str) -> str:
    return (
        f"the NATS server at {url} has no JetStream; enable it (nats-server -js) "
        "or unset KRONII_NATS_URL to use the embedded one"
    )


async def test_bus_finds_no_jetstream_at_connect_and_refuses_a_stream(nats_without_jetstream: str) -> None:
    bus = Bus("test-nojs")
    await bus.connect(nats_without_jetstream)
    try:
        assert bus.jetstream is False
        with pytest.raises(JetStreamUnavailable) as raised:
            await bus.ensure_stream("KRONII_TEST_NOJS", ["kronii.test.nojs.>"], 60.0)
        assert str(raised.value) == _sentence(nats_without_jetstream)
    finally:
        await bus.close()


async def test_bus_finds_jetstream_on_the_suites_server(infra: InfraUrls) -> None:
    bus = Bus("test-js")
    await bus.connect(infra.nats)
    try:
        assert bus.jetstream is True
        bus.require_jetstream()
    finally:
        await bus.close()


def test_sensor_stops_at_start_with_one_sentence_when_nats_has_no_jetstream(
    nats_without_jetstream: str, infra: InfraUrls, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_") and k != "DISPLAY"}
    env.update(
        KRONII_NATS_URL=nats_without_jetstream,
        KRONII_REDIS_URL=infra.redis,
        KRONII_DATABASE_URL=infra.database,
        KRONII_DATA_DIR=str(tmp_path / "data"),
        KRONII_LOG_FORMAT="json",
    )
    with start_service("sensor", env, ready=False, stop="kill") as sensor:
        proc = sensor.proc
        code = proc.process.wait(timeout=30)
    lines = [json.loads(line) for line in proc.lines if line.startswith("{")]
    errors = [line for line in lines if line["level"] == "ERROR"]

    assert code == 2, proc.output[-3000:]
    assert [line["msg"] for line in errors] == [f"sensor failed: {_sentence(nats_without_jetstream)}"]
    assert "exc" not in errors[0]
    assert "NoResponders" not in proc.output
