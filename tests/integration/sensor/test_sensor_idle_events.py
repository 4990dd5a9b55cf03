"""The sensor as a process on a real Xvfb whose MIT-SCREEN-SAVER extension is taken away, so the idle
time cannot be asked for (the old poll had nothing to read): the idle time comes from the SYNC
extension's IDLETIME alarms alone. With a 1 s grace and a 2 s idle threshold the sensor goes Passive
and Inactive at those times after the last key, and a real key (xdotool, through XTEST) brings it
back to Active at once, as `display_input`; all as kronii.activity.state_changed on real NATS."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import nats
import pytest
from kronii.activity.v1 import activity_pb2 as apb
from nats.aio.msg import Msg

from tests.desktop import open_window, start_xvfb
from tests.infra import InfraUrls
from tests.mesh import Proc, start_service, wait_until

GRACE_SECS = 1.0
THRESHOLD_SECS = 2.0
TICK_SECS = 0.2
# A Tick may come up to one interval after a threshold; the rest is the load of a shared machine.
LATE_SECS = TICK_SECS + 0.8


@dataclass(frozen=True)
class Change:
    to_state: int
    at: float
    cause: str


class StateEvents:
    """kronii.activity.state_changed as it arrives, on a thread with its own loop."""

    def __init__(self, url: str) -> None:
        self.seen: list[Change] = []
        self._url = url
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "no NATS subscription"

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        client = await nats.connect(self._url)

        async def on_message(message: Msg) -> None:
            event = apb.StateChanged()
            event.ParseFromString(message.data)
            at = event.transition.at.seconds + event.transition.at.nanos / 1e9
            self.seen.append(Change(event.transition.to, at, event.cause))

        await client.subscribe("kronii.activity.state_changed", cb=on_message)
        await client.flush()
        self._ready.set()
        await self._stop.wait()
        await client.close()

    def first_after(self, at: float, to_state: int, timeout: float) -> Change:
        def found() -> bool:
            return any(change.at >= at and change.to_state == to_state for change in self.seen)

        wait_until(found, timeout, f"a change to state {to_state} (kronii.activity.v1.ActivityState)")
        return next(change for change in self.seen if change.at >= at and change.to_state == to_state)

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)


def _key(display: str) -> float:
    """Press Shift through XTEST; the wall time just before, the earliest the server can have seen it."""
    before = time.time()
    subprocess.run(["xdotool", "key", "shift"], env={**os.environ, "DISPLAY": display}, check=True)
    return before


@pytest.fixture(scope="module")
def desk(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Proc]]:
    with (
        start_xvfb(["-extension", "MIT-SCREEN-SAVER"]) as display,
        open_window(display, "idle events", "KroniiIdleEvents"),
    ):
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            KRONII_DATABASE_URL=migrated_database,
            KRONII_DATA_DIR=str(tmp_path_factory.mktemp("sensor") / "data"),
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            KRONII_SENSOR_TICK_INTERVAL_SECS=str(TICK_SECS),
            KRONII_SENSOR_ACTIVE_GRACE_SECS=str(GRACE_SECS),
            KRONII_SENSOR_IDLE_THRESHOLD_SECS=str(THRESHOLD_SECS),
        )
        with start_service("sensor", env, stop="kill") as sensor:
            assert httpx.get(f"{sensor.url}/readyz").json()["dependencies"]["display"]["ready"] is True
            yield display, sensor.proc


def test_the_screensaver_extension_is_really_gone(desk: tuple[str, Proc]) -> None:
    display, _ = desk
    listed = subprocess.run(
        ["xdpyinfo", "-display", display], capture_output=True, text=True, check=True
    ).stdout
    assert "SYNC" in listed
    assert "MIT-SCREEN-SAVER" not in listed


def test_idle_sensor_goes_passive_then_inactive_at_the_thresholds_and_active_on_a_key(
    infra: InfraUrls, desk: tuple[str, Proc]
) -> None:
    display, proc = desk
    events = StateEvents(infra.nats)
    try:
        time.sleep(1.5)  # still past the 1 s the alarms call quiet, so the key is input coming back
        first = _key(display)
        # The first key may find the sensor Active already (it started a moment ago): wait for the
        # idle states it must reach after this key.
        passive = events.first_after(first, apb.ACTIVITY_STATE_PASSIVE, 10)
        inactive = events.first_after(first, apb.ACTIVITY_STATE_INACTIVE, 10)
        assert GRACE_SECS <= passive.at - first <= GRACE_SECS + LATE_SECS, passive
        assert THRESHOLD_SECS <= inactive.at - first <= THRESHOLD_SECS + LATE_SECS, inactive
        assert passive.cause == "active_grace_elapsed"
        assert inactive.cause == "idle_threshold_elapsed"

        time.sleep(0.5)  # still for a while past the threshold
        pressed = _key(display)
        back = events.first_after(pressed, apb.ACTIVITY_STATE_ACTIVE, 5)
        assert back.cause == "display_input"
        # The falling alarm is sent as the key is processed (xdotool starting is most of this).
        assert back.at - pressed < 1.0, back

        # And again, from Passive this time: the alarms stay armed.
        passive_again = events.first_after(pressed, apb.ACTIVITY_STATE_PASSIVE, 10)
        assert GRACE_SECS <= passive_again.at - pressed <= GRACE_SECS + LATE_SECS, passive_again
        again = _key(display)
        assert events.first_after(again, apb.ACTIVITY_STATE_ACTIVE, 5).cause == "display_input"
    finally:
        events.close()
    assert not [line for line in proc.lines if "idle time comes from focus events only" in line]
    assert not [line for line in proc.lines if "is asked at each tick" in line]
