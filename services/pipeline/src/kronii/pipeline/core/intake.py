"""Intake (seed 000, stage 1): coalesce near-duplicate triggers into batches and keep
high-frequency title changes away from the Router (and so from any model).

Storm bound. A storm of title changes on one window (1,000 in 10 s, say) yields at most ONE batch,
and that batch is marked `high_frequency`, which the Router answers with Defer:

- `TitleChurn` admits a title change only while the window has seen at most `max_changes` of them
  in the last `window_ms`, dropped changes included. At 100 changes/s the first `max_changes`
  (3 by default) pass and every later one is dropped and counted while the storm lasts.
- `Coalescer` merges triggers with the same kind and app/window into the batch opened by the first
  of them for `window_ms` (a fixed window from the first trigger, so a steady stream cannot keep a
  batch open forever). The 3 admitted changes arrive within 30 ms: one batch.
- Without the churn filter the coalescer alone bounds a single window's stream to
  ceil(duration / window_ms) + 1 batches (7 for 10 s at 1,500 ms): each batch owns a whole window.

Lock signals and the pipeline's own triggers (internal, capture status, timeouts) are not
intake's business: they go to the machine directly.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from enum import StrEnum

from kronii.pipeline.core.states import ROUND_TRIGGERS, Trigger, TriggerKind

DEFAULT_WINDOW_MS = 1_500
DEFAULT_TITLE_MAX_CHANGES = 3
# Forget a window's title history once this many windows are tracked and it has been quiet.
_PRUNE_AT = 256

_WindowKey = tuple[str, str, int]
_SourceKey = tuple[str, str, str, int, str, str]


def _window_key(trigger: Trigger) -> _WindowKey:
    return (trigger.app, trigger.wm_class, trigger.window_id)


@dataclass(frozen=True, slots=True)
class Batch:
    """Near-duplicate triggers merged into one: the first and the latest, and how many there were."""

    first: Trigger
    last: Trigger
    count: int
    opened_at_ms: int
    high_frequency: bool = False
    high_priority: bool = False

    @property
    def kind(self) -> TriggerKind:
        return self.first.kind

    @property
    def key(self) -> _SourceKey:
        return self.first.source_key


class Admission(StrEnum):
    OPENED = "opened"  # started a new batch
    MERGED = "merged"  # joined an open batch
    DROPPED_TITLE_CHURN = "dropped_title_churn"  # a high-frequency title change, counted and dropped


class TitleChurn:
    """Marks a window high-frequency when it changes title more than `max_changes` times within
    `window_ms`. Keeps only the last `max_changes + 1` change times per window: that is all the
    test "more than N within the window" needs, so a storm costs constant memory."""

    def __init__(
        self, window_ms: int = DEFAULT_WINDOW_MS, max_changes: int = DEFAULT_TITLE_MAX_CHANGES
    ) -> None:
        if window_ms <= 0 or max_changes < 1:
            raise ValueError("title churn needs window_ms > 0 and max_changes >= 1")
        self._window_ms = window_ms
        self._max_changes = max_changes
        self._changes: dict[_WindowKey, deque[int]] = {}
        self._last_hot_ms: dict[_WindowKey, int] = {}
        self.dropped = 0

    def observe(self, trigger: Trigger) -> bool:
        """Records a title change; True when it is high-frequency and must be dropped."""
        key = _window_key(trigger)
        if len(self._changes) > _PRUNE_AT:
            self._prune(trigger.at_ms)
        times = self._changes.setdefault(key, deque(maxlen=self._max_changes + 1))
        times.append(trigger.at_ms)
        hot = len(times) > self._max_changes and trigger.at_ms - times[0] < self._window_ms
        if hot:
            self._last_hot_ms[key] = trigger.at_ms
            self.dropped += 1
        return hot

    def hot_since(self, trigger: Trigger, since_ms: int) -> bool:
        """Whether the trigger's window dropped a high-frequency change at or after `since_ms`."""
        last = self._last_hot_ms.get(_window_key(trigger))
        return last is not None and last >= since_ms

    def _prune(self, now_ms: int) -> None:
        for key in [k for k, times in self._changes.items() if now_ms - times[-1] >= self._window_ms]:
            del self._changes[key]
            self._last_hot_ms.pop(key, None)


class Coalescer:
    """Merges triggers with the same `Trigger.source_key` within `window_ms` of the batch's first
    trigger. A batch is released once its window closed, or at once when it holds a high-priority
    trigger (the seed lets those preempt)."""

    def __init__(self, window_ms: int = DEFAULT_WINDOW_MS) -> None:
        if window_ms <= 0:
            raise ValueError("coalescing window_ms must be > 0")
        self._window_ms = window_ms
        self._open: dict[_SourceKey, Batch] = {}
        # Batches whose window closed before the caller released them and whose key a newer
        # trigger took over: still owed to the caller.
        self._due: list[Batch] = []

    @property
    def window_ms(self) -> int:
        return self._window_ms

    @property
    def pending(self) -> int:
        return len(self._open)

    def offer(self, trigger: Trigger) -> Admission:
        key = trigger.source_key
        batch = self._open.get(key)
        if batch is not None and trigger.at_ms - batch.opened_at_ms < self._window_ms:
            self._open[key] = replace(
                batch,
                last=trigger,
                count=batch.count + 1,
                high_priority=batch.high_priority or trigger.high_priority,
            )
            return Admission.MERGED
        if batch is not None:
            self._due.append(batch)
        self._open[key] = Batch(
            first=trigger,
            last=trigger,
            count=1,
            opened_at_ms=trigger.at_ms,
            high_priority=trigger.high_priority,
        )
        return Admission.OPENED

    def release(self, now_ms: int) -> list[Batch]:
        """Batches that are due, oldest first."""
        due = [
            b for b in self._open.values() if b.high_priority or now_ms - b.opened_at_ms >= self._window_ms
        ]
        for batch in due:
            del self._open[batch.key]
        released = self._due + due
        self._due = []
        return sorted(released, key=lambda b: (b.opened_at_ms, b.key))


class Intake:
    """Title churn filter in front of the coalescer: what `release` returns goes to the Router."""

    def __init__(
        self, window_ms: int = DEFAULT_WINDOW_MS, title_max_changes: int = DEFAULT_TITLE_MAX_CHANGES
    ) -> None:
        self._coalescer = Coalescer(window_ms)
        self._churn = TitleChurn(window_ms, title_max_changes)

    @property
    def dropped_title_churn(self) -> int:
        return self._churn.dropped

    @property
    def pending(self) -> int:
        return self._coalescer.pending

    def offer(self, trigger: Trigger) -> Admission:
        if trigger.kind not in ROUND_TRIGGERS:
            raise ValueError(f"intake takes round triggers only, not {trigger.kind}: send it to the machine")
        if trigger.kind is TriggerKind.TITLE_CHANGED and self._churn.observe(trigger):
            return Admission.DROPPED_TITLE_CHURN
        return self._coalescer.offer(trigger)

    def release(self, now_ms: int) -> list[Batch]:
        """Due batches; a title batch whose window went on churning is marked `high_frequency`."""
        return [
            replace(batch, high_frequency=True)
            if batch.kind is TriggerKind.TITLE_CHANGED
            and self._churn.hot_since(batch.first, batch.opened_at_ms)
            else batch
            for batch in self._coalescer.release(now_ms)
        ]
