"""The live jobs and their history: the one place a job's status changes.

Every change goes to the store, the bus (`kronii.capture.status.<job_id>`) and the in-process
watchers, in that order, under one lock; a job that ends is counted and audited.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from kronii.capture.core.status import (
    InvalidTransition,
    JobEvent,
    JobRecord,
    JobStatus,
    StoredJob,
    advance,
)
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import JobRepository, StatusFeed
from kronii.capture.usecases.follow_desktop import DesktopView
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import NotFound

__all__ = ["JobBoard", "StatusUpdate"]

log = logging.getLogger(__name__)

_PRIORITY_ORDER = {"high": 0, "normal": 1, "low": 2}


@dataclass(frozen=True)
class StatusUpdate:
    """One entry of a job's history, as watchers receive it (index = position in the history)."""

    index: int
    job: JobRecord


class JobBoard:
    def __init__(
        self,
        store: JobRepository,
        statuses: StatusFeed,
        metrics: CaptureMetrics,
        record: AuditTrail,
        view: DesktopView,
        clock: Clock,
    ) -> None:
        self._store = store
        self._statuses = statuses
        self._metrics = metrics
        self._record = record
        self._view = view
        self._clock = clock
        # Jobs not yet finished, by id; finished ones are read from the store. Only the board changes
        # it; the other use cases ask through its methods.
        self.active: dict[str, StoredJob] = {}
        self._watchers: dict[str, set[asyncio.Queue[StatusUpdate]]] = {}
        self._persist_lock = asyncio.Lock()
        self._announcements: set[asyncio.Task[None]] = set()

    async def settle_leftovers(self) -> None:
        """Jobs a previous run left unfinished: waiting ones wait on, the rest failed mid-way."""
        for job_id in await self._store.active_ids():
            stored = await self._store.load(job_id)
            if stored is None or stored.record.terminal:
                continue
            # The focus counter restarted with this process: a FocusNext job waits for the next switch.
            stored = replace(stored, enqueued_focus_seq=self._view.focus_seq)
            self.active[job_id] = stored
            if stored.record.status not in (JobStatus.QUEUED, JobStatus.WAITING):
                await self.transition(job_id, JobEvent.ERROR, "the service restarted during the capture")

    async def stop(self) -> None:
        for task in list(self._announcements):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def transition(
        self, job_id: str, event: JobEvent, reason: str = "", **changes: Any
    ) -> JobRecord | None:
        """Apply `event` to the live job; None when the job is gone or already finished (cancelled)."""
        stored = self.active.get(job_id)
        if stored is None:
            return None
        record = replace(stored.record, **changes) if changes else stored.record
        try:
            record = advance(record, event, self._clock.wall_ms(), reason)
        except InvalidTransition as error:
            log.warning("job %s: %s", job_id, error)
            return None
        stored = replace(stored, record=record)
        if record.terminal:
            self.active.pop(job_id, None)
        else:
            self.active[job_id] = stored
        await self._persist(stored)
        return record

    async def _persist(self, stored: StoredJob) -> None:
        record = stored.record
        # One lock: status changes reach the store, the bus and the watchers in the order they happened.
        async with self._persist_lock:
            try:
                await self._store.save(stored)
            except Exception:
                log.exception("storing job %s failed", record.job_id)
            try:
                await self._statuses.publish(record)
            except Exception as error:
                log.warning("publishing the status of job %s failed: %s", record.job_id, error)
            update = StatusUpdate(len(record.history) - 1, record)
            for queue in self._watchers.get(record.job_id, set()):
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(update)
        self._metrics.queue_depth.set(len(self.active))
        if record.terminal:
            await self._account_ended(record)

    async def _account_ended(self, record: JobRecord) -> None:
        self._metrics.jobs.labels(record.status.value).inc()
        if record.status is JobStatus.PERSISTED:
            self._metrics.request_to_persisted.observe(
                max(0, (record.finished_ms or 0) - record.created_ms) / 1000
            )
        log.info("capture job %s %s %s", record.job_id, record.status.value, record.reason)
        await self._record(
            actor=f"requester:{record.spec.requester}",
            action="capture.job",
            subject=record.job_id,
            outcome=record.status.value,
            reason=record.reason,
            redaction_level=record.redaction_level,
            screenshot_id=record.primary_screenshot_id,
            frames=record.frames_captured,
        )

    def announce_queued(self, stored: StoredJob) -> None:
        """Tell the bus the job exists (the store already has it), without making the caller wait."""

        async def publish() -> None:
            async with self._persist_lock:
                with contextlib.suppress(Exception):
                    await self._statuses.publish(stored.record)

        task = asyncio.create_task(publish())
        self._announcements.add(task)
        task.add_done_callback(self._announcements.discard)

    async def enqueue(self, stored: StoredJob) -> None:
        """A new job: live from now on, queued in the store, announced on the bus."""
        self.active[stored.record.job_id] = stored
        await self._store.enqueue(stored)
        self._metrics.queue_depth.set(len(self.active))
        self.announce_queued(stored)

    def live(self, job_id: str) -> StoredJob | None:
        """The job if it has not finished yet."""
        return self.active.get(job_id)

    def live_jobs(self) -> list[StoredJob]:
        return list(self.active.values())

    async def pick_queued(self) -> None:
        """Take what was queued off the store's queue: each job still queued now waits for its window."""
        for job_id in await self._store.pop_queued():
            stored = self.active.get(job_id)
            if stored is not None and stored.record.status is JobStatus.QUEUED:
                await self.transition(job_id, JobEvent.PICKED)

    def waiting(self) -> list[StoredJob]:
        """The jobs waiting for their window, best first (priority, then age)."""
        waiting = [stored for stored in self.active.values() if stored.record.status is JobStatus.WAITING]
        return sorted(
            waiting, key=lambda job: (_PRIORITY_ORDER[job.record.spec.priority.value], job.record.created_ms)
        )

    async def job(self, job_id: str) -> JobRecord:
        live = self.active.get(job_id)
        if live is not None:
            return live.record
        if not job_id or len(job_id) > 64:
            raise NotFound("no such capture job")
        stored = await self._store.load(job_id)
        if stored is None:
            raise NotFound("no such capture job")
        return stored.record

    async def cancel(self, job_id: str, reason: str = "cancelled by the caller") -> JobRecord:
        record = await self.job(job_id)
        if record.terminal:
            return record
        changed = await self.transition(job_id, JobEvent.CANCELLED, reason)
        return changed if changed is not None else await self.job(job_id)

    async def watch(self, job_id: str) -> AsyncIterator[tuple[int, JobRecord]]:
        """Each history entry of the job as (index, record), oldest first, until it ends."""
        queue: asyncio.Queue[StatusUpdate] = asyncio.Queue(maxsize=64)
        self._watchers.setdefault(job_id, set()).add(queue)
        try:
            record = await self.job(job_id)
            sent = 0
            for index in range(len(record.history)):
                yield (index, record)
                sent = index + 1
            if record.terminal:
                return
            while True:
                update = await queue.get()
                if update.index < sent:
                    continue
                for index in range(sent, update.index + 1):
                    yield (index, update.job)
                sent = update.index + 1
                if update.job.terminal:
                    return
        finally:
            watchers = self._watchers.get(job_id)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    self._watchers.pop(job_id, None)
