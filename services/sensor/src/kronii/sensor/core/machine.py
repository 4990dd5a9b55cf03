"""`SensorCore`: interprets `TABLE` over the sensor's inputs. No I/O, no clock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import assert_never

from kronii.sensor.core.focus import FocusChange, TitleThrottle, classify
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
    PromptChanged,
    PulseEmitted,
    SensorInput,
    StateChanged,
    Tick,
)
from kronii.sensor.core.params import SensorParams, natural_state
from kronii.sensor.core.table import TABLE, UNMATCHED, Action, Guard, Row, Target, Trigger

# The display's idle counter has coarse resolution and is sampled after our own input events, so
# a fresher display input within this margin is the same input, not a missed one.
DISPLAY_INPUT_TOLERANCE_SECS = 0.5

_FOCUS_TRIGGERS: Mapping[FocusChange, Trigger] = MappingProxyType(
    {FocusChange.APP: Trigger.APP_CHANGED, FocusChange.WINDOW: Trigger.WINDOW_CHANGED}
)


@dataclass(frozen=True, slots=True)
class _Signal:
    trigger: Trigger
    at: float
    source: str = ""


@dataclass(frozen=True, slots=True)
class _Firing:
    signal: _Signal
    from_state: ActivityState
    to_state: ActivityState
    cause: str


class SensorCore:
    """The daemon state machine. Feed it inputs with `handle`; it returns the effects to perform.

    While Locked:
    - keyboard, mouse, pulse and display input are not persisted and change no state (they are
      counted in `suppressed_inputs`); they still refresh the idle clock, because typing the
      password shows the user is present and the post-unlock natural state should say so;
    - FocusObserved replaces the held focus silently: the lock screen taking focus is not user
      activity, so it yields no FocusChanged, pulse or TitleChanged. The first focus seen after
      unlock is compared with what was held, so returning to the desktop reads as a focus change;
    - lock and unlock signals are always recorded, a repeated LockStart or a stray LockEnd too.

    A prompt window (Focus.prompt set: gnome-keyring's prompter, a polkit agent, pinentry, kronii's
    own) taking the focus is not a context switch: the held focus stays the app the person was in,
    no FocusChanged, pulse or input follows, only PromptChanged; when the focus leaves the prompt it
    is compared with that app, so coming back to it changes nothing.
    """

    def __init__(
        self,
        params: SensorParams,
        now: float,
        idle_ms: int = 0,
        state: ActivityState | None = None,
    ) -> None:
        self._params = params
        self._last_input_at = now - max(idle_ms, 0) / 1000
        self._state = state if state is not None else natural_state(params, now - self._last_input_at)
        # Display input older than this is news about a state we already left (see _on_tick).
        self._state_since = now
        self._persist_raw = self._state is not ActivityState.LOCKED
        self._focus = Focus()
        self._prompt = Focus()
        self._titles = TitleThrottle(params.title_interval_secs)
        self._last_transition: StateChanged | None = None
        self._suppressed_inputs = 0
        self._row_fires: Counter[str] = Counter()
        self._guards: Mapping[Guard, Callable[[float], bool]] = {
            Guard.NONE: lambda _at: True,
            Guard.NATURAL_STATE: lambda _at: True,
            Guard.ACTIVE_GRACE_ELAPSED: lambda at: self._idle_secs(at) >= params.active_grace_secs,
            Guard.IDLE_THRESHOLD_ELAPSED: lambda at: self._idle_secs(at) >= params.idle_threshold_secs,
        }
        self._actions: Mapping[Action, Callable[[_Firing, list[Effect]], None]] = {
            Action.EMIT_STATE_CHANGED: self._emit_state_changed,
            Action.RECORD_LOCK: self._record_lock,
            Action.SUPPRESS_RAW_PERSISTENCE: self._suppress_raw_persistence,
            Action.RESUME_PERSISTENCE: self._resume_persistence,
            Action.PERSIST_ENVELOPE: self._persist_envelope,
        }

    # ---- read-only view ---------------------------------------------------------------------------

    @property
    def params(self) -> SensorParams:
        return self._params

    @property
    def state(self) -> ActivityState:
        return self._state

    @property
    def focus(self) -> Focus:
        return self._focus

    @property
    def prompt(self) -> Focus:
        """The prompt window that has the focus over `focus`; an empty Focus when there is none."""
        return self._prompt

    @property
    def last_transition(self) -> StateChanged | None:
        return self._last_transition

    @property
    def last_input_at(self) -> float:
        return self._last_input_at

    @property
    def locked(self) -> bool:
        return self._state is ActivityState.LOCKED

    @property
    def suppressed_inputs(self) -> int:
        return self._suppressed_inputs

    @property
    def pending_titles(self) -> int:
        return self._titles.pending

    @property
    def row_fire_counts(self) -> Mapping[str, int]:
        """How often each TABLE row (by name) has fired."""
        return MappingProxyType(dict(self._row_fires))

    def idle_ms(self, now: float) -> int:
        return max(0, int(self._idle_secs(now) * 1000))

    # ---- intake -----------------------------------------------------------------------------------

    def handle(self, event: SensorInput) -> list[Effect]:
        effects: list[Effect] = []
        match event:
            case KeyboardInput(at=at):
                self._on_input(_Signal(Trigger.KEYBOARD, at), effects)
            case MouseInput(at=at):
                self._on_input(_Signal(Trigger.MOUSE, at), effects)
            case ActivityPulse(at=at, source=source):
                self._on_input(_Signal(Trigger.PULSE, at, source), effects)
            case LockStart(at=at, source=source):
                self._dispatch(_Signal(Trigger.LOCK_START, at, source), effects)
            case LockEnd(at=at, source=source):
                self._dispatch(_Signal(Trigger.LOCK_END, at, source), effects)
            case FocusObserved():
                self._on_focus(event, effects)
            case Tick():
                self._on_tick(event, effects)
            case _:
                assert_never(event)
        return effects

    def _on_input(self, signal: _Signal, effects: list[Effect]) -> None:
        self._last_input_at = max(self._last_input_at, signal.at)
        self._dispatch(signal, effects)

    def _on_focus(self, event: FocusObserved, effects: list[Effect]) -> None:
        if self._held_by_prompt(event, effects):
            return
        previous, current, at = self._focus, event.focus, event.at
        self._focus = current
        effects.extend(self._titles.flush(at))
        if self.locked:
            return
        change = classify(previous, current)
        if change is FocusChange.TITLE:
            title = self._titles.observe(current, at)
            if title is not None:
                effects.append(title)
            return
        trigger = _FOCUS_TRIGGERS.get(change)
        if trigger is None:
            return
        self._titles.discard(current.window_id)
        self._on_input(_Signal(trigger, at), effects)
        effects.append(FocusChanged(previous=previous, current=current, at=at, change=change.value))
        effects.append(PulseEmitted(source="focus", at=at))

    def _held_by_prompt(self, event: FocusObserved, effects: list[Effect]) -> bool:
        """Track the prompt window; True when the focus is one (the app focus is then left alone)."""
        current = event.focus
        shown = current if current.prompt else Focus()
        # Another prompt window, or none: said once; its title changing is not news.
        if (shown.window_id, shown.prompt) != (self._prompt.window_id, self._prompt.prompt):
            effects.append(PromptChanged(prompt=shown, at=event.at))
        self._prompt = shown
        if current.prompt:
            effects.extend(self._titles.flush(event.at))
            return True
        return False

    def _on_tick(self, tick: Tick, effects: list[Effect]) -> None:
        if tick.idle_ms is not None:
            seen_at = tick.at - max(tick.idle_ms, 0) / 1000
            if seen_at > self._last_input_at + DISPLAY_INPUT_TOLERANCE_SECS:
                self._last_input_at = seen_at
                # Input from before the current state began was unknown when we entered it;
                # replaying it now would flap the state back and forth within one tick.
                if seen_at > self._state_since:
                    self._dispatch(_Signal(Trigger.DISPLAY_INPUT, tick.at), effects)
        signal = _Signal(Trigger.TICK, tick.at)
        # Both guards can hold at once (Active, idle past the threshold); each row moves the state
        # forward, so the table's length bounds the cascade.
        for _ in TABLE:
            before = self._state
            if self._dispatch(signal, effects) is None or self._state is before:
                break
        effects.extend(self._titles.flush(tick.at))

    # ---- table interpretation ---------------------------------------------------------------------

    def _match(self, trigger: Trigger, at: float) -> Row | None:
        for row in TABLE:
            if self._state in row.from_states and trigger in row.triggers and self._guards[row.guard](at):
                return row
        return None

    def _dispatch(self, signal: _Signal, effects: list[Effect]) -> Row | None:
        row = self._match(signal.trigger, signal.at)
        from_state = self._state
        if row is None:
            firing = _Firing(signal, from_state, from_state, signal.trigger.value)
            for action in UNMATCHED.get(signal.trigger, ()):
                self._actions[action](firing, effects)
            return None
        to_state = self._resolve(row.to_state, signal.at)
        self._state = to_state
        if to_state is not from_state:
            self._state_since = signal.at
        self._row_fires[row.name] += 1
        firing = _Firing(signal, from_state, to_state, row.cause or signal.trigger.value)
        for action in row.actions:
            self._actions[action](firing, effects)
        return row

    def _resolve(self, target: ActivityState | Target, at: float) -> ActivityState:
        if isinstance(target, Target):
            return natural_state(self._params, self._idle_secs(at))
        return target

    def _idle_secs(self, at: float) -> float:
        return at - self._last_input_at

    # ---- actions ----------------------------------------------------------------------------------

    def _emit_state_changed(self, firing: _Firing, effects: list[Effect]) -> None:
        # A row may re-enter its own state (LockStart while Locked): not a change, nothing to say.
        if firing.to_state is firing.from_state:
            return
        changed = StateChanged(
            from_state=firing.from_state,
            to_state=firing.to_state,
            at=firing.signal.at,
            cause=firing.cause,
        )
        self._last_transition = changed
        effects.append(changed)

    def _record_lock(self, firing: _Firing, effects: list[Effect]) -> None:
        signal = firing.signal
        effects.append(
            LockRecorded(locked=signal.trigger is Trigger.LOCK_START, source=signal.source, at=signal.at)
        )

    def _suppress_raw_persistence(self, _firing: _Firing, _effects: list[Effect]) -> None:
        self._persist_raw = False

    def _resume_persistence(self, _firing: _Firing, _effects: list[Effect]) -> None:
        self._persist_raw = True

    def _persist_envelope(self, firing: _Firing, effects: list[Effect]) -> None:
        if not self._persist_raw:
            self._suppressed_inputs += 1
            return
        effects.append(PersistEnvelope(kind=firing.signal.trigger.value, at=firing.signal.at))
