"""A person's delete of the pipeline's decisions (from the console's Privacy page): the runs of a
range, or all of them, with the notifications sent in it (their titles and bodies are about the
person's screen). Audited `pipeline.delete` with the counts, never what the runs said."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import InvalidArgument
from kronii.pipeline.ports import RunEraser

__all__ = ["MAX_RANGE_SECS", "ForgetRuns", "RunsForgotten"]

# The longest range one delete names (a year and a bit, like the activity history's).
MAX_RANGE_SECS = 400 * 86_400.0


@dataclass(frozen=True)
class RunsForgotten:
    runs: int
    notifications: int


class ForgetRuns:
    def __init__(self, eraser: RunEraser, record: AuditTrail) -> None:
        self._eraser = eraser
        self._record = record

    async def between(self, actor: str, since: float, until: float) -> RunsForgotten:
        if until <= since:
            raise InvalidArgument("until must be later than since", field="until")
        if until - since > MAX_RANGE_SECS:
            raise InvalidArgument("a range is at most 400 days", field="until")
        return await self._forget(actor, since, until)

    async def everything(self, actor: str) -> RunsForgotten:
        return await self._forget(actor, None, None)

    async def _forget(self, actor: str, since: float | None, until: float | None) -> RunsForgotten:
        runs, notes = await self._eraser.forget(since, until)
        await self._record(
            actor=actor,
            action="pipeline.delete",
            subject="all" if since is None else f"{since:.0f}..{until:.0f}",
            outcome="ok",
            runs_deleted=runs,
            notifications_deleted=notes,
        )
        return RunsForgotten(runs, notes)
