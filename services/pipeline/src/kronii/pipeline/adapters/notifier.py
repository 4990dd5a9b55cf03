"""The runner's notifier: a round's notification on every channel (store, NATS, SSE, desktop), and
whether the user muted its kind of suggestion."""

from __future__ import annotations

import time
from collections.abc import Callable

from kronii.pipeline.adapters.controls import SourceControls, muted_reason
from kronii.pipeline.adapters.notifications import NotificationStore, deliver, new_notification
from kronii.pipeline.adapters.notify_dbus import DesktopNotifier
from kronii.pipeline.adapters.sse import NotificationBroadcaster
from kronii.pipeline.core.roles.values import Notification
from kronii.stores.bus import Bus

__all__ = ["MeshNotifier"]


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

    async def notify(
        self, run_id: str, notification: Notification, source_key: str, accept_label: str = ""
    ) -> str:
        message = new_notification(
            channel=self._channel,
            title=notification.title,
            body=notification.body,
            source_summary=notification.source_summary,
            source_key=source_key,
            run_id=run_id,
            now=self._clock(),
            accept_label=accept_label,
        )
        desktop = self._desktop if self._desktop is not None and self._desktop.available else None
        await deliver(message, store=self._store, bus=self._bus, stream=self._stream, desktop=desktop)
        self.sent += 1
        return str(message.id)
