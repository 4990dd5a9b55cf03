"""The stored screenshots: single-use tokens, the redacted PNG once per token, the metadata listing,
the sealed raw frames (when the operator allows it), and the retention purge."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from kronii.capture.core.identity import Identity
from kronii.capture.core.screenshots import ObjectMeta
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import ObjectMissing, ObjectStore, TokenLedger
from kronii.capture.settings import CaptureSettings
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import InvalidArgument, NotFound, PermissionDenied

__all__ = ["ScreenshotDesk"]

log = logging.getLogger(__name__)


class ScreenshotDesk:
    def __init__(
        self,
        store: ObjectStore,
        tokens: TokenLedger,
        settings: CaptureSettings,
        metrics: CaptureMetrics,
        record: AuditTrail,
        clock: Clock,
    ) -> None:
        self._store = store
        self._tokens = tokens
        self._settings = settings
        self._metrics = metrics
        self._record = record
        self._clock = clock

    async def issue_token(self, identity: Identity, screenshot_id: str) -> tuple[str, datetime]:
        meta = await self._meta(screenshot_id)
        if meta.kind != "redacted":
            raise NotFound("no such screenshot")
        return await self._tokens.issue(screenshot_id, identity.actor)

    async def screenshot(self, screenshot_id: str, token: str) -> tuple[bytes, ObjectMeta]:
        """The redacted PNG, once per token. A raw id never opens here, whatever the token."""
        if not await self._tokens.redeem(screenshot_id, token):
            raise PermissionDenied("the token is unknown, used, expired or for another screenshot")
        meta = await self._meta(screenshot_id)
        if meta.kind != "redacted":
            raise NotFound("no such screenshot")
        try:
            png = await self._store.open_plain(screenshot_id, "redacted")
        except ObjectMissing:
            raise NotFound("no such screenshot") from None
        return png, meta

    async def list_meta(self, limit: int) -> list[ObjectMeta]:
        if limit < 0:
            raise InvalidArgument("limit must not be negative", field="limit")
        return await self._store.list_meta(min(limit or 50, 500), kind="redacted")

    async def raw_encrypted(self, screenshot_id: str) -> tuple[bytes, int]:
        if not self._settings.read_raw_encrypted_enabled:
            raise PermissionDenied("reading raw frames is disabled on this host")
        try:
            return await self._store.sealed_bytes(screenshot_id, kind="raw")
        except (ObjectMissing, ValueError):
            raise NotFound("no such raw frame") from None

    async def _meta(self, screenshot_id: str) -> ObjectMeta:
        try:
            return await self._store.meta(screenshot_id)
        except (ObjectMissing, ValueError):
            raise NotFound("no such screenshot") from None

    # ---- retention -------------------------------------------------------------------------------

    async def purge_now(self) -> int:
        report = await self._store.purge_expired()
        self._metrics.purged.labels("raw").inc(report.raw_purged)
        self._metrics.purged.labels("redacted").inc(report.redacted_purged)
        await self._record(
            actor="capture",
            action="capture.purge",
            outcome="ok",
            raw_purged=report.raw_purged,
            redacted_purged=report.redacted_purged,
            files_missing=report.files_missing,
        )
        return report.purged

    async def purge_loop(self) -> None:
        """A purge now and every purge interval after, until cancelled; a failed one is retried next time."""
        while True:
            try:
                await self.purge_now()
                self._metrics.purge_runs.labels("ok").inc()
                self._metrics.last_purge.set(self._clock.wall())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the retention purge failed")
                self._metrics.purge_runs.labels("failed").inc()
            await asyncio.sleep(self._settings.purge_interval_secs)
