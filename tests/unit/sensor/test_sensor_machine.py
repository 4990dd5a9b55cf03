"""SensorCore: one test per TABLE row, the state-change and lock actions, display idle, TABLE coverage."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kronii.sensor.core import machine
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    ActivityPulse,
    ActivityState,
    Effect,
    Focus,
    FocusChanged,
    FocusObserved,
    KeyboardInput,
    LockEnd,
    LockRecorded,
    LockStart,
    MouseInput,
    PersistEnvelope,
    SensorInput,
    StateChanged,
    Tick,
)
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.table import TABLE

S = ActivityState
P = SensorParams()
T0 = 1_000.0
A1 = Focus(app_name="editor", wm_class="Editor", window_id=11, title="main.py", pid=100, app_start_time_ms=7)
A2 = Focus(app_name="editor", wm_class="Editor", window_id=12, title="util.py", pid=100, app_start_time_ms=7)
B1 = Focus(app_name="browser", wm_class="Firefox", window_id=21, title="docs", pid=200, app_start_time_ms=9)


def core_in(state: ActivityState) -> SensorCore:
    """A core holding focus A1, last input at T0, driven into `state` through the machine itself."""
    core = SensorCore(P, now=T0)
    core.handle(FocusObserved(at=T0, focus=A1))
    if state in (S.PASSIVE, S.INACTIVE):
        core.handle(Tick(at=T0 + P.active_grace_secs))
    if state is S.INACTIVE:
        core.handle(Tick(at=T0 + P.idle_threshold_secs))
    if state is S.LOCKED:
        core.handle(LockStart(at=T0 + 1))
    assert core.state is state
    return core


# kind -> (event factory, StateChanged cause / envelope kind)
INPUTS: dict[str, tuple[Callable[[float], SensorInput], str]] = {
    "keyboard": (lambda at: KeyboardInput(at=at), "keyboard"),
    "mouse": (lambda at: MouseInput(at=at), "mouse"),
    "app": (lambda at: FocusObserved(at=at, focus=B1), "app_changed"),
    "window": (lambda at: FocusObserved(at=at, focus=A2), "window_changed"),
    "pulse": (lambda at: ActivityPulse(at=at, source="ide"), "pulse"),
}


def state_changes(effects: list[Effect]) -> list[StateChanged]:
    return [e for e in effects if isinstance(e, StateChanged)]


# ---- row 1: Any | LockStart | — | Locked ---------------------------------------------------------------


@pytest.mark.parametrize("start", [S.ACTIVE, S.PASSIVE, S.INACTIVE])
def test_row_any_lockstart_goes_locked(start: ActivityState) -> None:
    core = core_in(start)
    at = T0 + 400

    effects = core.handle(LockStart(at=at, source="logind"))

    assert effects == [
        StateChanged(from_state=start, to_state=S.LOCKED, at=at, cause="lock"),
        LockRecorded(locked=True, source="logind", at=at),
    ]
    assert core.state is S.LOCKED
    assert core.locked
    assert core.row_fire_counts["any_lockstart_goes_locked"] == 1


def test_row_any_lockstart_while_locked_records_again_without_state_change() -> None:
    core = core_in(S.LOCKED)
    transition = core.last_transition

    effects = core.handle(LockStart(at=T0 + 5, source="screensaver"))

    assert effects == [LockRecorded(locked=True, source="screensaver", at=T0 + 5)]
    assert core.state is S.LOCKED
    assert core.last_transition == transition


# ---- row 2: Locked | LockEnd | natural state | Active/Passive/Inactive ---------------------------------


@pytest.mark.parametrize(
    ("unlock_after_last_input", "natural"),
    [(10.0, S.ACTIVE), (100.0, S.PASSIVE), (1_000.0, S.INACTIVE)],
    ids=["active", "passive", "inactive"],
)
def test_row_locked_lockend_returns_to_natural_state(
    unlock_after_last_input: float, natural: ActivityState
) -> None:
    core = core_in(S.LOCKED)
    at = T0 + unlock_after_last_input

    effects = core.handle(LockEnd(at=at, source="logind"))

    assert effects == [
        StateChanged(from_state=S.LOCKED, to_state=natural, at=at, cause="unlock"),
        LockRecorded(locked=False, source="logind", at=at),
    ]
    assert core.state is natural
    assert not core.locked


def test_row_locked_lockend_counts_display_input_seen_while_locked() -> None:
    core = core_in(S.LOCKED)
    # The user typed the password 1 s before this tick; only the display saw it.
    core.handle(Tick(at=T0 + 1_000, idle_ms=1_000))

    effects = core.handle(LockEnd(at=T0 + 1_001))

    assert state_changes(effects) == [
        StateChanged(from_state=S.LOCKED, to_state=S.ACTIVE, at=T0 + 1_001, cause="unlock")
    ]


# ---- row 3: Inactive/Passive | input | — | Active ------------------------------------------------------


def assert_input_wakes(start: ActivityState, kind: str) -> None:
    make, cause = INPUTS[kind]
    core = core_in(start)
    at = T0 + 400

    effects = core.handle(make(at))

    assert effects[:2] == [
        StateChanged(from_state=start, to_state=S.ACTIVE, at=at, cause=cause),
        PersistEnvelope(kind=cause, at=at),
    ]
    assert len(state_changes(effects)) == 1
    assert core.state is S.ACTIVE
    assert core.last_input_at == at
    assert core.row_fire_counts["idle_input_goes_active"] == 1


@pytest.mark.parametrize("kind", list(INPUTS))
def test_row_passive_input_goes_active(kind: str) -> None:
    assert_input_wakes(S.PASSIVE, kind)


@pytest.mark.parametrize("kind", list(INPUTS))
def test_row_inactive_input_goes_active(kind: str) -> None:
    assert_input_wakes(S.INACTIVE, kind)


@pytest.mark.parametrize("kind", list(INPUTS))
def test_active_input_refreshes_idle_clock_and_persists_without_state_change(kind: str) -> None:
    make, cause = INPUTS[kind]
    core = core_in(S.ACTIVE)
    at = T0 + 20

    effects = core.handle(make(at))

    assert state_changes(effects) == []
    assert PersistEnvelope(kind=cause, at=at) in effects
    assert core.last_input_at == at
    # The refreshed clock moves the grace deadline: T0 + 30 is no longer past it.
    assert core.handle(Tick(at=T0 + P.active_grace_secs)) == []
    assert core.state is S.ACTIVE


# ---- row 4: Active | Tick | no input for active_grace_secs | Passive ----------------------------------


def test_row_active_tick_after_grace_goes_passive() -> None:
    core = core_in(S.ACTIVE)
    at = T0 + P.active_grace_secs

    effects = core.handle(Tick(at=at))

    assert effects == [
        StateChanged(from_state=S.ACTIVE, to_state=S.PASSIVE, at=at, cause="active_grace_elapsed")
    ]
    assert core.state is S.PASSIVE


def test_row_active_tick_before_grace_stays_active() -> None:
    core = core_in(S.ACTIVE)

    effects = core.handle(Tick(at=T0 + P.active_grace_secs - 0.1))

    assert effects == []
    assert core.state is S.ACTIVE


def test_row_active_tick_past_idle_threshold_cascades_to_inactive() -> None:
    core = core_in(S.ACTIVE)
    at = T0 + P.idle_threshold_secs

    effects = core.handle(Tick(at=at))

    assert effects == [
        StateChanged(from_state=S.ACTIVE, to_state=S.PASSIVE, at=at, cause="active_grace_elapsed"),
        StateChanged(from_state=S.PASSIVE, to_state=S.INACTIVE, at=at, cause="idle_threshold_elapsed"),
    ]
    assert core.state is S.INACTIVE


# ---- row 5: Passive | Tick | no input for idle_threshold_secs | Inactive -------------------------------


def test_row_passive_tick_after_idle_threshold_goes_inactive() -> None:
    core = core_in(S.PASSIVE)
    at = T0 + P.idle_threshold_secs

    effects = core.handle(Tick(at=at))

    assert effects == [
        StateChanged(from_state=S.PASSIVE, to_state=S.INACTIVE, at=at, cause="idle_threshold_elapsed")
    ]
    assert core.state is S.INACTIVE


def test_row_passive_tick_before_idle_threshold_stays_passive() -> None:
    core = core_in(S.PASSIVE)

    assert core.handle(Tick(at=T0 + P.idle_threshold_secs - 0.1)) == []
    assert core.state is S.PASSIVE


def test_inactive_tick_stays_inactive() -> None:
    core = core_in(S.INACTIVE)

    assert core.handle(Tick(at=T0 + 10_000)) == []
    assert core.state is S.INACTIVE


# ---- derived: any state change emits StateChanged with from/to/at -------------------------------------


def test_state_change_emits_state_changed_with_from_to_at_and_records_last_transition() -> None:
    core = core_in(S.PASSIVE)
    assert core.last_transition == StateChanged(
        from_state=S.ACTIVE, to_state=S.PASSIVE, at=T0 + 30, cause="active_grace_elapsed"
    )

    effects = core.handle(KeyboardInput(at=T0 + 77))

    expected = StateChanged(from_state=S.PASSIVE, to_state=S.ACTIVE, at=T0 + 77, cause="keyboard")
    assert effects == [expected, PersistEnvelope(kind="keyboard", at=T0 + 77)]
    assert core.last_transition == expected


# ---- derived: while locked, no raw input persistence; lock/unlock recorded -----------------------------


@pytest.mark.parametrize("kind", ["keyboard", "mouse", "pulse"])
def test_locked_raw_input_is_not_persisted_and_is_counted(kind: str) -> None:
    make, _ = INPUTS[kind]
    core = core_in(S.LOCKED)

    effects = core.handle(make(T0 + 2))

    assert effects == []
    assert core.state is S.LOCKED
    assert core.suppressed_inputs == 1


def test_locked_display_input_is_not_persisted() -> None:
    core = core_in(S.LOCKED)

    effects = core.handle(Tick(at=T0 + 50, idle_ms=0))

    assert effects == []
    assert core.suppressed_inputs == 1
    assert core.state is S.LOCKED


def test_locked_focus_is_held_silently_and_compared_after_unlock() -> None:
    core = core_in(S.LOCKED)

    assert core.handle(FocusObserved(at=T0 + 2, focus=B1)) == []
    assert core.focus == B1

    core.handle(LockEnd(at=T0 + 3))
    effects = core.handle(FocusObserved(at=T0 + 4, focus=A1))

    assert FocusChanged(previous=B1, current=A1, at=T0 + 4, change="app") in effects


def test_persistence_resumes_after_unlock() -> None:
    core = core_in(S.LOCKED)
    core.handle(KeyboardInput(at=T0 + 2))
    core.handle(LockEnd(at=T0 + 3))

    effects = core.handle(KeyboardInput(at=T0 + 4))

    assert effects == [PersistEnvelope(kind="keyboard", at=T0 + 4)]
    assert core.suppressed_inputs == 1


def test_lockend_while_unlocked_is_still_recorded_without_state_change() -> None:
    core = core_in(S.ACTIVE)

    effects = core.handle(LockEnd(at=T0 + 5, source="dbus"))

    assert effects == [LockRecorded(locked=False, source="dbus", at=T0 + 5)]
    assert core.state is S.ACTIVE


# ---- derived: display idle reset counts as input -------------------------------------------------------


def test_display_idle_reset_counts_as_input_in_passive() -> None:
    core = core_in(S.PASSIVE)
    at = T0 + 40

    effects = core.handle(Tick(at=at, idle_ms=2_000))

    assert effects == [
        StateChanged(from_state=S.PASSIVE, to_state=S.ACTIVE, at=at, cause="display_input"),
        PersistEnvelope(kind="display_input", at=at),
    ]
    assert core.last_input_at == at - 2


def test_display_input_in_active_holds_off_the_grace_transition() -> None:
    core = core_in(S.ACTIVE)

    effects = core.handle(Tick(at=T0 + 35, idle_ms=10_000))

    assert effects == [PersistEnvelope(kind="display_input", at=T0 + 35)]
    assert core.state is S.ACTIVE
    assert core.idle_ms(T0 + 35) == 10_000


def test_display_input_within_tolerance_is_the_same_input() -> None:
    core = core_in(S.ACTIVE)
    core.handle(KeyboardInput(at=T0 + 10))

    assert core.handle(Tick(at=T0 + 10.3, idle_ms=0)) == []
    assert core.last_input_at == T0 + 10


def test_display_input_older_than_current_state_does_not_flap_it() -> None:
    core = core_in(S.PASSIVE)  # entered at T0 + 30 without display data

    effects = core.handle(Tick(at=T0 + 40, idle_ms=20_000))

    assert effects == []
    assert core.state is S.PASSIVE
    assert core.last_input_at == T0 + 20


# ---- construction --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("idle_ms", "natural"),
    [(0, S.ACTIVE), (29_999, S.ACTIVE), (30_000, S.PASSIVE), (299_999, S.PASSIVE), (300_000, S.INACTIVE)],
)
def test_initial_state_is_natural_state_from_idle(idle_ms: int, natural: ActivityState) -> None:
    core = SensorCore(P, now=T0, idle_ms=idle_ms)

    assert core.state is natural
    assert core.last_input_at == T0 - idle_ms / 1000
    assert core.idle_ms(T0 + 1) == idle_ms + 1_000
    assert core.last_transition is None
    assert core.focus == Focus()


def test_initial_state_can_be_given() -> None:
    core = SensorCore(P, now=T0, idle_ms=0, state=S.LOCKED)

    assert core.locked
    assert core.handle(KeyboardInput(at=T0 + 1)) == []
    assert core.suppressed_inputs == 1


# ---- the TABLE drives the machine ----------------------------------------------------------------------


def test_every_table_row_fires_over_a_scripted_day() -> None:
    core = SensorCore(P, now=T0)
    script: list[SensorInput] = [
        FocusObserved(at=T0, focus=A1),
        Tick(at=T0 + 30),  # row 4
        Tick(at=T0 + 300),  # row 5
        KeyboardInput(at=T0 + 310),  # row 3
        LockStart(at=T0 + 320),  # row 1
        LockEnd(at=T0 + 330),  # row 2
    ]
    for event in script:
        core.handle(event)

    fired = core.row_fire_counts
    for row in TABLE:
        assert fired.get(row.name, 0) >= 1, f"row {row.name} never fired"
    assert set(fired) == {row.name for row in TABLE}


def test_table_rows_have_unique_names_and_are_data() -> None:
    assert isinstance(TABLE, tuple)
    assert len({row.name for row in TABLE}) == len(TABLE) == 5


def test_machine_behaviour_follows_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    without_grace_row = tuple(row for row in TABLE if row.name != "active_tick_after_grace_goes_passive")
    monkeypatch.setattr(machine, "TABLE", without_grace_row)
    core = core_in(S.ACTIVE)

    assert core.handle(Tick(at=T0 + 1_000)) == []
    assert core.state is S.ACTIVE
