"""RemoteView in process, on a real Xvfb with a real x11vnc and a real VNC viewer (vncdotool): what
the broker says about who watches when viewers were disconnected under it. An earlier broker that
was killed is played by a RemoteView abandoned without its stop (its socket closed, its x11vnc left
running), as a SIGKILL leaves them."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from kronii.broker.adapters.remote_view import RemoteView
from kronii.broker.adapters.viewer_record import ViewerRecord
from kronii.broker.adapters.vnc import VncSettings, decode_rfbauth
from kronii.broker.adapters.vnc_processes import x11vncs_of
from kronii.broker.core.machine import Policy
from kronii.broker.core.model import ControlState
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import ControlSession
from kronii.broker.usecases.track_presence import Attachment
from prometheus_client import CollectorRegistry
from vncdotool import api as vnc_api  # type: ignore[import-untyped]

from tests.desktop import start_xvfb

DEADLINE_S = 15.0


@pytest.fixture
def x_display() -> Iterator[str]:
    assert shutil.which("x11vnc") is not None, "x11vnc is missing: run `make sysdeps`"
    with start_xvfb() as display:
        yield display


class _Quiet:
    async def publish(self, state: ControlState, cause: str, signal: str) -> None:
        return None

    def write(self, record: dict[str, Any]) -> None:
        return None

    async def record(self, **row: Any) -> None:
        return None


def _desk() -> tuple[ControlSession, Attachment]:
    metrics, quiet = BrokerMetrics(CollectorRegistry()), _Quiet()
    desk = ControlSession(
        session_id="s", policy=Policy(), metrics=metrics, publisher=quiet, journal=quiet, audit=quiet.record
    )
    return desk, Attachment(desk, metrics, flag=False, devices_make_interactive=False)


@asynccontextmanager
async def remote_view(
    display: str, folder: Path, **options: Any
) -> AsyncIterator[tuple[RemoteView, ControlSession]]:
    desk, attachment = _desk()
    view = RemoteView(
        display,
        folder,
        VncSettings(port=options.pop("port", 0)),
        attachment,
        reconnect_grace_s=options.pop("grace_s", 60.0),
        retry_s=0.1,
    )
    await view.start()
    try:
        yield view, desk
    finally:
        await view.stop()
        for pid in x11vncs_of(folder / "vnc"):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def eventually(predicate: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not reached within {DEADLINE_S}s"
        await asyncio.sleep(0.02)


def _connect(view: RemoteView, folder: Path) -> Any:
    password = decode_rfbauth((folder / "vnc" / "passwd").read_bytes())
    viewer = vnc_api.connect(f"127.0.0.1::{view.port}", password=password, timeout=DEADLINE_S)
    viewer.refreshScreen()
    return viewer


def _let_go(viewer: Any) -> None:
    """Close a viewer whose server may be gone already: vncdotool would wait its whole timeout for a
    disconnection that happened long ago."""
    viewer.timeout = 1.0
    viewer.disconnect()


def _reason(desk: ControlSession) -> str:
    return desk.state.interactive_reason


async def test_a_killed_brokers_record_of_a_viewer_makes_presence_unknown_until_a_viewer_reconnects(
    x_display: str, tmp_path: Path
) -> None:
    (tmp_path / "vnc").mkdir(mode=0o700)
    ViewerRecord(tmp_path / "vnc" / "viewers.json").write(1)  # what a broker killed under a viewer left
    async with remote_view(x_display, tmp_path) as (view, desk):
        assert _reason(desk) == "unknown" and desk.state.interactive
        assert "a viewer was attached when the broker before this one ended" in view.problem
        viewer = await asyncio.to_thread(_connect, view, tmp_path)
        await eventually(lambda: _reason(desk) == "viewer", "the person reconnecting seen")
        assert view.problem == ""
        await asyncio.to_thread(viewer.disconnect)
        await eventually(lambda: not desk.state.interactive, "the viewer gone")


async def test_when_nobody_comes_back_within_the_grace_nobody_watches(x_display: str, tmp_path: Path) -> None:
    (tmp_path / "vnc").mkdir(mode=0o700)
    ViewerRecord(tmp_path / "vnc" / "viewers.json").write(2)
    async with remote_view(x_display, tmp_path, grace_s=1.0) as (view, desk):
        assert _reason(desk) == "unknown"
        await eventually(lambda: _reason(desk) == "", "the wait over")
        assert not desk.state.interactive and view.problem == ""


async def test_an_earlier_brokers_x11vnc_with_a_viewer_is_stopped_and_presence_is_unknown(
    x_display: str, tmp_path: Path
) -> None:
    async with remote_view(x_display, tmp_path) as (first, first_desk):
        viewer = await asyncio.to_thread(_connect, first, tmp_path)
        await eventually(lambda: _reason(first_desk) == "viewer", "the viewer seen by the first")
        assert first._vnc is not None
        orphan = first._vnc.pid
        # The first broker is killed: its socket goes with its process, its x11vnc stays.
        first._vnc = None
        assert first._listener is not None and first._task is not None
        first._task.cancel()
        await first._listener.stop()
        first._listener = None
        async with remote_view(x_display, tmp_path) as (second, desk):
            assert orphan not in x11vncs_of(tmp_path / "vnc")
            assert _reason(desk) == "unknown"
            assert "the x11vnc an earlier broker left running" in second.problem
            again = await asyncio.to_thread(_connect, second, tmp_path)
            await eventually(lambda: _reason(desk) == "viewer", "the person reconnecting seen")
            await asyncio.to_thread(again.disconnect)
        await asyncio.to_thread(_let_go, viewer)


async def test_x11vnc_exiting_under_a_viewer_is_started_again_and_waits_for_the_person(
    x_display: str, tmp_path: Path
) -> None:
    async with remote_view(x_display, tmp_path) as (view, desk):
        viewer = await asyncio.to_thread(_connect, view, tmp_path)
        await eventually(lambda: _reason(desk) == "viewer", "the viewer seen")
        assert view._vnc is not None
        crashed = view._vnc.pid
        os.kill(crashed, signal.SIGKILL)
        await eventually(lambda: view._vnc is not None and view._vnc.pid not in (0, crashed), "x11vnc again")
        assert _reason(desk) == "unknown"
        assert "x11vnc exited with a viewer attached" in view.problem
        await asyncio.to_thread(_let_go, viewer)
        again = await asyncio.to_thread(_connect, view, tmp_path)
        await eventually(lambda: _reason(desk) == "viewer", "the person reconnecting seen")
        await asyncio.to_thread(again.disconnect)


async def test_a_clean_stop_with_a_viewer_attached_makes_the_next_start_wait_for_the_person(
    x_display: str, tmp_path: Path
) -> None:
    async with remote_view(x_display, tmp_path) as (view, desk):
        viewer = await asyncio.to_thread(_connect, view, tmp_path)
        await eventually(lambda: _reason(desk) == "viewer", "the viewer seen")
    await asyncio.to_thread(_let_go, viewer)
    earlier = ViewerRecord(tmp_path / "vnc" / "viewers.json").read()
    assert earlier.viewers == 1 and earlier.ended_s_ago is not None and earlier.ended_s_ago < DEADLINE_S
    async with remote_view(x_display, tmp_path) as (_, again):
        assert _reason(again) == "unknown"
