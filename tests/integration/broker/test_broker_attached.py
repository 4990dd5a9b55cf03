"""Who is watching decides (seed 004: interactive detection, P0 and P3), and automation goes through
the broker: a real broker with x11vnc for remote viewing, a real VNC viewer (vncdotool) as the person
attached, and the PATH-shadowing xdotool wrapper as an unmodified automation tool."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kronii.agents.broker_client import BrokerError
from kronii.broker.adapters.vnc import decode_rfbauth
from kronii.broker.cli.xdotool_shim import write_shadow_script
from vncdotool import api as vnc_api  # type: ignore[import-untyped]

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, register_agent, start_broker


@pytest.fixture
def watched_broker(
    infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path
) -> Iterator[Broker]:
    assert shutil.which("x11vnc") is not None, "x11vnc is missing: run `make sysdeps`"
    with start_broker(
        infra, migrated_database, x_display, tmp_path, settings={"KRONII_BROKER_VNC_PORT": "0"}
    ) as b:
        yield b


def _vnc_port(broker: Broker) -> int:
    detail = httpx.get(f"{broker.url}/readyz", timeout=10).json()
    text = str(detail)
    marker = "x11vnc on 127.0.0.1:"
    assert marker in text, text
    return int(text.split(marker, 1)[1].split("'", 1)[0].split('"', 1)[0])


def _viewer(broker: Broker) -> Any:
    password = decode_rfbauth((broker.folder / "data" / "broker" / "vnc" / "passwd").read_bytes())
    return vnc_api.connect(f"127.0.0.1::{_vnc_port(broker)}", password=password, timeout=10)


def test_nobody_watching_an_agent_acquires_by_policy_and_a_viewer_attaching_takes_it_back(
    watched_broker: Broker,
) -> None:
    agent = watched_broker.agent()
    assert watched_broker.state()["interactive"] is False
    taken = agent.acquire(30)
    assert taken.control_mode == "AGENT"
    viewer = _viewer(watched_broker)
    try:
        wait_until(lambda: watched_broker.state()["interactive"], timeout_s=10, what="the viewer counted")
        state = watched_broker.state()
        assert state["interactive_reason"] == "viewer"
        assert state["control_mode"] == "USER" and state["agent_status"] == "STOPPED"
        assert agent.type_text("x").dropped in ("stopped", "user_control", "stale_epoch")
    finally:
        viewer.disconnect()
    wait_until(lambda: not watched_broker.state()["interactive"], timeout_s=10, what="the viewer gone")


def test_with_a_viewer_attached_an_agent_without_a_grant_is_denied(watched_broker: Broker) -> None:
    agent = watched_broker.agent()
    viewer = _viewer(watched_broker)
    try:
        wait_until(lambda: watched_broker.state()["interactive"], timeout_s=10, what="the viewer counted")
        with pytest.raises(BrokerError) as refused:
            agent.acquire(30)
        assert "grants it" in refused.value.message
        assert agent.type_text("x").dropped == "user_control"
        assert agent.safe_point("step", 1).action == "PAUSE"
    finally:
        viewer.disconnect()


def _shadow_env(broker: Broker, tmp_path: Path, client_id: str, key_file: Path) -> dict[str, str]:
    shadow = write_shadow_script(tmp_path / "shadow")
    return {
        **os.environ,
        "PATH": f"{shadow.parent}{os.pathsep}{os.environ['PATH']}",
        "DISPLAY": broker.display,
        "KRONII_BROKER_URL": broker.url,
        "KRONII_BROKER_CLIENT_ID": client_id,
        "KRONII_BROKER_KEY_FILE": str(key_file),
        "XDG_RUNTIME_DIR": str(tmp_path / "agent-run"),
    }


def test_the_xdotool_wrapper_goes_through_the_broker_refused_without_a_lease(
    infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path, recording_terminal: Any
) -> None:
    settings = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}
    with start_broker(infra, migrated_database, x_display, tmp_path / "b", settings=settings) as broker:
        terminal = recording_terminal("ShadowTerm")
        key = Ed25519PrivateKey.generate()
        key_file = tmp_path / "macro.key"
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        key_file.chmod(0o600)
        asyncio.run(register_agent(infra.redis, migrated_database, "macro", key))
        (tmp_path / "agent-run").mkdir(mode=0o700)
        env = _shadow_env(broker, tmp_path, "macro", key_file)
        assert shutil.which("xdotool", path=env["PATH"]) == str(tmp_path / "shadow" / "xdotool")

        refused = subprocess.run(
            ["xdotool", "type", "hello"], env=env, capture_output=True, text=True, timeout=30
        )
        assert refused.returncode == 1, refused
        assert "kronii broker:" in refused.stderr and "kronii control grant" in refused.stderr
        assert terminal.received() == ""

        broker.grant("macro", seconds=30, window=terminal.window_id)
        done = subprocess.run(
            ["xdotool", "type", "hello"], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done
        terminal.wait_for("hello")
