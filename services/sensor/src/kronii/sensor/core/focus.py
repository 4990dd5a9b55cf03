"""Focus comparison and the per-window title throttle. Pure; times are passed in."""

from __future__ import annotations

import enum

from kronii.sensor.core.model import Focus, TitleChanged


class FocusChange(enum.Enum):
    NONE = "none"
    APP = "app"
    WINDOW = "window"
    TITLE = "title"


def _app_identity(focus: Focus) -> tuple[int, str, str, int]:
    # The start time tells a restarted app apart from the old one when the pid is reused.
    return (focus.pid, focus.app_name, focus.wm_class, focus.app_start_time_ms)


def classify(previous: Focus, current: Focus) -> FocusChange:
    if _app_identity(previous) != _app_identity(current):
        return FocusChange.APP
    if previous.window_id != current.window_id:
        return FocusChange.WINDOW
    if previous.title != current.title:
        return FocusChange.TITLE
    return FocusChange.NONE


class TitleThrottle:
    """At most one TitleChanged per window per interval. A change inside the interval is held and
    replaced by later ones, so the window's final title is always emitted by a later `flush`."""

    def __init__(self, interval_secs: float) -> None:
        self._interval = interval_secs
        self._last_emit: dict[int, tuple[float, str]] = {}
        self._pending: dict[int, Focus] = {}

    def observe(self, focus: Focus, at: float) -> TitleChanged | None:
        window_id = focus.window_id
        last = self._last_emit.get(window_id)
        if last is None or at - last[0] >= self._interval:
            self._pending.pop(window_id, None)
            self._last_emit[window_id] = (at, focus.title)
            return TitleChanged(focus=focus, at=at)
        if focus.title == last[1]:
            # Back to what consumers already have: nothing left to tell them.
            self._pending.pop(window_id, None)
        else:
            self._pending[window_id] = focus
        return None

    def discard(self, window_id: int) -> None:
        """Drop a held title that a FocusChanged (which carries the current title) supersedes."""
        self._pending.pop(window_id, None)

    def flush(self, at: float) -> list[TitleChanged]:
        due: list[TitleChanged] = []
        for window_id, focus in list(self._pending.items()):
            if at - self._last_emit[window_id][0] >= self._interval:
                del self._pending[window_id]
                self._last_emit[window_id] = (at, focus.title)
                due.append(TitleChanged(focus=focus, at=at))
        # Entries past their interval throttle nothing; dropping them keeps memory bounded by the
        # windows touched within one interval.
        for window_id, (emitted_at, _) in list(self._last_emit.items()):
            if window_id not in self._pending and at - emitted_at >= self._interval:
                del self._last_emit[window_id]
        return due

    @property
    def pending(self) -> int:
        return len(self._pending)
