"""The matcher's picture of the desktop (usecases.follow_desktop) fed the way the service feeds it: the
sensor's stored Snapshot decoded by api.convert, and its focus and lock events through api.bus and the
operations."""

from __future__ import annotations

from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.api.bus import DesktopEvents
from kronii.capture.api.convert import sensor_snapshot
from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.ports import SnapshotUnavailable
from kronii.capture.usecases.follow_desktop import DesktopView, FollowDesktop

from tests.unit.capture import capture_fakes as fakes
from tests.unit.capture.test_capture_http_routes import desk_of
from tests.unit.capture.test_capture_job_use_case import rig


def stored(*, pid: int, window_id: int, idle_ms: int = 0, updated_ms: int = 0, locked: bool = False) -> bytes:
    """The sensor's Snapshot as it keeps it in Redis."""
    snapshot = apb.Snapshot(
        focus=apb.Focus(app_name="editor", wm_class="Editor", window_id=window_id, title="notes", pid=pid),
        idle_ms=idle_ms,
        locked=locked,
        display_available=True,
    )
    if updated_ms:
        snapshot.updated_at.FromMilliseconds(updated_ms)
    return snapshot.SerializeToString()


class Stored:
    """The snapshot store: the bytes the sensor wrote, decoded as the service decodes them."""

    def __init__(self, raw: bytes | None) -> None:
        self.raw = raw

    async def read(self) -> SensorSnapshot | None:
        return None if self.raw is None else sensor_snapshot(self.raw)


class Unreachable:
    async def read(self) -> SensorSnapshot | None:
        raise SnapshotUnavailable("connection refused")


async def test_the_same_snapshot_read_again_is_not_a_focus_switch_and_another_window_is() -> None:
    view = DesktopView()
    store = Stored(stored(pid=4242, window_id=77))
    follow = FollowDesktop(view, store)

    assert await follow.refresh_snapshot()
    assert view.snapshot_seen and view.current is not None
    assert (view.current.pid, view.current.window_id, view.focus_seq) == (4242, 77, 0)
    assert await follow.refresh_snapshot()
    assert view.focus_seq == 0

    store.raw = stored(pid=4242, window_id=78)
    assert await follow.refresh_snapshot()
    assert view.current is not None and (view.current.window_id, view.current.focus_seq) == (78, 1)


async def test_the_last_input_is_the_snapshot_time_less_its_idle_time() -> None:
    view = DesktopView()
    await FollowDesktop(
        view, Stored(stored(pid=1, window_id=2, idle_ms=1_500, updated_ms=fakes.START_MS, locked=True))
    ).refresh_snapshot()

    assert view.last_input_ms == fakes.START_MS - 1_500
    assert view.locked and view.display_available


async def test_no_snapshot_or_an_unreachable_store_leaves_the_view_unseen() -> None:
    view = DesktopView()

    assert not await FollowDesktop(view, Stored(None)).refresh_snapshot()
    assert not await FollowDesktop(view, Unreachable()).refresh_snapshot()
    assert not view.snapshot_seen and view.current is None


async def test_the_sensors_focus_and_lock_events_reach_the_view_through_the_operations() -> None:
    r = rig()
    events = DesktopEvents(desk_of(r))
    focus = apb.Focus(app_name="editor", wm_class="Editor", window_id=77, title="notes", pid=4242)

    await events.on_focus("kronii.activity.focus_changed", apb.FocusChanged(current=focus))
    assert r.view.current is not None and (r.view.current.window_id, r.view.current.focus_seq) == (77, 1)
    assert r.view.changed.is_set()

    await events.on_focus("kronii.activity.focus_changed", apb.FocusChanged(current=apb.Focus()))
    assert r.view.current is None and r.view.focus_seq == 2

    await events.on_lock("kronii.activity.lock_changed", apb.LockChanged(locked=True))
    assert r.view.locked


async def test_a_focus_event_for_the_window_a_snapshot_already_showed_is_not_a_second_switch() -> None:
    r = rig()
    await FollowDesktop(
        r.view, Stored(stored(pid=4242, window_id=77, updated_ms=fakes.START_MS))
    ).refresh_snapshot()
    seq = r.view.focus_seq
    await DesktopEvents(desk_of(r)).on_focus(
        "kronii.activity.focus_changed", _focus_event(77, fakes.START_MS)
    )

    assert r.view.focus_seq == seq  # a FocusNext queued now must wait for a real switch


async def test_a_snapshot_written_before_the_last_focus_event_does_not_undo_that_switch() -> None:
    r = rig()
    store = Stored(stored(pid=4242, window_id=77, updated_ms=fakes.START_MS))
    follow = FollowDesktop(r.view, store)
    await follow.refresh_snapshot()
    seq = r.view.focus_seq
    events = DesktopEvents(desk_of(r))
    await events.on_focus("kronii.activity.focus_changed", _focus_event(78, fakes.START_MS + 50))
    assert r.view.current is not None and (r.view.current.window_id, r.view.focus_seq) == (78, seq + 1)

    await follow.refresh_snapshot()  # the store still holds the older snapshot
    assert r.view.current is not None and (r.view.current.window_id, r.view.focus_seq) == (78, seq + 1)

    store.raw = stored(pid=4242, window_id=79, updated_ms=fakes.START_MS + 100)
    await follow.refresh_snapshot()  # a newer one is followed
    assert r.view.current is not None and (r.view.current.window_id, r.view.focus_seq) == (79, seq + 2)


def _focus_event(window_id: int, at_ms: int) -> apb.FocusChanged:
    event = apb.FocusChanged(
        current=apb.Focus(app_name="editor", wm_class="Editor", window_id=window_id, title="notes", pid=4242)
    )
    event.at.FromMilliseconds(at_ms)
    return event
