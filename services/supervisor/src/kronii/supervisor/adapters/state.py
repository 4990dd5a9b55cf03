"""The supervisor's working state in Redis (section 12): trigger dedupe and outcomes, the queue of
deferred and in-flight triggers, attempt windows for the rate limit, failure history for cooldown
and crash loops, thread guards and runtime progress epochs."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import redis.asyncio as aioredis
from kronii.supervisor.core.job import Job
from kronii.supervisor.core.model import Snapshot
from kronii.supervisor.core.trigger import TriggerOutcome
from kronii.supervisor.ports import StoreUnavailable
from redis.exceptions import RedisError

__all__ = ["SupervisorState"]

_P = "kronii:supervisor"
# A failure streak nobody added to for a day is forgotten (its cooldown ended long before).
_STREAK_TTL_SECS = 86_400
# Claim due queue members atomically: each returned member is re-scored to now + lease, so a
# second worker (or this one after a crash) gets it only once the lease runs out.
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
"""

# Dedupe and enqueue in one round trip: the first request for a trigger_id stores its pending
# outcome and queues its job; a repeat gets the stored outcome back.
_ADMIT = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
  return false
end
return redis.call('GET', KEYS[1])
"""


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


# The stored forms: JSON objects of the dataclasses' fields (an outcome's `duplicate` is never
# stored: each answer says it). Fields a newer supervisor does not know are left out on reading.
_OUTCOME_FIELDS = frozenset(f.name for f in dataclasses.fields(TriggerOutcome)) - {"duplicate"}
_JOB_FIELDS = frozenset(f.name for f in dataclasses.fields(Job))


def outcome_json(outcome: TriggerOutcome) -> str:
    fields = {name: getattr(outcome, name) for name in _OUTCOME_FIELDS}
    fields["fallback_chain"] = list(outcome.fallback_chain)
    return json.dumps(fields)


def outcome_from(raw: Any) -> TriggerOutcome:
    data = json.loads(_text(raw))
    fields = {name: value for name, value in data.items() if name in _OUTCOME_FIELDS}
    fields["fallback_chain"] = tuple(fields.get("fallback_chain") or ())
    return TriggerOutcome(**fields)


def job_json(job: Job) -> str:
    return json.dumps(dataclasses.asdict(job))


def job_from(raw: Any) -> Job:
    data = json.loads(_text(raw))
    return Job(**{name: value for name, value in data.items() if name in _JOB_FIELDS})


class SupervisorState:
    def __init__(self, client: aioredis.Redis) -> None:
        self._r = client
        self._claim = client.register_script(_CLAIM)
        self._admit = client.register_script(_ADMIT)

    # ---- dedupe and outcomes ----------------------------------------------------------------------

    async def admit(self, pending: TriggerOutcome, ttl: int, job: Job, due: float) -> TriggerOutcome | None:
        """Store the first outcome of a trigger_id and queue its job at once; the stored outcome
        instead when the trigger_id is known."""
        trigger_id = pending.trigger_id
        try:
            raw = await self._admit(
                keys=[f"{_P}:trigger:{trigger_id}", f"{_P}:jobs", f"{_P}:queue"],
                args=[outcome_json(pending), ttl, trigger_id, job_json(job), due],
            )
        except RedisError as error:
            raise StoreUnavailable(str(error)) from error
        return outcome_from(raw) if raw else None

    async def snapshot(
        self, *, workspace_id: str, agent_id: str, thread_id: str, runtime_id: str, now: float,
        rate_window: float, crash_window: float,
    ) -> Snapshot:  # fmt: skip
        attempts = f"{_P}:attempts:{agent_id}:{thread_id}"
        failures = f"{_P}:failures:{workspace_id}:{agent_id}"
        try:
            async with self._r.pipeline(transaction=False) as pipe:
                pipe.zremrangebyscore(attempts, "-inf", now - rate_window)
                pipe.zrange(attempts, 0, -1, withscores=True)
                pipe.zremrangebyscore(failures, "-inf", now - crash_window)
                pipe.zrange(failures, 0, -1, withscores=True)
                pipe.hgetall(f"{_P}:streak:{workspace_id}:{agent_id}")
                pipe.get(f"{_P}:thread:{agent_id}:{thread_id}")
                pipe.get(f"{_P}:progress:{runtime_id}")
                _, tried, _, failed, streak, thread, epoch = await pipe.execute()
        except RedisError as error:
            raise StoreUnavailable(str(error)) from error
        fields = {_text(k): _text(v) for k, v in streak.items()}
        return Snapshot(
            attempts=tuple(sorted(float(entry[1]) for entry in tried)),
            failures=tuple(sorted(float(entry[1]) for entry in failed)),
            streak=int(fields.get("count", 0)),
            last_failure_at=float(fields["last"]) if "last" in fields else None,
            thread=json.loads(_text(thread)) if thread is not None else {},
            progress_epoch=int(_text(epoch)) if epoch is not None else 0,
        )

    async def put_outcome(self, outcome: TriggerOutcome, ttl: int) -> None:
        await self._r.set(f"{_P}:trigger:{outcome.trigger_id}", outcome_json(outcome), ex=ttl)

    async def get_outcome(self, trigger_id: str) -> TriggerOutcome | None:
        raw = await self._r.get(f"{_P}:trigger:{trigger_id}")
        return outcome_from(raw) if raw is not None else None

    # ---- the queue ----------------------------------------------------------------------------------

    async def enqueue(self, job: Job, due: float) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hset(f"{_P}:jobs", job.trigger_id, job_json(job))
            pipe.zadd(f"{_P}:queue", {job.trigger_id: due})
            await pipe.execute()

    async def take_due(self, now: float, lease: float, limit: int = 50) -> list[Job]:
        members = await self._claim(keys=[f"{_P}:queue"], args=[now, now + lease, limit])
        out: list[Job] = []
        for member in members or []:
            trigger_id = _text(member)
            raw = await self._r.hget(f"{_P}:jobs", trigger_id)
            if raw is None:
                await self._r.zrem(f"{_P}:queue", trigger_id)
                continue
            out.append(job_from(raw))
        return out

    async def take(self, trigger_id: str) -> Job | None:
        """Claim one queued job now (force-inject), whatever its due time."""
        if not await self._r.zrem(f"{_P}:queue", trigger_id):
            return None
        raw = await self._r.hget(f"{_P}:jobs", trigger_id)
        return job_from(raw) if raw is not None else None

    async def release_written(self, phases: set[str], now: float | None = None) -> int:
        """At start-up: jobs whose record says their bytes were being written when the last
        supervisor stopped are due at once (their lease would hold them for a minute)."""
        jobs = await self._r.hgetall(f"{_P}:jobs")
        due: dict[str, float] = {}
        for raw_id, raw in jobs.items():
            try:
                machine = json.loads(_text(raw)).get("machine") or {}
            except ValueError:
                continue
            if machine.get("phase") in phases:
                due[_text(raw_id)] = now if now is not None else 0.0
        if due:
            await self._r.zadd(f"{_P}:queue", due)
        return len(due)

    async def done(self, trigger_id: str) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.zrem(f"{_P}:queue", trigger_id)
            pipe.hdel(f"{_P}:jobs", trigger_id)
            await pipe.execute()

    async def queue_depth(self) -> int:
        return int(await self._r.zcard(f"{_P}:queue"))

    # ---- guardrail counters ------------------------------------------------------------------------

    async def attempts(self, agent_id: str, thread_id: str, now: float, window: float) -> tuple[float, ...]:
        key = f"{_P}:attempts:{agent_id}:{thread_id}"
        await self._r.zremrangebyscore(key, "-inf", now - window)
        entries = await self._r.zrange(key, 0, -1, withscores=True)
        return tuple(sorted(float(entry[1]) for entry in entries))

    async def record_attempt(
        self, agent_id: str, thread_id: str, trigger_id: str, step: int, now: float, window: float
    ) -> None:
        key = f"{_P}:attempts:{agent_id}:{thread_id}"
        await self._r.zadd(key, {f"{trigger_id}:{step}:{now}": now})
        await self._r.expire(key, int(window) + 5)

    async def failures(
        self, workspace_id: str, agent_id: str, now: float, window: float
    ) -> tuple[tuple[float, ...], int, float | None]:
        """Recent runtime failures, the consecutive failure count and the last failure's time."""
        key = f"{_P}:failures:{workspace_id}:{agent_id}"
        await self._r.zremrangebyscore(key, "-inf", now - window)
        entries = await self._r.zrange(key, 0, -1, withscores=True)
        streak = await self._r.hgetall(f"{_P}:streak:{workspace_id}:{agent_id}")
        fields = {_text(k): _text(v) for k, v in streak.items()}
        last = float(fields["last"]) if "last" in fields else None
        return tuple(sorted(float(entry[1]) for entry in entries)), int(fields.get("count", 0)), last

    async def record_failure(
        self, workspace_id: str, agent_id: str, what: str, now: float, window: float
    ) -> None:
        """A failure of the agent's runtime for the crash-loop history (a resume that failed, a
        runtime found gone). It does not move the cooldown's streak: that counts ended triggers."""
        key = f"{_P}:failures:{workspace_id}:{agent_id}"
        async with self._r.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {f"{what}:{now}": now})
            pipe.expire(key, int(window) + 5)
            await pipe.execute()

    async def count_failure(
        self, workspace_id: str, agent_id: str, why: str, now: float, window: float
    ) -> None:
        """A trigger that ended in a real failure of the agent's runtime: one more in its streak
        (the cooldown, per agent), with when and why, and one more in the crash-loop history."""
        failures = f"{_P}:failures:{workspace_id}:{agent_id}"
        streak = f"{_P}:streak:{workspace_id}:{agent_id}"
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.zadd(failures, {f"trigger:{now}": now})
            pipe.expire(failures, int(window) + 5)
            pipe.hincrby(streak, "count", 1)
            pipe.hset(streak, mapping={"last": str(now), "why": why})
            pipe.expire(streak, _STREAK_TTL_SECS)
            await pipe.execute()

    async def failure_streak(self, workspace_id: str, agent_id: str) -> tuple[int, float | None, str]:
        """The agent's real failures in a row: how many, the last one's time and why it failed."""
        raw = await self._r.hgetall(f"{_P}:streak:{workspace_id}:{agent_id}")
        fields = {_text(k): _text(v) for k, v in raw.items()}
        last = float(fields["last"]) if "last" in fields else None
        return int(fields.get("count", 0)), last, fields.get("why", "")

    async def record_success(self, workspace_id: str, agent_id: str) -> None:
        await self._r.delete(f"{_P}:streak:{workspace_id}:{agent_id}")

    # ---- thread guard and progress ---------------------------------------------------------------

    async def thread_state(self, agent_id: str, thread_id: str) -> dict[str, Any]:
        raw = await self._r.get(f"{_P}:thread:{agent_id}:{thread_id}")
        return json.loads(_text(raw)) if raw is not None else {}

    async def put_thread_state(self, agent_id: str, thread_id: str, state: dict[str, Any]) -> None:
        await self._r.set(f"{_P}:thread:{agent_id}:{thread_id}", json.dumps(state), ex=30 * 86400)

    async def progress_epoch(self, runtime_id: str) -> int:
        raw = await self._r.get(f"{_P}:progress:{runtime_id}")
        return int(_text(raw)) if raw is not None else 0

    async def bump_progress(self, runtime_id: str) -> None:
        await self._r.incr(f"{_P}:progress:{runtime_id}")
