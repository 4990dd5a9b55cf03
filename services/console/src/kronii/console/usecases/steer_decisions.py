"""What the person does from the Decisions page: snooze a notification's source for a while, mute
it (the pipeline's disable), or undo either. The pipeline keeps them and audits its side; the console
leaves its own row `console.decisions.<action>` with the person as actor and how it ended."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from kronii.console.core.decisions import Control, check_id, check_snooze
from kronii.console.ports import PipelineDecisions
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import KroniiError

__all__ = ["SteerDecisions"]

T = TypeVar("T")


class SteerDecisions:
    def __init__(self, pipeline: PipelineDecisions, audit: AuditTrail) -> None:
        self._pipeline = pipeline
        self._audit = audit

    async def snooze(self, person: str, notification_id: str, seconds: int) -> Control:
        checked, secs = check_id(notification_id, "a notification id"), check_snooze(seconds)
        return await self._audited(
            person, "snooze", checked, self._pipeline.snooze(checked, secs), seconds=secs
        )

    async def mute(self, person: str, notification_id: str) -> Control:
        checked = check_id(notification_id, "a notification id")
        return await self._audited(person, "mute", checked, self._pipeline.mute(checked))

    async def clear(self, person: str, source_key: str) -> None:
        checked = check_id(source_key, "a source")
        await self._audited(person, "unmute", checked, self._pipeline.clear(checked))

    async def _audited(self, person: str, action: str, subject: str, work: Awaitable[T], **detail: int) -> T:
        try:
            done = await work
        except KroniiError as error:
            await self._audit(
                actor=person, action=f"console.decisions.{action}", subject=subject, outcome=error.code,
                reason=error.message, **detail,
            )  # fmt: skip
            raise
        await self._audit(
            actor=person, action=f"console.decisions.{action}", subject=subject, outcome="ok", **detail
        )
        return done
