"""The runner's ports over the mesh: the sensor's snapshot in Redis, the plugin registry in
PostgreSQL with snapshots over NATS, notifications on every channel, and the scheduler's
admit/plan subjects."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import redis.asyncio as aioredis
from kronii.activity.v1 import activity_pb2 as apb
from kronii.common import subjects
from kronii.common.bus import Bus
from kronii.common.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.pipeline.adapters.controls import SourceControls, muted_reason
from kronii.pipeline.adapters.notifications import NotificationStore, deliver, new_notification
from kronii.pipeline.adapters.notify_dbus import DesktopNotifier
from kronii.pipeline.adapters.plugin_host import PluginUnavailable, request_snapshot
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.adapters.sse import NotificationBroadcaster
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.router import BaseSnapshot, Capability, PluginInfo
from kronii.pipeline.core.states import Trigger
from kronii.pipeline.plugins.capture import SCREENCAPTURE_APP_ID
from kronii.pipeline.roles.model import Notification, Plan
from kronii.pipeline.runner import Admit
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2 as spb
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

__all__ = ["MeshNotifier", "NatsScheduler", "RedisSnapshots", "RegistryPlugins"]

log = logging.getLogger(__name__)

_STATES = {
    apb.ACTIVITY_STATE_ACTIVE: "active",
    apb.ACTIVITY_STATE_PASSIVE: "passive",
    apb.ACTIVITY_STATE_INACTIVE: "inactive",
    apb.ACTIVITY_STATE_LOCKED: "locked",
}


class RedisSnapshots:
    def __init__(self, redis: aioredis.Redis, clock: Callable[[], int]) -> None:
        self._redis = redis
        self._clock = clock

    async def latest(self) -> BaseSnapshot | None:
        try:
            raw = await self._redis.get(SENSOR_SNAPSHOT_KEY)
        except Exception as error:  # no snapshot is a weaker round, not a failed one
            log.warning("the sensor snapshot is not readable: %s", type(error).__name__)
            return None
        if not raw:
            return None
        snapshot = apb.Snapshot()
        snapshot.ParseFromString(raw.encode() if isinstance(raw, str) else raw)
        focus = snapshot.focus
        return BaseSnapshot(
            at_ms=self._clock(),
            activity_state=_STATES.get(snapshot.activity_state, "active"),
            app=focus.app_name,
            wm_class=focus.wm_class,
            title=focus.title,
            window_id=int(focus.window_id),
            pid=int(focus.pid),
            app_start_time_ms=int(focus.app_start_time),
            locked=snapshot.locked,
        )


class RegistryPlugins:
    """The registry's plugins as the Router sees them; the screen capture counts only while the
    capture service's socket is there."""

    def __init__(
        self,
        store: PluginStore,
        bus: Bus,
        *,
        capture_available: Callable[[], bool] = lambda: False,
        timeout_secs: float = 2.0,
    ) -> None:
        self._store = store
        self._bus = bus
        self._capture_available = capture_available
        self._timeout = timeout_secs

    async def infos(self) -> Sequence[PluginInfo]:
        infos = []
        for record in await self._store.list():
            if record.app_id == SCREENCAPTURE_APP_ID and not self._capture_available():
                continue
            caps = record.capabilities
            capabilities = frozenset(
                capability
                for capability, present in (
                    (Capability.SNAPSHOT, caps.snapshot),
                    (Capability.EVENTS, caps.events),
                    (Capability.SUMMARIZE, caps.summarize),
                    (Capability.REDACT_HINT, caps.redact_hint),
                )
                if present
            )
            infos.append(
                PluginInfo(record.app_id, record.installed, record.enabled, capabilities, record.risk_score)
            )
        return infos

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]:
        detail = pb.SNAPSHOT_DETAIL_FULL if full else pb.SNAPSHOT_DETAIL_SUMMARY
        contents = []
        for app_id in app_ids:
            try:
                reply = await request_snapshot(
                    self._bus, app_id, detail, run_id=run_id, timeout_secs=self._timeout
                )
            except PluginUnavailable as error:
                log.info("no context from plugin %s: %s", app_id, error)
                continue
            if reply.error or reply.redaction_level == "red":
                continue
            text = "\n".join(part for part in (reply.summary, reply.full_text if full else "") if part)
            if text:
                contents.append(PluginContent(app_id, text))
        return contents


class MeshNotifier:
    def __init__(
        self,
        *,
        channel: str,
        store: NotificationStore,
        controls: SourceControls,
        bus: Bus,
        stream: NotificationBroadcaster,
        desktop: DesktopNotifier | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._channel = channel
        self._store = store
        self._controls = controls
        self._bus = bus
        self._stream = stream
        self._desktop = desktop
        self._clock = clock
        self.sent = 0

    async def muted(self, source_key: str) -> str | None:
        return muted_reason(await self._controls.get(source_key), self._clock())

    async def notify(self, run_id: str, notification: Notification, source_key: str) -> str:
        message = new_notification(
            channel=self._channel,
            title=notification.title,
            body=notification.body,
            source_summary=notification.source_summary,
            source_key=source_key,
            run_id=run_id,
            now=self._clock(),
        )
        desktop = self._desktop if self._desktop is not None and self._desktop.available else None
        await deliver(message, store=self._store, bus=self._bus, stream=self._stream, desktop=desktop)
        self.sent += 1
        return str(message.id)


class NatsScheduler:
    """Admission and plans on the scheduler's subjects; `available` says whether it answered last."""

    def __init__(self, bus: Bus, *, timeout_secs: float = 0.5) -> None:
        self._bus = bus
        self._timeout = timeout_secs
        self.available: bool | None = None
        self.detail = "no admission asked yet"

    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        request = spb.AdmitRequest(
            app=app,
            trigger_kind=trigger.kind.value,
            priority=spb.HIGH if trigger.high_priority else spb.NORMAL,
            justification=f"high-priority {trigger.kind.value}" if trigger.high_priority else "",
        )
        try:
            msg = await self._bus.client.request(
                subjects.SCHEDULER_ADMIT, request.SerializeToString(), timeout=self._timeout
            )
        except (NoRespondersError, NatsTimeoutError, TimeoutError):
            self.available = False
            self.detail = "the scheduler does not answer admissions: the pipeline's own rate limits apply"
            return None
        response = spb.AdmitResponse()
        response.ParseFromString(msg.data)
        self.available = True
        self.detail = "the scheduler admits runs"
        return Admit(response.allowed, response.reason, int(response.retry_after_ms))

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None:
        message = spb.Plan(
            run_id=run_id,
            app=app,
            min_cooldown_ms=max(0, min(plan.min_cooldown_ms, 86_400_000)),
            trigger_filters=list(plan.trigger_filters),
            reason=plan.reason[:500],
            wakeup_in_ms=max(0, plan.next_wakeup_ms - now_ms),
        )
        try:
            await self._bus.publish(subjects.SCHEDULER_PLAN, message)
        except Exception as error:
            log.warning(
                "the plan of run %s was not handed to the scheduler: %s", run_id, type(error).__name__
            )
