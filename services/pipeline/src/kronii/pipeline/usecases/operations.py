"""PipelineOperations: the one front the pipeline's API calls (HTTP routes and NATS handlers).

It takes the core's commands and returns core values: triggers in (stamped with the service's
clock, counted, the run loop woken), notices from other services, the broker's word on the
desktop, plugin registrations; and the stores behind GET /v1/runs, /v1/plugins, the snooze and
disable controls and the notification stream; and the buttons of the desktop's bubbles (the yes to
an offer, snooze, disable) as the person clicks them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kronii.desktop.hold import DesktopHold
from kronii.foundation.clock import Clock
from kronii.foundation.errors import Conflict, NotFound, Unavailable
from kronii.pipeline.core.commands import TriggerCommand, TriggerOutcome
from kronii.pipeline.core.controls import SourceControl
from kronii.pipeline.core.notices import Button, Notice, NoticeVerdict
from kronii.pipeline.core.plugins import PluginRecord, PluginRegistration
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.metrics import PipelineMetrics, notice_source
from kronii.pipeline.ports import (
    ControlStore,
    NotificationLookup,
    NotificationStream,
    PluginRegistryStore,
    RunReader,
    StreamSubscription,
    UnknownPlugin,
)
from kronii.pipeline.usecases.forget_runs import ForgetRuns, RunsForgotten
from kronii.pipeline.usecases.runner import Runner
from kronii.pipeline.usecases.show_notice import NoticeDesk

__all__ = ["DESKTOP_SNOOZE_SECS", "PipelineOperations", "PipelineStores"]

# The bubble's Snooze button: as POST /v1/notifications/{id}/snooze without a body.
DESKTOP_SNOOZE_SECS = 3600.0


@dataclass(frozen=True, slots=True)
class PipelineStores:
    """What the API reads and changes besides the rounds."""

    runs: RunReader
    plugins: PluginRegistryStore
    notifications: NotificationLookup
    controls: ControlStore
    stream: NotificationStream


class PipelineOperations:
    def __init__(
        self,
        *,
        clock: Clock,
        stores: PipelineStores,
        runner: Runner,
        notices: NoticeDesk,
        metrics: PipelineMetrics,
        wake: Callable[[], None] = lambda: None,
        forget: ForgetRuns | None = None,
    ) -> None:
        self._clock = clock
        self._stores = stores
        self._runner = runner
        self._notices = notices
        self._metrics = metrics
        self._wake = wake
        self._forget = forget

    # ---- triggers, notices, the desktop, registrations -----------------------------------------

    async def submit(self, command: TriggerCommand) -> TriggerOutcome:
        """Take one external trigger at the service's clock; ValueError for the pipeline's own
        signals. Never waits on a round."""
        trigger = command.at(self._clock.monotonic_ms())
        intake = await self._runner.submit(trigger)
        self._metrics.triggers.labels(trigger.kind.value, intake).inc()
        self._wake()
        return TriggerOutcome(trigger.kind, intake)

    def now_ms(self) -> int:
        """The service's duration clock: what a notice's time is said on."""
        return self._clock.monotonic_ms()

    async def receive_notice(self, notice: Notice) -> NoticeVerdict:
        verdict = await self._notices.receive(notice)
        self._metrics.notices.labels(notice_source(notice.source), verdict.outcome.value).inc()
        return verdict

    def count_invalid_notice(self, source: str) -> None:
        self._metrics.notices.labels(notice_source(source), "invalid").inc()

    def desktop_changed(self, hold: DesktopHold) -> None:
        self._runner.desktop_changed(hold)

    async def register_plugin(self, registration: PluginRegistration) -> PluginRecord:
        return await self._stores.plugins.register(registration, now=self._clock.wall())

    def status(self) -> dict[str, Any]:
        """Where the machine is (GET /v1/state), its deadlines on the wall clock."""
        return self._runner.status()

    # ---- runs ---------------------------------------------------------------------------------

    async def run(self, run_id: str) -> RunRecord:
        record = await self._stores.runs.get(run_id)
        if record is None:
            raise NotFound(f"no run {run_id!r}")
        return record

    async def runs(self, *, limit: int, before: float | None, decision: str) -> Sequence[RunRecord]:
        return await self._stores.runs.list(limit=limit, before=before, decision=decision)

    async def forget_runs(self, actor: str, since: float | None, until: float | None) -> RunsForgotten:
        """The runs (and their notifications) of [since, until), or every one with no range."""
        if self._forget is None:
            raise Unavailable("deleting runs is not set up on this pipeline")
        if since is None or until is None:
            return await self._forget.everything(actor)
        return await self._forget.between(actor, since, until)

    # ---- plugins ------------------------------------------------------------------------------

    async def plugins(self) -> Sequence[PluginRecord]:
        return await self._stores.plugins.list()

    async def plugin(self, app_id: str) -> PluginRecord:
        record = await self._stores.plugins.get(app_id)
        if record is None:
            raise NotFound(str(UnknownPlugin(app_id)))
        return record

    async def set_plugin_enabled(self, app_id: str, enabled: bool) -> PluginRecord:
        try:
            return await self._stores.plugins.set_enabled(app_id, enabled, now=self._clock.wall())
        except UnknownPlugin as error:
            raise NotFound(str(error)) from None

    # ---- snooze and disable, the notification stream ------------------------------------------

    async def _source_of(self, notification_id: str) -> str:
        source_key = await self._stores.notifications.source_key(notification_id)
        if source_key is None:
            raise NotFound(f"no notification {notification_id!r}")
        if not source_key:
            raise Conflict(f"notification {notification_id!r} has no source to snooze or disable")
        return source_key

    async def snooze(self, notification_id: str, secs: float) -> SourceControl:
        source_key = await self._source_of(notification_id)
        now = self._clock.wall()
        return await self._stores.controls.snooze(
            source_key, until=now + secs, now=now, notification_id=notification_id
        )

    async def disable(self, notification_id: str) -> SourceControl:
        source_key = await self._source_of(notification_id)
        return await self._stores.controls.disable(
            source_key, now=self._clock.wall(), notification_id=notification_id
        )

    async def controls(self) -> list[SourceControl]:
        """What is in force now, by source key."""
        active = await self._stores.controls.active(self._clock.wall())
        return sorted(active.values(), key=lambda control: control.source_key)

    async def clear_control(self, source_key: str) -> None:
        if not await self._stores.controls.clear(source_key):
            raise NotFound(f"nothing snoozed or disabled for {source_key!r}")

    async def accept_offer(self, notification_id: str, actor: str) -> str:
        """The person's yes to the offer a notification made; the offer's id (NotFound: none)."""
        return await self._notices.accept(notification_id, actor)

    async def clicked(self, notification_id: str, key: str) -> None:
        """A button of a bubble the desktop showed, as the person clicked it (a key the pipeline
        never gave a button is ignored)."""
        if key == Button.ACCEPT:
            await self.accept_offer(notification_id, "person:notification")
        elif key == Button.SNOOZE:
            await self.snooze(notification_id, DESKTOP_SNOOZE_SECS)
        elif key == Button.DISABLE:
            await self.disable(notification_id)

    def subscribe_notifications(self, last_event_id: int | None) -> StreamSubscription:
        return self._stores.stream.subscribe(last_event_id)
