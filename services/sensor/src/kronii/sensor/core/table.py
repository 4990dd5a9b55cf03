"""The daemon transition table of seed 000 as data. `SensorCore` interprets it; nothing else
encodes these transitions."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kronii.sensor.core.model import ActivityState


class Trigger(enum.Enum):
    """What happened, as the table sees it. Values double as StateChanged causes and envelope kinds."""

    KEYBOARD = "keyboard"
    MOUSE = "mouse"
    APP_CHANGED = "app_changed"
    WINDOW_CHANGED = "window_changed"
    PULSE = "pulse"
    # Input the display saw (idle counter reset) that no input adapter reported.
    DISPLAY_INPUT = "display_input"
    LOCK_START = "lock"
    LOCK_END = "unlock"
    TICK = "tick"


class Guard(enum.Enum):
    NONE = "none"
    NATURAL_STATE = "natural_state"
    ACTIVE_GRACE_ELAPSED = "active_grace_elapsed"
    IDLE_THRESHOLD_ELAPSED = "idle_threshold_elapsed"


class Target(enum.Enum):
    """A to-state resolved when the row fires rather than fixed in the table."""

    NATURAL = "natural_state"


class Action(enum.Enum):
    EMIT_STATE_CHANGED = "StateChanged"
    RECORD_LOCK = "LockRecorded"
    SUPPRESS_RAW_PERSISTENCE = "suppress_raw_persistence"
    RESUME_PERSISTENCE = "resume_persistence"
    PERSIST_ENVELOPE = "PersistEnvelope"


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    from_states: frozenset[ActivityState]
    triggers: frozenset[Trigger]
    guard: Guard
    to_state: ActivityState | Target
    actions: tuple[Action, ...]
    # None: the trigger is the cause. Tick rows fire because time passed, so the guard is the cause.
    cause: str | None = None


INPUT_TRIGGERS = frozenset(
    {
        Trigger.KEYBOARD,
        Trigger.MOUSE,
        Trigger.APP_CHANGED,
        Trigger.WINDOW_CHANGED,
        Trigger.PULSE,
        Trigger.DISPLAY_INPUT,
    }
)

_S = ActivityState

# First matching row wins; rows are in seed order.
TABLE: tuple[Row, ...] = (
    Row(
        name="any_lockstart_goes_locked",
        from_states=frozenset(ActivityState),
        triggers=frozenset({Trigger.LOCK_START}),
        guard=Guard.NONE,
        to_state=_S.LOCKED,
        actions=(Action.EMIT_STATE_CHANGED, Action.RECORD_LOCK, Action.SUPPRESS_RAW_PERSISTENCE),
    ),
    Row(
        name="locked_lockend_returns_to_natural_state",
        from_states=frozenset({_S.LOCKED}),
        triggers=frozenset({Trigger.LOCK_END}),
        guard=Guard.NATURAL_STATE,
        to_state=Target.NATURAL,
        actions=(Action.EMIT_STATE_CHANGED, Action.RECORD_LOCK, Action.RESUME_PERSISTENCE),
    ),
    Row(
        name="idle_input_goes_active",
        from_states=frozenset({_S.INACTIVE, _S.PASSIVE}),
        triggers=INPUT_TRIGGERS,
        guard=Guard.NONE,
        to_state=_S.ACTIVE,
        actions=(Action.EMIT_STATE_CHANGED, Action.PERSIST_ENVELOPE),
    ),
    Row(
        name="active_tick_after_grace_goes_passive",
        from_states=frozenset({_S.ACTIVE}),
        triggers=frozenset({Trigger.TICK}),
        guard=Guard.ACTIVE_GRACE_ELAPSED,
        to_state=_S.PASSIVE,
        actions=(Action.EMIT_STATE_CHANGED,),
        cause=Guard.ACTIVE_GRACE_ELAPSED.value,
    ),
    Row(
        name="passive_tick_after_idle_threshold_goes_inactive",
        from_states=frozenset({_S.PASSIVE}),
        triggers=frozenset({Trigger.TICK}),
        guard=Guard.IDLE_THRESHOLD_ELAPSED,
        to_state=_S.INACTIVE,
        actions=(Action.EMIT_STATE_CHANGED,),
        cause=Guard.IDLE_THRESHOLD_ELAPSED.value,
    ),
)

# What a trigger still does when no row fires (input in Active or Locked, a stray unlock): the
# seed wants every input persisted unless locked, and every lock signal recorded.
UNMATCHED: Mapping[Trigger, tuple[Action, ...]] = MappingProxyType(
    {
        **{trigger: (Action.PERSIST_ENVELOPE,) for trigger in INPUT_TRIGGERS},
        Trigger.LOCK_END: (Action.RECORD_LOCK,),
    }
)
