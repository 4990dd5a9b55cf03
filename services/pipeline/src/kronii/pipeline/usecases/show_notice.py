"""The notices other kronii services compose (the console critic's warnings, on kronii.pipeline.notice):
each goes through the gates of core/notices.py and, when shown, out on every channel the pipeline's
own suggestions use (store, NATS, SSE, desktop), with Snooze and Don't show again acting on that
source's notices of that kind. No round, no model call. Every notice is audited with its outcome."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from kronii.desktop.hold import DesktopHolds
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.pipeline.core.notices import (
    Notice,
    NoticeGates,
    NoticeLedger,
    NoticeOutcome,
    NoticeVerdict,
    decide,
)
from kronii.pipeline.core.roles.values import Notification
from kronii.pipeline.ports import NotifierPort

__all__ = ["NoticeDesk"]


class NoticeDesk:
    def __init__(
        self,
        notifier: NotifierPort,
        holds: Callable[[], DesktopHolds],
        audit: AuditTrail,
        clock: Clock,
    ) -> None:
        self._notifier = notifier
        self._holds = holds
        self._audit = audit
        # `clock` measures the dedup and per-hour windows; the broker's holds are on the wall clock.
        self._clock = clock
        self._ledger = NoticeLedger()
        # One at a time: two copies of a notice arriving together must not both pass the dedup rule.
        self._lock = asyncio.Lock()

    async def receive(self, notice: Notice) -> NoticeVerdict:
        async with self._lock:
            now = self._clock.monotonic_ms()
            hold = self._holds().holding(self._clock.wall_ms() / 1000)
            gates = NoticeGates(
                muted=await self._notifier.muted(notice.control_key) or "",
                held=hold.describe() if hold is not None else "",
            )
            verdict = decide(notice, gates, self._ledger, now)
            notification_id = ""
            if verdict.outcome is NoticeOutcome.SHOWN:
                notification_id = await self._notifier.notify(
                    f"notice-{uuid.uuid4().hex[:12]}", _notification(notice), notice.control_key
                )
                self._ledger = self._ledger.recorded(notice, now)
        await self._audit(
            actor=notice.source,
            action="pipeline.notice",
            subject=notice.kind,
            outcome=verdict.outcome.value,
            row=verdict.row,
            reason=verdict.reason,
            notification_id=notification_id,
            high_priority=notice.high_priority,
        )
        return verdict


def _notification(notice: Notice) -> Notification:
    return Notification(
        title=notice.title,
        body=notice.body,
        source_summary=f"from kronii's {notice.source}",
        actions=(),
        context_hash="",
        candidate_key=notice.control_key,
    )
