"""Snooze and disable, per source (an app, a plugin, a rule: whatever a notification's source_key
names), and the pure check made before a notification goes out: "is this source muted now?"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["SourceControl", "is_muted", "muted_reason"]


@dataclass(frozen=True, slots=True)
class SourceControl:
    source_key: str
    snoozed_until: float | None = None
    disabled: bool = False
    notification_id: str = ""
    updated_at: float = 0.0


def muted_reason(control: SourceControl | None, now: float) -> str | None:
    """Why the source may not notify at `now` (epoch seconds), or None if it may."""
    if control is None:
        return None
    if control.disabled:
        return "disabled by the user"
    if control.snoozed_until is not None and now < control.snoozed_until:
        until = datetime.fromtimestamp(control.snoozed_until, UTC).isoformat(timespec="seconds")
        return f"snoozed until {until}"
    return None


def is_muted(controls: Mapping[str, SourceControl], source_key: str, now: float) -> bool:
    """The core's check against a snapshot of the controls (SourceControls.active)."""
    return muted_reason(controls.get(source_key), now) is not None
