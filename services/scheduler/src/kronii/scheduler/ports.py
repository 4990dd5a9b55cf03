"""What the scheduler's use cases need of the outside: one store of timers (wake-ups, the cooldown,
the trigger filters and the run counts behind the ceilings), shared by every scheduler replica
(`adapters.timers.RedisTimers`); a publisher of Ticks (`adapters.ticks.BusTicks`); and the audit
record a plan takes effect in (the service context). The audit rows written off the request path go
through the one audit port, `kronii.foundation.audit_trail.AuditTrail`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from kronii.scheduler.core.commands import FiredTick
from kronii.scheduler.core.model import AdmissionView, Cooldown, WakeUp

__all__ = ["DurableRecord", "TickPublisher", "TimerStore"]


class TimerStore(Protocol):
    def admission_lock(self) -> AbstractAsyncContextManager[Any]:
        """Held across read, decide and record of one admission, so that replicas do not race."""
        ...

    # ---- wake-ups ----------------------------------------------------------------------------

    async def put_wakeup(self, wakeup: WakeUp) -> None: ...

    async def has_slot(self, slot: str) -> bool: ...

    async def claim_due(self, now: float) -> list[WakeUp]:
        """The wake-ups due at `now`, each claimed by this caller alone until `done` or its lease ends."""
        ...

    async def done(self, wakeup: WakeUp) -> None: ...

    async def count_pending(self) -> int: ...

    async def pending(self) -> list[WakeUp]: ...

    # ---- cooldown and filters ----------------------------------------------------------------

    async def set_cooldown(self, cooldown: Cooldown | None) -> None: ...

    async def cooldown(self, now: float) -> Cooldown | None: ...

    async def merge_filters(self, filters: Mapping[str, float]) -> None: ...

    async def filters(self, now: float) -> dict[str, float]: ...

    # ---- runs, for the ceilings --------------------------------------------------------------

    async def record_run(self, app: str, now: float) -> None: ...

    async def global_runs(self, now: float) -> list[float]: ...

    async def app_runs(self, app: str, now: float) -> list[float]: ...

    async def apps_with_runs(self, now: float) -> list[str]: ...

    async def admission_view(self, app: str, now: float) -> AdmissionView:
        """What admission decides on for `app` at `now`: cooldown, filters and the runs in the window."""
        ...


class TickPublisher(Protocol):
    async def publish(self, tick: FiredTick) -> None:
        """Send the Tick; raises when it was not confirmed (the wake-up's lease then runs out and it
        fires again)."""
        ...


class DurableRecord(Protocol):
    """The audit rows of plans: refused at the door while PostgreSQL is away, and a plan applied
    inside its row's transaction (`then`), answered only once both stand."""

    def require_postgres(self) -> None:
        """Raises kronii.stores.durable.StoreUnavailable while PostgreSQL is known to be away."""
        ...

    async def record(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None: ...

    async def record_durably(
        self,
        *,
        actor: str,
        action: str,
        subject: str = "",
        outcome: str = "",
        then: Callable[[Any], Awaitable[None]] | None = None,
        **detail: Any,
    ) -> None:
        """Raises StoreUnavailable when the row (and so the work in `then`) was not committed."""
        ...
