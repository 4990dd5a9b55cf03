"""The plans the engine holds, the one table its use cases share: each with the screen it was made on,
the safety layer's verdict, the fingerprint an approval binds to, and its history. Held in memory: a
plan is about one screen, which does not outlive the process; every plan and decision is in the audit
log with its screenshot hash."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kronii.foundation.errors import FailedPrecondition, NotFound
from kronii.vision.core.context import ScreenContext
from kronii.vision.core.plans import TERMINAL, PlanEvent, PlanState, next_state, refusal
from kronii.vision.core.safety import SafetyEvaluation

if TYPE_CHECKING:
    import numpy as np

__all__ = ["PlanBook", "PlanRecord", "PlanView"]


@dataclass
class PlanRecord:
    id: str
    intent: str
    requester: str
    created_ms: int
    backend: str
    context: ScreenContext
    frame: np.ndarray | None
    evaluation: SafetyEvaluation
    fingerprint: str
    state: PlanState
    reason: str = ""
    note: str = ""
    approved_by: str = ""
    replanned_as: str = ""
    model_call: dict[str, Any] | None = None
    results: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.state not in TERMINAL


@dataclass(frozen=True)
class PlanView:
    """A plan as it stands at one moment, for the API, the CLI and the dialog to show: the record's
    fields copied, so that what is shown does not move under the caller while the plan runs on."""

    id: str
    intent: str
    state: PlanState
    reason: str
    note: str
    requester: str
    backend: str
    created_ms: int
    context: ScreenContext
    evaluation: SafetyEvaluation
    fingerprint: str
    approved_by: str
    replanned_as: str
    model_call: dict[str, Any] | None
    results: tuple[dict[str, Any], ...]
    history: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, record: PlanRecord) -> PlanView:
        return cls(
            id=record.id, intent=record.intent, state=record.state, reason=record.reason, note=record.note,
            requester=record.requester, backend=record.backend, created_ms=record.created_ms,
            context=record.context, evaluation=record.evaluation, fingerprint=record.fingerprint,
            approved_by=record.approved_by, replanned_as=record.replanned_as, model_call=record.model_call,
            results=tuple(dict(r) for r in record.results), history=tuple(dict(h) for h in record.history),
        )  # fmt: skip


class PlanBook:
    def __init__(
        self,
        capacity: int = 200,
        ttl_ms: int = 600_000,
        *,
        on_end: Callable[[str], None] = lambda state: None,
    ) -> None:
        self._plans: OrderedDict[str, PlanRecord] = OrderedDict()
        self._capacity = capacity
        self._ttl_ms = ttl_ms
        self._on_end = on_end

    @staticmethod
    def new_id() -> str:
        return "p_" + secrets.token_hex(6)

    def add(self, record: PlanRecord) -> None:
        record.history.append(
            {"at_ms": record.created_ms, "state": record.state.value, "reason": record.reason}
        )
        self._plans[record.id] = record
        while len(self._plans) > self._capacity:
            oldest = next(iter(self._plans))
            self._plans.pop(oldest)

    def get(self, plan_id: str) -> PlanRecord:
        record = self._plans.get(plan_id)
        if record is None:
            raise NotFound(f"no plan {plan_id!r}: `kronii vision plans` lists the ones held", field="plan_id")
        return record

    def all(self) -> list[PlanRecord]:
        return list(reversed(self._plans.values()))

    def active(self) -> list[PlanRecord]:
        return [p for p in self._plans.values() if p.active]

    def move(self, record: PlanRecord, event: PlanEvent, now_ms: int, reason: str = "") -> None:
        """Apply `event`, or FailedPrecondition with the table's sentence when it may not happen."""
        target = next_state(record.state, event)
        if target is None:
            raise FailedPrecondition(f"plan {record.id}: {refusal(record.state, event)}")
        record.state = target
        if reason:
            record.reason = reason
        record.history.append({"at_ms": now_ms, "state": target.value, "reason": reason})
        if target in TERMINAL:
            self._on_end(target.value)

    def expire(self, now_ms: int) -> list[PlanRecord]:
        """Plans left waiting longer than the time to live; they can no longer be approved."""
        expired = [
            p for p in self._plans.values()
            if p.state in (PlanState.AWAITING_CONFIRMATION, PlanState.READY)
            and now_ms - p.created_ms > self._ttl_ms
        ]  # fmt: skip
        for plan in expired:
            self.move(plan, PlanEvent.EXPIRE, now_ms, "nobody approved it in time")
        return expired
