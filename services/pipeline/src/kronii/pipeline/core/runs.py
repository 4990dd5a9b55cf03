"""A pipeline run as it is kept: its path through the states with timings, route, plugins used,
redaction level, model calls and their cost, decision, and the next wake-up it planned. A round
builds its RunRecord as it goes; the run store saves it whole (adapters/runs_store.py), the HTTP API
shows it (api/convert.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["MAX_RUNS_PAGE", "ModelCall", "RunRecord", "StateVisit"]

# The largest page of runs the run store answers.
MAX_RUNS_PAGE = 500


class ModelCall(Protocol):
    """One role call as a run keeps it (the LLM library's CallRecord): who answered, with how many
    tokens, how long, how many attempts, at what cost, and how it ended."""

    @property
    def role(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...

    @property
    def latency_ms(self) -> int: ...

    @property
    def attempts(self) -> int: ...

    @property
    def cost_estimate(self) -> float: ...

    @property
    def outcome(self) -> str: ...

    @property
    def fallback(self) -> str: ...

    def as_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class StateVisit:
    """One stay in a state; epoch milliseconds, `left_at_ms` None while the run is still there."""

    state: str
    entered_at_ms: int
    left_at_ms: int | None = None

    @property
    def duration_ms(self) -> int | None:
        return None if self.left_at_ms is None else self.left_at_ms - self.entered_at_ms


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    created_at: float
    trigger_summary: str = ""
    states: tuple[StateVisit, ...] = ()
    route: str = ""
    plugins_used: tuple[str, ...] = ()
    redaction_level: str = ""
    model_calls: tuple[ModelCall, ...] = ()
    decision: str = ""
    notes: tuple[str, ...] = ()
    notification_id: str = ""
    next_wakeup_at: float | None = None
    finished_at: float | None = None
    extra_cost: float = field(default=0.0, compare=False)

    @property
    def tokens_in(self) -> int:
        return sum(call.input_tokens for call in self.model_calls)

    @property
    def tokens_out(self) -> int:
        return sum(call.output_tokens for call in self.model_calls)

    @property
    def cost_estimate(self) -> float:
        return sum(call.cost_estimate for call in self.model_calls) + self.extra_cost
