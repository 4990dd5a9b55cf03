"""Vocabulary of the orchestration machine (seed 000, "kronii orchestration model"): run states,
trigger kinds and the trigger value the machine and intake consume."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RunState(StrEnum):
    """The eleven orchestration states of seed 000."""

    IDLE = "idle"  # waiting for triggers
    COLLECTING = "collecting"  # gathering Base and candidate Plugin context
    REDACTING = "redacting"  # sensitive info filter and audit
    ROUTING = "routing"  # select context strategy and prompt family
    EXTRACTING = "extracting"  # run one or more Extractors
    SYNTHESIZING = "synthesizing"  # merge extracted fragments
    PLANNING = "planning"  # decide whether to notify and when to wake next
    ACTING = "acting"  # surface suggestion/reminder or stay silent
    COOLING = "cooling"  # cooldown window that rate-limits re-entry
    DEFERRED = "deferred"  # deferred due to lock/red risk/low value
    AWAITING_CAPTURE = "awaiting_capture"  # waiting for a ScreenCapture job result


class TriggerKind(StrEnum):
    """Daemon triggers, plugin events, the safety-net tick, and the pipeline's own signals."""

    STATE_CHANGED = "state_changed"
    FOCUS_CHANGED = "focus_changed"
    TITLE_CHANGED = "title_changed"
    ACTIVITY_PULSE = "activity_pulse"
    PLUGIN_EVENT = "plugin_event"
    TICK = "tick"
    LOCK_START = "lock_start"
    LOCK_END = "lock_end"
    # The pipeline finished the work of its current state and asks the table where to go next.
    INTERNAL = "internal"
    # A ScreenCapture job reported a status (see `CaptureStatus`).
    CAPTURE_STATUS = "capture_status"
    # A deadline the pipeline set (capture ttl, extractor timeout) passed.
    TIMEOUT = "timeout"


# Triggers that can open a round from Idle (seed row 1).
ROUND_TRIGGERS = frozenset(
    {
        TriggerKind.STATE_CHANGED,
        TriggerKind.FOCUS_CHANGED,
        TriggerKind.TITLE_CHANGED,
        TriggerKind.ACTIVITY_PULSE,
        TriggerKind.PLUGIN_EVENT,
        TriggerKind.TICK,
    }
)

# Triggers that come from the user's desktop or a plugin, as opposed to the pipeline's own signals.
EXTERNAL_TRIGGERS = ROUND_TRIGGERS | {TriggerKind.LOCK_START, TriggerKind.LOCK_END}


class Priority(StrEnum):
    NORMAL = "normal"
    HIGH = "high"


class CaptureStatus(StrEnum):
    """Status progression of a ScreenCapture job (seed 000, CaptureResult)."""

    QUEUED = "queued"
    WAITING = "waiting"
    CAPTURING = "capturing"
    SCORING = "scoring"
    REDACTING = "redacting"
    PERSISTED = "persisted"
    EXPIRED = "expired"
    REJECTED = "rejected"
    FAILED = "failed"


CAPTURE_FAILURES = frozenset({CaptureStatus.EXPIRED, CaptureStatus.REJECTED, CaptureStatus.FAILED})


@dataclass(frozen=True, slots=True)
class Trigger:
    """One trigger as the pipeline sees it. Fields that do not apply to a kind stay empty.

    `from_state`/`to_state` are the daemon's activity states of a StateChanged ("active",
    "passive", ...); `plugin_app_id`/`plugin_kind` describe a PluginEvent ("zoom",
    "meeting_joined"); `capture_status`/`capture_job_id` describe a CaptureStatus.
    """

    kind: TriggerKind
    at_ms: int
    app: str = ""
    wm_class: str = ""
    window_id: int = 0
    title: str = ""
    priority: Priority = Priority.NORMAL
    from_state: str = ""
    to_state: str = ""
    plugin_app_id: str = ""
    plugin_kind: str = ""
    capture_status: CaptureStatus | None = None
    capture_job_id: str = ""

    @property
    def high_priority(self) -> bool:
        return self.priority is Priority.HIGH

    @property
    def source_key(self) -> tuple[str, str, str, int, str, str]:
        """What makes two triggers near-duplicates: same kind and same app/window (or plugin event)."""
        return (
            self.kind.value,
            self.app,
            self.wm_class,
            self.window_id,
            self.plugin_app_id,
            self.plugin_kind,
        )


class PolicyKind(StrEnum):
    """The kind of ContextPolicy the Router chose (the policy values themselves live in `router`)."""

    BASE_ONLY = "base_only"
    PLUGIN_LITE = "plugin_lite"
    PLUGIN_FULL = "plugin_full"
    DEFER = "defer"


PLUGIN_POLICIES = frozenset({PolicyKind.PLUGIN_LITE, PolicyKind.PLUGIN_FULL})


class CapturePreemption(StrEnum):
    """What the Planner's policy does with a pending capture when a high-priority trigger arrives."""

    CANCEL = "cancel"  # the capture shows a window the user left: drop it and start over
    DOWNGRADE = "downgrade"  # keep it at lower priority; the result may still be useful
