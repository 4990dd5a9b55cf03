"""The plugin registry as the Router sees it: registrations from PostgreSQL, snapshots pulled over NATS."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kronii.pipeline.adapters.capture_client import SCREENCAPTURE_APP_ID
from kronii.pipeline.adapters.plugin_host import PluginUnavailable, request_snapshot
from kronii.pipeline.adapters.plugins_store import PluginStore
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.router import Capability, PluginInfo
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores.bus import Bus

__all__ = ["RegistryPlugins"]

log = logging.getLogger(__name__)


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
