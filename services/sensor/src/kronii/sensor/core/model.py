"""Vocabulary of the sensor core: states, the inputs it accepts and the effects it asks for.

Times are epoch seconds (float) passed in by the caller; the core never reads a clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ActivityState(enum.Enum):
    ACTIVE = "active"
    PASSIVE = "passive"
    INACTIVE = "inactive"
    LOCKED = "locked"


@dataclass(frozen=True, slots=True)
class Focus:
    """The focused window as the display reports it. `title` is raw here; the adapter redacts it."""

    app_name: str = ""
    wm_class: str = ""
    window_id: int = 0
    title: str = ""
    pid: int = 0
    app_start_time_ms: int = 0
    # Non-empty when the window is a prompt, not an app (core.prompts.prompt_kind: "keyring", ...).
    prompt: str = ""


# ---- inputs -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyboardInput:
    at: float


@dataclass(frozen=True, slots=True)
class MouseInput:
    at: float


@dataclass(frozen=True, slots=True)
class FocusObserved:
    """The display reports the focused window. The core turns it into AppChanged, WindowChanged,
    a title change, or nothing, by comparing it with the focus it already holds."""

    at: float
    focus: Focus


@dataclass(frozen=True, slots=True)
class ActivityPulse:
    at: float
    source: str = "pulse"


@dataclass(frozen=True, slots=True)
class LockStart:
    at: float
    source: str = "unknown"


@dataclass(frozen=True, slots=True)
class LockEnd:
    at: float
    source: str = "unknown"


@dataclass(frozen=True, slots=True)
class Tick:
    """A periodic tick. `idle_ms` is the display's idle time (MIT-SCREEN-SAVER) when there is a
    display; input newer than the core's own record counts as input."""

    at: float
    idle_ms: int | None = None


SensorInput = KeyboardInput | MouseInput | FocusObserved | ActivityPulse | LockStart | LockEnd | Tick


# ---- effects ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateChanged:
    from_state: ActivityState
    to_state: ActivityState
    at: float
    cause: str


@dataclass(frozen=True, slots=True)
class FocusChanged:
    previous: Focus
    current: Focus
    at: float
    change: str  # "app" or "window"


@dataclass(frozen=True, slots=True)
class TitleChanged:
    focus: Focus
    at: float


@dataclass(frozen=True, slots=True)
class PromptChanged:
    """A prompt window took the focus over the app (``prompt`` is it) or left it (``prompt`` is an
    empty Focus). Not a focus change: the app the person was in stays the focus."""

    prompt: Focus
    at: float


@dataclass(frozen=True, slots=True)
class PulseEmitted:
    source: str
    at: float


@dataclass(frozen=True, slots=True)
class LockRecorded:
    locked: bool
    source: str
    at: float


@dataclass(frozen=True, slots=True)
class PersistEnvelope:
    """Ask the adapters to persist an input envelope. Never produced for raw input while locked."""

    kind: str
    at: float


Effect = (
    StateChanged | FocusChanged | TitleChanged | PromptChanged | PulseEmitted | LockRecorded | PersistEnvelope
)
