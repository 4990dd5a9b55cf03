"""Timers, cooldown, filters and run counters in Redis, so a restart of the scheduler loses nothing.

Keys (all under the configured prefix `p`):
- `p:wakeups`   sorted set: pending wake-up id -> due time (epoch ms)
- `p:inflight`  sorted set: claimed wake-up id -> lease end (epoch ms); a lease that ends unconfirmed
                (the scheduler died between claim and publish) makes the wake-up due again
- `p:wakeup:<id>` hash: the wake-up's details
- `p:slots`     hash: slot -> the id of its pending wake-up (one per app, global, safety net)
- `p:cooldown`  hash: until_ms, app, run_id, reason (the latest plan's; replaced or deleted)
- `p:filters`   hash: filter -> until_ms
- `p:runs:global`, `p:runs:app:<app>` sorted sets of admitted runs by time; `p:apps` app -> last run

Claims are Lua scripts: a due wake-up moves from `wakeups` to `inflight` in one step, so it is
handed to exactly one scheduler even when several poll the same Redis.

The times (scores, `*_ms`) are on the scheduler's duration clock, the monotonic clock anchored to
the epoch at start, and they alone decide: Redis's own expiry runs on its host's wall clock, which
may be stepped, so a key's expiry is only a relative sweep of garbage with a day to spare, never
what ends a cooldown or forgets a run.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

import redis.asyncio as aioredis
from kronii.scheduler.core.model import HOUR_SECS, AdmissionView, Cooldown, TickKind, WakeUp

__all__ = ["RedisTimers"]

# Replaces the slot's pending wake-up; a replaced one already claimed (in flight) keeps its details.
_PUT = """
local old = redis.call('HGET', KEYS[2], ARGV[2])
if old and old ~= ARGV[3] then
  if redis.call('ZREM', KEYS[1], old) == 1 then
    redis.call('DEL', ARGV[1] .. old)
  end
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('DEL', ARGV[1] .. ARGV[3])
redis.call('HSET', ARGV[1] .. ARGV[3], unpack(ARGV, 5))
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
return old
"""

# Claims due wake-ups and in-flight ones whose lease ended; returns their ids.
_CLAIM = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local claimed = {}
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZADD', KEYS[2], ARGV[2], id)
  table.insert(claimed, id)
end
for _, id in ipairs(stale) do
  redis.call('ZADD', KEYS[2], ARGV[2], id)
  table.insert(claimed, id)
end
return claimed
"""

# Confirms a fired wake-up: forget it, and free its slot unless a newer plan took the slot.
_DONE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
if redis.call('HGET', KEYS[3], ARGV[2]) == ARGV[1] then
  redis.call('HDEL', KEYS[3], ARGV[2])
end
return 1
"""

# Keeps the later end when a filter is set again.
_MERGE_FILTER = """
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > current then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
"""

_CLAIM_BATCH = 100
# Keys whose times have all passed are swept by Redis this long after (wall steps up to a day are harmless).
_SWEEP_AFTER_SECS = HOUR_SECS + 86400.0


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _decoded(raw: Mapping[Any, Any]) -> dict[str, str]:
    return {_text(key): _text(value) for key, value in raw.items()}


class RedisTimers:
    def __init__(self, redis: aioredis.Redis, prefix: str, *, lease_secs: float = 10.0) -> None:
        self._redis = redis
        self._prefix = prefix
        self._lease_secs = lease_secs
        self._wakeups = f"{prefix}:wakeups"
        self._inflight = f"{prefix}:inflight"
        self._slots = f"{prefix}:slots"
        self._cooldown = f"{prefix}:cooldown"
        self._filters = f"{prefix}:filters"
        self._global_runs = f"{prefix}:runs:global"
        self._apps = f"{prefix}:apps"
        self._put = redis.register_script(_PUT)
        self._claim = redis.register_script(_CLAIM)
        self._done = redis.register_script(_DONE)
        self._merge_filter = redis.register_script(_MERGE_FILTER)

    def _detail_key(self, wakeup_id: str) -> str:
        return f"{self._prefix}:wakeup:{wakeup_id}"

    def _app_runs(self, app: str) -> str:
        return f"{self._prefix}:runs:app:{app}"

    def admission_lock(self) -> Any:
        """Serializes read-decide-record of admissions across schedulers sharing this Redis."""
        return self._redis.lock(f"{self._prefix}:admit-lock", timeout=5, blocking_timeout=5)

    # ---- wake-ups ----------------------------------------------------------------------------

    async def put_wakeup(self, wakeup: WakeUp) -> None:
        """Set the slot's pending wake-up, replacing the one it had."""
        fields = {
            "slot": wakeup.slot,
            "kind": wakeup.kind.value,
            "app": wakeup.app,
            "run_id": wakeup.run_id,
            "reason": wakeup.reason,
            "due_ms": str(_ms(wakeup.due_at)),
        }
        flat = [item for pair in fields.items() for item in pair]
        await self._put(
            keys=[self._wakeups, self._slots],
            args=[f"{self._prefix}:wakeup:", wakeup.slot, wakeup.wakeup_id, _ms(wakeup.due_at), *flat],
        )

    async def has_slot(self, slot: str) -> bool:
        return bool(await self._redis.hexists(self._slots, slot))

    async def claim_due(self, now: float) -> list[WakeUp]:
        """Wake-ups due by `now`, each handed to one caller only; confirm each with `done`."""
        ids = await self._claim(
            keys=[self._wakeups, self._inflight],
            args=[_ms(now), _ms(now + self._lease_secs), _CLAIM_BATCH],
        )
        claimed: list[WakeUp] = []
        for raw_id in cast(list[Any], ids):
            wakeup = await self._load(_text(raw_id))
            if wakeup is None:
                await self._redis.zrem(self._inflight, raw_id)
            else:
                claimed.append(wakeup)
        return claimed

    async def done(self, wakeup: WakeUp) -> None:
        await self._done(
            keys=[self._inflight, self._detail_key(wakeup.wakeup_id), self._slots],
            args=[wakeup.wakeup_id, wakeup.slot],
        )

    async def count_pending(self) -> int:
        """Pending and in-flight wake-ups, without loading their details."""
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zcard(self._wakeups)
            pipe.zcard(self._inflight)
            waiting, inflight = await pipe.execute()
        return int(waiting) + int(inflight)

    async def pending(self) -> list[WakeUp]:
        """Pending and in-flight wake-ups, soonest first."""
        ids = [
            *await self._redis.zrange(self._wakeups, 0, -1),
            *await self._redis.zrange(self._inflight, 0, -1),
        ]
        found = [wakeup for raw in ids if (wakeup := await self._load(_text(raw))) is not None]
        return sorted(found, key=lambda item: item.due_at)

    async def _load(self, wakeup_id: str) -> WakeUp | None:
        raw = _decoded(await self._redis.hgetall(self._detail_key(wakeup_id)))
        if not raw:
            return None
        return WakeUp(
            wakeup_id=wakeup_id,
            slot=raw.get("slot", ""),
            due_at=int(raw.get("due_ms", "0")) / 1000,
            kind=TickKind(raw.get("kind", TickKind.PLANNED.value)),
            app=raw.get("app", ""),
            run_id=raw.get("run_id", ""),
            reason=raw.get("reason", ""),
        )

    # ---- cooldown and filters ----------------------------------------------------------------

    async def set_cooldown(self, cooldown: Cooldown | None) -> None:
        """The latest plan's cooldown replaces the previous one; None ends it."""
        if cooldown is None:
            await self._redis.delete(self._cooldown)
            return
        fields: dict[Any, Any] = {
            "until_ms": str(_ms(cooldown.until)),
            "app": cooldown.app,
            "run_id": cooldown.run_id,
            "reason": cooldown.reason,
        }
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(self._cooldown)
            pipe.hset(self._cooldown, mapping=fields)
            await pipe.execute()

    async def cooldown(self, now: float) -> Cooldown | None:
        raw = _decoded(await self._redis.hgetall(self._cooldown))
        if not raw:
            return None
        until = int(raw.get("until_ms", "0")) / 1000
        if until <= now:
            return None
        return Cooldown(
            until, app=raw.get("app", ""), run_id=raw.get("run_id", ""), reason=raw.get("reason", "")
        )

    async def merge_filters(self, filters: Mapping[str, float]) -> None:
        for item, until in filters.items():
            await self._merge_filter(keys=[self._filters], args=[item, _ms(until)])

    async def filters(self, now: float) -> dict[str, float]:
        """Live filters; ended ones are removed on the way."""
        raw = _decoded(await self._redis.hgetall(self._filters))
        live: dict[str, float] = {}
        ended: list[str] = []
        for item, until_ms in raw.items():
            until = int(until_ms) / 1000
            if until > now:
                live[item] = until
            else:
                ended.append(item)
        if ended:
            await self._redis.hdel(self._filters, *ended)
        return live

    # ---- run counters ------------------------------------------------------------------------

    async def record_run(self, app: str, now: float) -> None:
        member = f"{_ms(now)}:{uuid.uuid4().hex[:8]}"
        cutoff = _ms(now - HOUR_SECS)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zadd(self._global_runs, {member: _ms(now)})
            pipe.zremrangebyscore(self._global_runs, "-inf", cutoff)
            if app:
                pipe.zadd(self._app_runs(app), {member: _ms(now)})
                pipe.zremrangebyscore(self._app_runs(app), "-inf", cutoff)
                pipe.pexpire(self._app_runs(app), _ms(_SWEEP_AFTER_SECS))
                pipe.zadd(self._apps, {app: _ms(now)})
            await pipe.execute()

    async def runs(self, key: str, now: float) -> list[float]:
        scores = cast(
            list[tuple[Any, float]],
            await self._redis.zrangebyscore(key, _ms(now - HOUR_SECS), "+inf", withscores=True),
        )
        return [float(score) / 1000 for _, score in scores]

    async def global_runs(self, now: float) -> list[float]:
        return await self.runs(self._global_runs, now)

    async def app_runs(self, app: str, now: float) -> list[float]:
        return await self.runs(self._app_runs(app), now) if app else []

    async def apps_with_runs(self, now: float) -> list[str]:
        """Apps with a run in the last hour."""
        await self._redis.zremrangebyscore(self._apps, "-inf", _ms(now - HOUR_SECS))
        return [_text(app) for app in await self._redis.zrange(self._apps, 0, -1)]

    async def admission_view(self, app: str, now: float) -> AdmissionView:
        return AdmissionView(
            cooldown=await self.cooldown(now),
            filters=await self.filters(now),
            global_runs=await self.global_runs(now),
            app_runs=await self.app_runs(app, now),
        )
