"""Where capture jobs live: Redis (the priority queue, the job records, the merge window) and
PostgreSQL (one `capture_jobs` row per job, updated at every status change).

Redis keys, all under `kronii:capture:`:
- `queue`: sorted set of queued job ids, scored by core.admission.queue_score (high first, FIFO);
- `job:<id>`: the job record as JSON (core.status.JobRecord.to_dict, plus the focus_seq at enqueue);
  kept a day after the job ends;
- `merge:<merge key>`: the id of the job a request merges into, for MERGE_WINDOW_MS;
- `active`: set of the ids of jobs not yet finished (so a restart can settle them).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from kronii.capture.core.admission import queue_score
from kronii.capture.core.status import JobRecord, StoredJob
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

__all__ = ["JobStore"]

PREFIX = "kronii:capture:"
QUEUE_KEY = f"{PREFIX}queue"
ACTIVE_KEY = f"{PREFIX}active"
FINISHED_TTL_SECS = 86_400

_UPSERT = text(
    """
    INSERT INTO capture_jobs (job_id, requester, merge_key, spec, status, reason, history,
                              primary_screenshot_id, meta, created_at, updated_at, deadline_at)
    VALUES (:job_id, :requester, :merge_key, CAST(:spec AS jsonb), :status, :reason,
            CAST(:history AS jsonb), :primary_screenshot_id, CAST(:meta AS jsonb), :created_at, :updated_at,
            :deadline_at)
    ON CONFLICT (job_id) DO UPDATE SET
        status = EXCLUDED.status, reason = EXCLUDED.reason, history = EXCLUDED.history,
        primary_screenshot_id = EXCLUDED.primary_screenshot_id, meta = EXCLUDED.meta,
        updated_at = EXCLUDED.updated_at
    """
)


def _job_key(job_id: str) -> str:
    return f"{PREFIX}job:{job_id}"


def _merge_key(key: str) -> str:
    return f"{PREFIX}merge:{key}"


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


class JobStore:
    def __init__(self, redis: aioredis.Redis, sessions: async_sessionmaker[AsyncSession] | None) -> None:
        self._redis = redis
        self._sessions = sessions

    # ---- merging ---------------------------------------------------------------------------

    async def claim_merge(self, merge_key: str, job_id: str, window_ms: int) -> str | None:
        """Claim the merge window for `job_id`; return the id already holding it, or None if claimed."""
        if window_ms <= 0:
            return None
        key = _merge_key(merge_key)
        if await self._redis.set(key, job_id, nx=True, px=window_ms):
            return None
        holder = await self._redis.get(key)
        if holder is None:  # expired between the two calls: claim it now
            await self._redis.set(key, job_id, px=window_ms)
            return None
        return holder.decode() if isinstance(holder, bytes) else str(holder)

    async def release_merge(self, merge_key: str, job_id: str) -> None:
        key = _merge_key(merge_key)
        holder = await self._redis.get(key)
        if holder is not None and (holder.decode() if isinstance(holder, bytes) else str(holder)) == job_id:
            await self._redis.delete(key)

    # ---- records ---------------------------------------------------------------------------

    async def save(self, job: StoredJob) -> None:
        """Write the record to Redis (and the queue/active sets) and to PostgreSQL."""
        record = job.record
        payload = json.dumps({**record.to_dict(), "enqueued_focus_seq": job.enqueued_focus_seq})
        async with self._redis.pipeline(transaction=True) as pipe:
            if record.terminal:
                pipe.set(_job_key(record.job_id), payload, ex=FINISHED_TTL_SECS)
                pipe.srem(ACTIVE_KEY, record.job_id)
                pipe.zrem(QUEUE_KEY, record.job_id)
            else:
                pipe.set(_job_key(record.job_id), payload)
                pipe.sadd(ACTIVE_KEY, record.job_id)
            await pipe.execute()
        await self._save_row(record)

    async def enqueue(self, job: StoredJob) -> None:
        await self.save(job)
        score = queue_score(job.record.spec.priority, job.record.created_ms)
        await self._redis.zadd(QUEUE_KEY, {job.record.job_id: score})

    async def pop_queued(self, limit: int = 32) -> list[str]:
        """Take up to `limit` queued ids off the queue, best first."""
        popped: list[Any] = list(await self._redis.zpopmin(QUEUE_KEY, limit))
        return [(item[0].decode() if isinstance(item[0], bytes) else str(item[0])) for item in popped]

    async def load(self, job_id: str) -> StoredJob | None:
        raw = await self._redis.get(_job_key(job_id))
        if raw is None:
            return await self._load_row(job_id)
        data = json.loads(raw)
        return StoredJob(JobRecord.from_dict(data), int(data.get("enqueued_focus_seq", 0)))

    async def active_ids(self) -> list[str]:
        members = await self._redis.smembers(ACTIVE_KEY)
        return sorted((item.decode() if isinstance(item, bytes) else str(item)) for item in members)

    # ---- PostgreSQL --------------------------------------------------------------------------

    async def _save_row(self, record: JobRecord) -> None:
        if self._sessions is None:
            return
        data = record.to_dict()
        meta = {
            key: data[key]
            for key in (
                "raw_ids",
                "started_ms",
                "finished_ms",
                "captured_pid",
                "captured_app_name",
                "captured_window_id",
                "frames_captured",
                "primary_score",
                "redaction_level",
                "masked_fraction",
                "created_ms",
                "deadline_ms",
            )
        }
        updated_ms = record.history[-1].at_ms if record.history else record.created_ms
        async with self._sessions() as session, session.begin():
            await session.execute(
                _UPSERT,
                {
                    "job_id": record.job_id,
                    "requester": record.spec.requester,
                    "merge_key": record.merge_key,
                    "spec": json.dumps(data["spec"]),
                    "status": record.status.value,
                    "reason": record.reason,
                    "history": json.dumps(data["history"]),
                    "primary_screenshot_id": record.primary_screenshot_id or None,
                    "meta": json.dumps(meta),
                    "created_at": _moment(record.created_ms),
                    "updated_at": _moment(updated_ms),
                    "deadline_at": _moment(record.deadline_ms),
                },
            )

    async def _load_row(self, job_id: str) -> StoredJob | None:
        if self._sessions is None:
            return None
        async with self._sessions() as session:
            row = (
                await session.execute(
                    text(
                        "SELECT job_id, merge_key, spec, status, reason, history, primary_screenshot_id, meta "
                        "FROM capture_jobs WHERE job_id = :job_id"
                    ),
                    {"job_id": job_id},
                )
            ).first()
        if row is None:
            return None
        meta: dict[str, Any] = dict(row.meta or {})
        data = {
            **meta,
            "job_id": row.job_id,
            "merge_key": row.merge_key or "",
            "spec": row.spec,
            "status": row.status,
            "reason": row.reason or "",
            "history": row.history,
            "primary_screenshot_id": row.primary_screenshot_id or "",
        }
        return StoredJob(JobRecord.from_dict(data), 0)
