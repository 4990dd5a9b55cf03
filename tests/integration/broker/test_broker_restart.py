"""A broker that comes back after a kill -9 must not guess that nobody watches (issue 26, items 6
and 13): a real broker process with x11vnc on a real Xvfb, a real VNC viewer (vncdotool) as the
person, the broker killed with SIGKILL as `kronii up`'s shared process was, so its x11vnc outlives
it, and a second broker started with the same data dir and ports, as `kronii up` restarts it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.agents.broker_client import BrokerError
from kronii.broker.adapters.viewer_socket import hook_socket_path
from kronii.broker.adapters.vnc import VncServer, VncSettings, decode_rfbauth
from kronii.launcher.infra import free_port
from vncdotool import api as vnc_api  # type: ignore[import-untyped]

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker

DEADLINE_S = 15.0


def _x11vncs_under(folder: Path) -> list[int]:
    """The x11vnc processes whose command line names a path under ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and Path(os.fsdecode(argv[0])).name == "x11vnc" and str(folder).encode() in b" ".join(argv):
            found.append(int(entry.name))
    return found


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """The brokers' folder; no x11vnc started for it outlives the test, whatever the broker did."""
    assert shutil.which("x11vnc") is not None, "x11vnc is missing: run `make sysdeps`"
    yield tmp_path
    for pid in _x11vncs_under(tmp_path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _password(broker: Broker) -> str:
    return decode_rfbauth((broker.folder / "data" / "broker" / "vnc" / "passwd").read_bytes())


def _viewer(broker: Broker, port: int) -> Any:
    viewer = vnc_api.connect(f"127.0.0.1::{port}", password=_password(broker), timeout=DEADLINE_S)
    viewer.refreshScreen()  # the handshake done: x11vnc has run its "attached" hook
    return viewer


def _let_go(viewer: Any) -> None:
    """Close a viewer whose server may be gone already: vncdotool would wait its whole timeout for a
    disconnection that happened long ago."""
    viewer.timeout = 1.0
    viewer.disconnect()


def _readyz_text(broker: Broker) -> str:
    return httpx.get(f"{broker.url}/readyz", timeout=10).text


def _acquire_refused(broker: Broker) -> BrokerError:
    with pytest.raises(BrokerError) as refused:
        broker.agent().acquire(30)
    assert refused.value.status == 409, refused.value
    return refused.value


def test_a_broker_restarted_after_a_kill_9_with_a_viewer_attached_refuses_an_agents_acquire(
    infra: InfraUrls, migrated_database: str, x_display: str, folder: Path
) -> None:
    vnc_port = free_port()
    settings = {"KRONII_BROKER_VNC_PORT": str(vnc_port)}
    ports = (free_port(), free_port())
    with start_broker(infra, migrated_database, x_display, folder, settings=settings, ports=ports) as first:
        viewer = _viewer(first, vnc_port)
        wait_until(lambda: first.state()["interactive"], timeout_s=DEADLINE_S, what="the viewer counted")
        first.proc.kill()  # SIGKILL: no clean-up runs, as when kronii up's shared process was killed
        first.proc.process.wait(timeout=DEADLINE_S)
    orphans = _x11vncs_under(folder)
    assert orphans, "the first broker's x11vnc should outlive its kill -9"
    try:
        with start_broker(
            infra, migrated_database, x_display, folder, settings=settings, ports=ports
        ) as second:
            state = second.state()
            assert state["interactive"] is True, state
            assert state["interactive_reason"] in ("unknown", "viewer"), state
            refused = _acquire_refused(second)
            assert "viewer" in refused.message, refused.message
            assert "the broker cannot see the desktop's viewers" in _readyz_text(second)

            # The broker's own x11vnc serves the port now, and sees the person coming back.
            assert all(pid not in _x11vncs_under(folder) for pid in orphans)
            again = _viewer(second, vnc_port)
            wait_until(
                lambda: second.state()["interactive_reason"] == "viewer",
                timeout_s=DEADLINE_S,
                what="the viewer that came back counted",
            )
            _acquire_refused(second)
            again.disconnect()
            wait_until(
                lambda: not second.state()["interactive"], timeout_s=DEADLINE_S, what="the viewer gone"
            )
            assert second.agent().acquire(30).control_mode == "AGENT"
    finally:
        _let_go(viewer)


def test_a_vnc_port_held_by_another_x11vnc_makes_presence_unknown_until_the_port_is_free(
    infra: InfraUrls, migrated_database: str, x_display: str, folder: Path
) -> None:
    vnc_port = free_port()
    other_dir = folder / "someone-else"
    other = VncServer(x_display, other_dir, hook_socket_path(other_dir), VncSettings(port=vnc_port))
    other.start()
    try:
        assert other._process is not None
        holder = other._process.pid
        settings = {"KRONII_BROKER_VNC_PORT": str(vnc_port)}
        with start_broker(infra, migrated_database, x_display, folder / "b", settings=settings) as broker:
            state = broker.state()
            assert state["interactive"] is True and state["interactive_reason"] == "unknown", state
            cause = f"port {vnc_port} is held by another x11vnc (pid {holder})"
            refused = _acquire_refused(broker)
            assert cause in refused.message, refused.message
            assert cause in _readyz_text(broker)
            assert holder in _x11vncs_under(folder), "an x11vnc that is not the broker's is left alone"

            other.stop()
            wait_until(
                lambda: not broker.state()["interactive"],
                timeout_s=DEADLINE_S,
                what="the broker's own x11vnc on the freed port",
            )
            assert f"x11vnc on 127.0.0.1:{vnc_port}" in _readyz_text(broker)
            assert broker.agent().acquire(30).control_mode == "AGENT"
    finally:
        other.stop()
