"""Carry out what the state machine decided: publish each event (titles redacted) to NATS and the
watchers, count it, and queue its envelope and audit row."""

from __future__ import annotations

import dataclasses
import logging

from kronii.foundation.clock import Clock
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import (
    Effect,
    FocusChanged,
    LockRecorded,
    PersistEnvelope,
    PromptChanged,
    PulseEmitted,
    StateChanged,
    TitleChanged,
)
from kronii.sensor.core.snapshot import ActivityEvent, Envelope
from kronii.sensor.metrics import SensorMetrics
from kronii.sensor.ports import ActivityPublisher, PublishFailed, TitleCleaner
from kronii.sensor.usecases.record_activity import RecordActivity
from kronii.sensor.usecases.watch_activity import ActivityFeed

__all__ = ["PublishActivity"]

log = logging.getLogger(__name__)


class PublishActivity:
    def __init__(
        self,
        core: SensorCore,
        titles: TitleCleaner,
        publisher: ActivityPublisher,
        feed: ActivityFeed,
        record: RecordActivity,
        metrics: SensorMetrics,
        clock: Clock,
    ) -> None:
        self._core = core
        self._titles = titles
        self._publisher = publisher
        self._feed = feed
        self._record = record
        self._metrics = metrics
        self._clock = clock

    async def __call__(self, effect: Effect, received: float) -> None:
        """Carry out one effect; `received` is when its input arrived (monotonic clock)."""
        match effect:
            case StateChanged():
                await self._state_changed(effect)
            case FocusChanged():
                await self._focus_changed(effect, received)
            case TitleChanged():
                titled = self._titles.clean(effect.focus)
                log.info("title of %s: %r", titled.wm_class or "?", titled.title)
                await self._publish("title_changed", dataclasses.replace(effect, focus=titled))
            case PromptChanged():
                _log_prompt(effect)
            case PulseEmitted():
                await self._publish("activity_pulse", effect)
            case LockRecorded():
                await self._lock_recorded(effect)
            case PersistEnvelope():
                self._persist(effect.kind, effect.at, {})

    async def _state_changed(self, effect: StateChanged) -> None:
        self._metrics.transitions.labels(effect.from_state.value, effect.to_state.value).inc()
        self._metrics.set_state(effect.to_state)
        log.info("state %s -> %s (%s)", effect.from_state.value, effect.to_state.value, effect.cause)
        await self._publish("state_changed", effect)
        self._persist("state_changed", effect.at, {"from": effect.from_state.value, "cause": effect.cause})

    async def _focus_changed(self, effect: FocusChanged, received: float) -> None:
        current = self._titles.clean(effect.current)
        if current.window_id:
            log.info("focus %s changed: %s %r", effect.change, current.wm_class or "?", current.title)
        else:
            log.info("focus changed: no window has the focus")
        shown = dataclasses.replace(effect, previous=self._titles.clean(effect.previous), current=current)
        await self._publish("focus_changed", shown)
        self._metrics.focus_latency.observe(self._clock.monotonic() - received)
        self._persist("focus_changed", effect.at, {"change": effect.change, "app": effect.current.app_name})

    async def _lock_recorded(self, effect: LockRecorded) -> None:
        log.info("%s (%s)", "locked" if effect.locked else "unlocked", effect.source)
        await self._publish("lock_changed", effect)
        self._persist("lock" if effect.locked else "unlock", effect.at, {"source": effect.source})
        self._record.audit(
            actor=effect.source,
            action="session.lock" if effect.locked else "session.unlock",
            outcome="recorded",
        )

    async def _publish(self, kind: str, event: ActivityEvent) -> None:
        try:
            await self._publisher.publish(kind, event)
            self._metrics.events_published.labels(kind).inc()
        except PublishFailed as error:
            log.warning("publishing %s failed: %s", kind, error)
        self._feed.offer(event)

    def _persist(self, kind: str, at: float, detail: dict[str, str]) -> None:
        """Queue an envelope for the writer: publishing never waits for PostgreSQL."""
        self._record.envelope(Envelope(at=at, kind=kind, state=self._core.state.value, detail=detail))


def _log_prompt(effect: PromptChanged) -> None:
    shown = effect.prompt
    if shown.prompt:
        log.info("a %s prompt has the focus (%s): not a switch to an app", shown.prompt, shown.wm_class)
    else:
        log.info("the prompt no longer has the focus")
