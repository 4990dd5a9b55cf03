"""The Privacy page's deletes. "Delete a day" removes that day (in the person's timezone) from the
activity history (the sensor's spans and raw events) AND its captured frames (capture's files and
rows) AND the pipeline's decisions made then: one button, each asked even when another fails, the
result said for each. "Delete an app's activity" and "delete everything" likewise. Each leaves the console's audit row
`console.privacy.<action>` with the counts (never a title), besides the services' own rows."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import tzinfo
from typing import TypeVar

from kronii.console.core.captures import Forgotten, day_range, required_day
from kronii.console.core.privacy import DayDeleted, check_app
from kronii.console.ports import ActivityEraser, CaptureFrames, DecisionEraser
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.errors import KroniiError

__all__ = ["ForgetData"]

T = TypeVar("T")


async def _tried(work: Awaitable[T], problems: list[str]) -> T | None:
    try:
        return await work
    except KroniiError as error:
        problems.append(str(error))
        return None


class ForgetData:
    def __init__(
        self,
        activity: ActivityEraser,
        capture: CaptureFrames,
        decisions: DecisionEraser,
        audit: AuditTrail,
        tz: tzinfo,
    ) -> None:
        self._activity = activity
        self._capture = capture
        self._decisions = decisions
        self._audit = audit
        self._tz = tz

    async def day(self, person: str, day_text: str) -> DayDeleted:
        day = required_day(day_text)
        since, until = day_range(day, self._tz)
        problems: list[str] = []
        counts = await _tried(self._activity.delete_between(since, until), problems)
        frames = await _tried(self._capture.forget_between(since, until), problems)
        runs = await _tried(self._decisions.forget_between(since, until), problems)
        done = self._result(day.isoformat(), counts, frames, problems, runs)
        await self._audited(person, "delete_day", day.isoformat(), done)
        return done

    async def app(self, person: str, app: str) -> DayDeleted:
        name = check_app(app)
        problems: list[str] = []
        counts = await _tried(self._activity.delete_app(name), problems)
        done = self._result(f"Activity of {name}", counts, None, problems)
        await self._audited(person, "delete_app", name, done)
        return done

    async def everything(self, person: str) -> DayDeleted:
        problems: list[str] = []
        counts = await _tried(self._activity.delete_all(), problems)
        frames = await _tried(self._capture.forget_all(), problems)
        runs = await _tried(self._decisions.forget_all(), problems)
        done = self._result("Everything", counts, frames, problems, runs)
        await self._audited(person, "delete_all", "", done)
        return done

    @staticmethod
    def _result(
        label: str,
        counts: tuple[int, int] | None,
        frames: Forgotten | None,
        problems: list[str],
        runs: tuple[int, int] | None = None,
    ) -> DayDeleted:
        spans, events = counts if counts is not None else (None, None)
        decisions = runs[0] if runs is not None else None
        return DayDeleted(label, spans, events, frames, tuple(problems), decisions)

    async def _audited(self, person: str, action: str, subject: str, done: DayDeleted) -> None:
        everything_failed = done.spans is None and done.frames is None and done.decisions is None
        await self._audit(
            actor=person,
            action=f"console.privacy.{action}",
            subject=subject,
            outcome="unavailable" if everything_failed else ("partial" if done.problems else "ok"),
            deleted_spans=done.spans,
            deleted_events=done.events,
            deleted_frames=done.frames.deleted if done.frames else None,
            files_removed=done.frames.files_removed if done.frames else None,
            deleted_decisions=done.decisions,
            problems=list(done.problems),
        )
