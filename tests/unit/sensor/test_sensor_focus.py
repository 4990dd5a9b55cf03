"""SensorCore focus derivations: FocusChanged plus pulse on app/window change, throttled titles."""

from __future__ import annotations

import dataclasses

import pytest
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    ActivityState,
    Effect,
    Focus,
    FocusChanged,
    FocusObserved,
    LockStart,
    PersistEnvelope,
    PulseEmitted,
    StateChanged,
    Tick,
    TitleChanged,
)
from kronii.sensor.core.params import SensorParams

P = SensorParams()
T0 = 1_000.0
A1 = Focus(app_name="editor", wm_class="Editor", window_id=11, title="main.py", pid=100, app_start_time_ms=7)
A2 = dataclasses.replace(A1, window_id=12, title="util.py")


def titled(focus: Focus, title: str) -> Focus:
    return dataclasses.replace(focus, title=title)


def focused_core(focus: Focus = A1) -> SensorCore:
    core = SensorCore(P, now=T0)
    core.handle(FocusObserved(at=T0, focus=focus))
    return core


def titles(effects: list[Effect]) -> list[TitleChanged]:
    return [e for e in effects if isinstance(e, TitleChanged)]


# ---- app and window changes ----------------------------------------------------------------------------


def test_first_focus_is_an_app_change_from_empty_focus() -> None:
    core = SensorCore(P, now=T0)

    effects = core.handle(FocusObserved(at=T0 + 1, focus=A1))

    assert effects == [
        PersistEnvelope(kind="app_changed", at=T0 + 1),
        FocusChanged(previous=Focus(), current=A1, at=T0 + 1, change="app"),
        PulseEmitted(source="focus", at=T0 + 1),
    ]
    assert core.focus == A1
    assert core.last_input_at == T0 + 1


@pytest.mark.parametrize(
    "changed",
    [
        {"pid": 101},
        {"app_name": "other"},
        {"wm_class": "Other"},
        {"app_start_time_ms": 8},
    ],
    ids=["pid", "app_name", "wm_class", "app_start_time"],
)
def test_focus_app_change_emits_focus_changed_and_pulse(changed: dict[str, object]) -> None:
    core = focused_core()
    current = dataclasses.replace(A1, **changed)  # type: ignore[arg-type]

    effects = core.handle(FocusObserved(at=T0 + 2, focus=current))

    assert FocusChanged(previous=A1, current=current, at=T0 + 2, change="app") in effects
    assert PulseEmitted(source="focus", at=T0 + 2) in effects
    assert titles(effects) == []


def test_focus_window_change_emits_focus_changed_and_pulse() -> None:
    core = focused_core()

    effects = core.handle(FocusObserved(at=T0 + 2, focus=A2))

    assert effects == [
        PersistEnvelope(kind="window_changed", at=T0 + 2),
        FocusChanged(previous=A1, current=A2, at=T0 + 2, change="window"),
        PulseEmitted(source="focus", at=T0 + 2),
    ]


def test_identical_focus_emits_nothing() -> None:
    core = focused_core()

    assert core.handle(FocusObserved(at=T0 + 2, focus=A1)) == []
    assert core.last_input_at == T0


# ---- title changes -------------------------------------------------------------------------------------


def test_title_change_emits_title_changed_without_counting_as_input() -> None:
    core = focused_core()
    core.handle(Tick(at=T0 + P.active_grace_secs))
    assert core.state is ActivityState.PASSIVE
    current = titled(A1, "main.py — modified")

    effects = core.handle(FocusObserved(at=T0 + 40, focus=current))

    assert effects == [TitleChanged(focus=current, at=T0 + 40)]
    assert core.state is ActivityState.PASSIVE
    assert core.focus == current


def test_title_change_is_throttled_per_window_and_pending_title_flushed_on_tick() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))

    assert core.handle(FocusObserved(at=T0 + 2, focus=titled(A1, "b"))) == []
    assert core.handle(FocusObserved(at=T0 + 3, focus=titled(A1, "c"))) == []
    assert core.pending_titles == 1
    assert titles(core.handle(Tick(at=T0 + 5.9))) == []

    effects = core.handle(Tick(at=T0 + 1 + P.title_interval_secs))

    assert effects == [TitleChanged(focus=titled(A1, "c"), at=T0 + 6)]
    assert core.pending_titles == 0
    assert core.handle(Tick(at=T0 + 20)) == []


def test_pending_title_is_flushed_by_a_later_focus_observation() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))
    core.handle(FocusObserved(at=T0 + 2, focus=titled(A1, "b")))

    effects = core.handle(FocusObserved(at=T0 + 7, focus=titled(A1, "b")))

    assert effects == [TitleChanged(focus=titled(A1, "b"), at=T0 + 7)]


def test_title_after_the_interval_is_emitted_at_once() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))

    effects = core.handle(FocusObserved(at=T0 + 1 + P.title_interval_secs, focus=titled(A1, "b")))

    assert effects == [TitleChanged(focus=titled(A1, "b"), at=T0 + 6)]
    assert core.pending_titles == 0


def test_title_throttle_is_per_window() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))
    core.handle(FocusObserved(at=T0 + 1.5, focus=A2))

    effects = core.handle(FocusObserved(at=T0 + 2, focus=titled(A2, "x")))

    assert effects == [TitleChanged(focus=titled(A2, "x"), at=T0 + 2)]


def test_title_reverting_to_the_emitted_one_drops_the_pending_title() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))
    core.handle(FocusObserved(at=T0 + 2, focus=titled(A1, "b")))
    core.handle(FocusObserved(at=T0 + 3, focus=titled(A1, "a")))

    assert core.pending_titles == 0
    assert core.handle(Tick(at=T0 + 10)) == []


def test_focus_change_into_a_window_supersedes_its_pending_title() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))
    core.handle(FocusObserved(at=T0 + 2, focus=titled(A1, "b")))
    core.handle(FocusObserved(at=T0 + 3, focus=A2))

    effects = core.handle(FocusObserved(at=T0 + 4, focus=titled(A1, "c")))

    assert FocusChanged(previous=A2, current=titled(A1, "c"), at=T0 + 4, change="window") in effects
    assert core.pending_titles == 0
    assert titles(core.handle(Tick(at=T0 + 10))) == []


def test_pending_title_survives_a_lock_and_is_flushed() -> None:
    core = focused_core()
    core.handle(FocusObserved(at=T0 + 1, focus=titled(A1, "a")))
    core.handle(FocusObserved(at=T0 + 2, focus=titled(A1, "b")))
    core.handle(Tick(at=T0 + 2.5))
    core.handle(LockStart(at=T0 + 3))

    effects = core.handle(Tick(at=T0 + 8))

    assert effects == [TitleChanged(focus=titled(A1, "b"), at=T0 + 8)]
    assert not any(isinstance(e, StateChanged) for e in effects)
