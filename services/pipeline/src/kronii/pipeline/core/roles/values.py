"""Value types the roles pass along: Extractor -> Fragments -> Synthesizer -> Synthesis ->
Planner -> Plan -> Notifier -> Notification (or nothing). All plain, frozen, JSON-able (`codec`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from kronii.pipeline.core.budget import BudgetedContext
from kronii.pipeline.core.states import CapturePreemption, TriggerKind
from kronii.pipeline.core.window_context import WindowContext


class Role(StrEnum):
    EXTRACTOR = "extractor"
    SYNTHESIZER = "synthesizer"
    PLANNER = "planner"
    NOTIFIER = "notifier"


class BackendKind(StrEnum):
    """Chosen by settings; `rules` is the default and needs no model."""

    RULES = "rules"
    OPENAI = "openai"
    LLAMACPP = "llamacpp"


class ConfidenceLabel(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class CostLabel(StrEnum):
    """What the round's context costs a model to read (see `rules.cost_label`)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


def confidence_label(confidence: float) -> ConfidenceLabel:
    if confidence >= 0.75:
        return ConfidenceLabel.HIGH
    if confidence >= 0.5:
        return ConfidenceLabel.MEDIUM
    return ConfidenceLabel.LOW


@dataclass(frozen=True, slots=True)
class RoleContext:
    """What the extractors get: the budgeted, redacted context and what the round is about."""

    trigger: TriggerKind
    budget: BudgetedContext
    now_ms: int
    window: WindowContext | None = None


@dataclass(frozen=True, slots=True)
class Fragment:
    """One extracted fact. `source` says where it came from: "window", "plugin:<app_id>",
    "screenshot" or "trigger"."""

    kind: str
    value: str
    confidence: float
    source: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A suggestion the Planner may surface. `key` identifies it across rounds and days."""

    action: str
    key: str
    title: str
    rationale: str
    confidence: float
    confidence_label: ConfidenceLabel
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Synthesis:
    """Merged fragments and the candidates they support, best first. `context_hash` is the same
    for the same facts whatever their order: the Planner dedupes on it."""

    candidates: tuple[Candidate, ...]
    fragments: tuple[Fragment, ...]
    conflicts: tuple[str, ...]
    context_hash: str
    cost_label: CostLabel

    @property
    def top(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


@dataclass(frozen=True, slots=True)
class PlanHistory:
    """What the Planner knows of earlier rounds, as of `now_ms`: context hashes with when they
    were planned, and the candidate keys already surfaced today."""

    now_ms: int
    recent_hashes: tuple[tuple[str, int], ...] = ()
    surfaced_today: frozenset[str] = frozenset()

    def after(self, synthesis: Synthesis, plan: Plan, horizon_ms: int) -> PlanHistory:
        """The history the next round sees (hashes older than `horizon_ms` are forgotten)."""
        recent = tuple((h, t) for h, t in self.recent_hashes if self.now_ms - t < horizon_ms)
        surfaced = self.surfaced_today
        if plan.notify and synthesis.top is not None:
            surfaced = surfaced | {synthesis.top.key}
        return PlanHistory(self.now_ms, (*recent, (synthesis.context_hash, self.now_ms)), surfaced)


@dataclass(frozen=True, slots=True)
class Plan:
    """The Planner's verdict: notify or stay silent, and the schedule parameters (seed: next_wakeup,
    min_cooldown, trigger_filters). `trigger_filters` are trigger kinds the scheduler drops until
    `next_wakeup_ms`; `capture_preemption` is the policy for a pending capture (additional guard 1)."""

    notify: bool
    next_wakeup_ms: int
    min_cooldown_ms: int
    trigger_filters: tuple[str, ...]
    reason: str
    capture_preemption: CapturePreemption = CapturePreemption.CANCEL


class NotificationActionKind(StrEnum):
    SNOOZE = "snooze"
    DISABLE = "disable"


@dataclass(frozen=True, slots=True)
class NotificationAction:
    kind: NotificationActionKind
    label: str
    # snooze: for how long; disable: which candidate action (suggestion kind) to turn off.
    snooze_ms: int = 0
    target: str = ""


@dataclass(frozen=True, slots=True)
class Notification:
    title: str
    body: str
    source_summary: str
    actions: tuple[NotificationAction, ...]
    context_hash: str
    candidate_key: str


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One role call as the run's audit records it."""

    role: Role
    backend: str
    input_tokens: int
    output_tokens: int
    latency_ms: int


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Called(Generic[T]):
    """A role's result with the record of the call that produced it."""

    value: T
    call: CallRecord
