"""The commands the pipeline's use cases take and the results they return.

A trigger arrives as a `TriggerCommand` (from the bus, POST /v1/triggers, or a recording being
replayed): what happened, not yet when. The use case that takes it stamps it with its own clock
(`at`), so intake's coalescing windows and the run loop share one time base that a step of the
wall clock does not move."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.pipeline.core.states import CaptureStatus, Priority, Trigger, TriggerKind

__all__ = ["RecordedTrigger", "TriggerCommand", "TriggerOutcome"]


@dataclass(frozen=True, slots=True)
class TriggerCommand:
    """One external trigger as it arrived; the fields of `Trigger` but its time."""

    kind: TriggerKind
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

    def at(self, now_ms: int) -> Trigger:
        """The trigger, stamped with the receiver's clock."""
        return Trigger(
            self.kind,
            now_ms,
            app=self.app,
            wm_class=self.wm_class,
            window_id=self.window_id,
            title=self.title,
            priority=self.priority,
            from_state=self.from_state,
            to_state=self.to_state,
            plugin_app_id=self.plugin_app_id,
            plugin_kind=self.plugin_kind,
            capture_status=self.capture_status,
            capture_job_id=self.capture_job_id,
        )


@dataclass(frozen=True, slots=True)
class TriggerOutcome:
    """What became of a trigger: its kind and what intake did with it ("locked", "unlocked", or
    the core's Admission: accepted, coalesced, dropped...)."""

    kind: TriggerKind
    intake: str


@dataclass(frozen=True, slots=True)
class RecordedTrigger:
    """One event of a recording, for a replay: its offset into the recording and the trigger it
    stands for (None for a message that is no trigger: it counts as an event only)."""

    offset_ms: int
    command: TriggerCommand | None
