"""`kronii up` on a real desktop: Xvfb with openbox, two xterm windows, xdotool, a D-Bus session bus.

A person switches windows, types, walks away and locks the screen; a subscriber on NATS sees each
event with the right content, the snapshot over HTTP and gRPC agree, and SIGTERM leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import httpx
import psutil
import psycopg
import pytest
import pytest_asyncio
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as pb
from kronii.activity.v1 import activity_pb2_grpc as pb_grpc
from kronii.foundation.urls import libpq_url
from kronii.launcher.infra import free_port
from kronii.stores import subjects
from kronii.stores.bus import Bus

from tests.desktop import emit_screensaver_active, focus_window, open_window, send_input, set_window_title
from tests.infra import InfraUrls
from tests.mesh import Proc, wait_until

pytestmark = pytest.mark.e2e

ACTIVE, PASSIVE, INACTIVE, LOCKED = (
    pb.ACTIVITY_STATE_ACTIVE,
    pb.ACTIVITY_STATE_PASSIVE,
    pb.ACTIVITY_STATE_INACTIVE,
    pb.ACTIVITY_STATE_LOCKED,
)


class Events:
    """Every activity event seen on NATS, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Message]] = []

    async def handler(self, subject: str, message: Message) -> None:
        self.items.append((subject, message))

    async def wait_for(self, predicate: object, timeout: float, what: str) -> Message:
        check = predicate  # a callable taking (subject, message)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for subject, message in list(self.items):
                if check(subject, message):  # type: ignore[operator]
                    return message
            await asyncio.sleep(0.02)
        summary = [f"{s}: {MessageToDict(m)}" for s, m in self.items[-15:]]
        raise AssertionError(f"no event {what} within {timeout} s; last events:\n" + "\n".join(summary))

    def transitions(self) -> list[tuple[int, int]]:
        return [
            (getattr(m.transition, "from"), m.transition.to)
            for s, m in self.items
            if isinstance(m, pb.StateChanged)
        ]


@pytest_asyncio.fixture
async def mesh(
    xdisplay: str, session_bus: str, infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> AsyncIterator[tuple[Proc, str, int, Events, Path]]:
    http, grpc_port = free_port(), free_port()
    data_dir = tmp_path / "data"
    env = dict(os.environ)
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=migrated_database,
        KRONII_DATA_DIR=str(data_dir),
        DISPLAY=xdisplay,
        DBUS_SESSION_BUS_ADDRESS=session_bus,
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-system-bus",
        KRONII_SENSOR_HTTP_PORT=str(http),
        KRONII_SENSOR_GRPC_PORT=str(grpc_port),
        KRONII_SENSOR_ACTIVE_GRACE_SECS="1.5",
        KRONII_SENSOR_IDLE_THRESHOLD_SECS="3",
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        KRONII_SENSOR_TITLE_INTERVAL_SECS="0.5",
        KRONII_LOG_FORMAT="text",
    )
    events = Events()
    bus = Bus("e2e")
    await bus.connect(infra.nats)
    await bus.subscribe_any(subjects.ACTIVITY_ALL, events.handler)
    await bus.client.flush()
    proc = Proc([str(Path(sys.executable).parent / "kronii"), "up"], env)
    try:
        await asyncio.to_thread(proc.wait_for_line, lambda line: line.strip() == "kronii is up", 60)
        yield proc, f"http://127.0.0.1:{http}", grpc_port, events, data_dir
    finally:
        if proc.process.poll() is None:
            proc.kill()
        await bus.close()


def _snapshot_dicts(url: str, grpc_port: int) -> tuple[dict[str, object], dict[str, object]]:
    http_snapshot = httpx.get(f"{url}/v1/snapshot").json()
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        message = pb_grpc.SensorServiceStub(channel).GetSnapshot(pb.GetSnapshotRequest(), timeout=5)
    grpc_snapshot = MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return http_snapshot, grpc_snapshot


async def test_kronii_up_senses_focus_input_idle_and_lock_on_a_real_desktop(
    mesh: tuple[Proc, str, int, Events, Path], xdisplay: str, session_bus: str, migrated_database: str
) -> None:
    proc, url, grpc_port, events, data_dir = mesh
    assert any(line.startswith("sensor") and "ready" in line for line in proc.lines)

    first = open_window(xdisplay, "notes.txt - editor", "KroniiEditor")
    second = open_window(xdisplay, "cargo build - terminal", "KroniiTerm")
    try:
        # Focus moves between two real windows: FocusChanged names the app and carries the title.
        focus_window(xdisplay, first.window_id)
        focus_window(xdisplay, second.window_id)
        changed = await events.wait_for(
            lambda s, m: isinstance(m, pb.FocusChanged) and m.current.wm_class.endswith("KroniiTerm"),
            10,
            "FocusChanged to the terminal",
        )
        assert isinstance(changed, pb.FocusChanged)
        assert changed.current.title == "cargo build - terminal"
        assert changed.current.pid == second.pid
        assert changed.current.window_id == second.window_id
        assert changed.current.app_start_time > 0

        # A title with an e-mail address in it is redacted before it leaves the sensor.
        set_window_title(xdisplay, second.window_id, "mail to alice@exemple.com - terminal")
        titled = await events.wait_for(
            lambda s, m: (
                isinstance(m, pb.TitleChanged) and "terminal" in m.focus.title and "mail to" in m.focus.title
            ),
            10,
            "TitleChanged",
        )
        assert isinstance(titled, pb.TitleChanged)
        assert "alice@exemple.com" not in titled.focus.title
        # The person watching `kronii up` sees the same events in the sensor's log lines, redacted too.
        wait_until(
            lambda: any("focus app changed" in line and "KroniiTerm" in line for line in proc.lines), 5, "log"
        )
        assert not any("alice@exemple.com" in line for line in proc.lines)

        # Without input the state falls to Passive, then Inactive. On a slow start the sensor may
        # already have fallen from its first state before the windows opened, so the two falls are
        # looked for in order, after the last time it was Active.
        def fell_to_inactive(s: str, m: Message) -> bool:
            transitions = events.transitions()
            last_active = max(i for i, (_, to) in enumerate(transitions) if to == ACTIVE)
            return transitions[last_active + 1 : last_active + 3] == [(ACTIVE, PASSIVE), (PASSIVE, INACTIVE)]

        send_input(xdisplay)
        wait_until(lambda: ACTIVE in [to for _, to in events.transitions()], 10, "Active after input")
        await events.wait_for(fell_to_inactive, 15, "Active to Passive to Inactive")

        # Synthetic input (XTEST) brings it back to Active.
        send_input(xdisplay)
        await events.wait_for(
            lambda s, m: (
                isinstance(m, pb.StateChanged)
                and getattr(m.transition, "from") == INACTIVE
                and m.transition.to == ACTIVE
            ),
            10,
            "Inactive to Active on input",
        )

        # The screen saver's ActiveChanged on the session bus locks, and unlocks.
        emit_screensaver_active(session_bus, True)
        await events.wait_for(
            lambda s, m: isinstance(m, pb.StateChanged) and m.transition.to == LOCKED, 10, "Locked"
        )
        locked = await events.wait_for(
            lambda s, m: isinstance(m, pb.LockChanged) and m.locked, 5, "LockChanged"
        )
        assert isinstance(locked, pb.LockChanged) and locked.source == "screensaver"
        http_snapshot, grpc_snapshot = _snapshot_dicts(url, grpc_port)
        assert http_snapshot["locked"] is True
        assert http_snapshot["activity_state"] == "ACTIVITY_STATE_LOCKED"
        emit_screensaver_active(session_bus, False)
        await events.wait_for(
            lambda s, m: isinstance(m, pb.StateChanged) and getattr(m.transition, "from") == LOCKED,
            10,
            "unlock",
        )

        # Lock and unlock are audited in the hash chain and kept as envelopes.
        def lock_rows() -> tuple[list[str], list[str]]:
            with psycopg.connect(libpq_url(migrated_database)) as conn:
                audit = [row[0] for row in conn.execute("SELECT action FROM audit_log ORDER BY id")]
                kinds = [row[0] for row in conn.execute("SELECT kind FROM activity_events ORDER BY id")]
            return audit, kinds

        wait_until(lambda: "session.unlock" in lock_rows()[0], 5, "the unlock audit row")
        audit, kinds = lock_rows()
        assert audit.index("session.lock") < audit.index("session.unlock")
        assert {"lock", "unlock", "focus_changed", "state_changed"} <= set(kinds)

        # HTTP and gRPC serve the same snapshot from Redis.
        http_snapshot, grpc_snapshot = _snapshot_dicts(url, grpc_port)
        for field in ("activity_state", "focus", "locked", "last_transition", "display_available"):
            assert http_snapshot[field] == grpc_snapshot[field], field
        assert http_snapshot["display_available"] is True
        assert http_snapshot["focus"]["wm_class"].endswith("KroniiTerm")  # type: ignore[index]
    finally:
        first.close()
        second.close()

    # SIGTERM stops everything kronii started, and nothing is left running.
    state = json.loads((data_dir / "run" / "up.json").read_text())
    pids = [service["pid"] for service in state["services"].values()]
    code, took = proc.terminate()
    assert code == 0, proc.output[-3000:]
    assert took < 10
    wait_until(lambda: not any(psutil.pid_exists(pid) for pid in pids), 3, "service processes to exit")
    assert not (data_dir / "run" / "up.json").exists()
