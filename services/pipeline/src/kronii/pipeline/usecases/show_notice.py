"""The notices other kronii services compose (the console critic's warnings, on kronii.pipeline.notice):
each goes through the gates of core/notices.py and, when shown, out on every channel the pipeline's
own suggestions use (store, NATS, SSE, desktop), with Snooze and Don't show again acting on that
source's notices of that kind. No round, no model call. Every notice is audited with its outcome.

A notice that makes an offer (the supervisor's "hand this failure to codex1?") gets a yes button; the
person's click (or POST /v1/notifications/{id}/accept) publishes their yes to the offer, audited. The
desk remembers which of its notifications carries which offer while the pipeline runs (the desktop's
bubbles, and the ids their clicks come back with, do not outlive it either)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from kronii.desktop.hold import DesktopHolds
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import NotFound
from kronii.pipeline.core.notices import (
    Notice,
    NoticeGates,
    NoticeLedger,
    NoticeOutcome,
    NoticeVerdict,
    decide,
)
from kronii.pipeline.core.roles.values import Notification
from kronii.pipeline.ports import NotifierPort, OfferAnswers

__all__ = ["DEFAULT_ACCEPT_LABEL", "NoticeDesk"]

DEFAULT_ACCEPT_LABEL = "Yes"
# Notifications whose offer the desk remembers (the oldest forgotten first).
_REMEMBERED_OFFERS = 256


class NoticeDesk:
    def __init__(
        self,
        notifier: NotifierPort,
        holds: Callable[[], DesktopHolds],
        audit: AuditTrail,
        clock: Clock,
        offers: OfferAnswers | None = None,
    ) -> None:
        self._notifier = notifier
        # None: offers are shown without their button (nobody to tell the yes to).
        self._offers = offers
        self._offered: dict[str, str] = {}
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
                notification_id = await self._show(notice)
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
            offer_id=notice.offer_id,
        )
        return verdict

    async def _show(self, notice: Notice) -> str:
        run_id = f"notice-{uuid.uuid4().hex[:12]}"
        if not notice.offer_id or self._offers is None:
            return await self._notifier.notify(run_id, _notification(notice), notice.control_key)
        label = notice.offer_label or DEFAULT_ACCEPT_LABEL
        notification_id = await self._notifier.notify(
            run_id, _notification(notice), notice.control_key, accept_label=label
        )
        self._offered[notification_id] = notice.offer_id
        while len(self._offered) > _REMEMBERED_OFFERS:
            del self._offered[next(iter(self._offered))]
        return notification_id

    async def accept(self, notification_id: str, actor: str) -> str:
        """The person's yes to the offer of one of the desk's notifications: told to the offer's maker
        (the supervisor); the offer's id. NotFound when the notification made no offer (or the
        pipeline restarted since)."""
        offer_id = self._offered.get(notification_id)
        if offer_id is None or self._offers is None:
            raise NotFound(
                f"notification {notification_id!r} carries no offer this pipeline showed "
                "(`kronii agents hand` takes the latest offer)"
            )
        await self._offers.accept(offer_id)
        await self._audit(
            actor=actor, action="pipeline.offer_accept", subject=offer_id, outcome="sent",
            notification_id=notification_id,
        )  # fmt: skip
        return offer_id


def _notification(notice: Notice) -> Notification:
    return Notification(
        title=notice.title,
        body=notice.body,
        source_summary=f"from kronii's {notice.source}",
        actions=(),
        context_hash="",
        candidate_key=notice.control_key,
    )
