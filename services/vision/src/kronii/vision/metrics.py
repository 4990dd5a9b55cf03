"""The vision engine's Prometheus metrics, all kronii_vision_*. Labels carry fixed codes only (plan
states, action types, safety rows, tick decisions, context parts); never an intent or a screen's text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from kronii.vision.core.actions import ActionType
from kronii.vision.core.effects import Effect
from kronii.vision.core.plans import PlanState
from kronii.vision.core.safety import ROWS
from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["AUDIT_ACTIONS", "RECEIVES", "VisionMetrics", "zero_common_series"]

RECEIVES = (subjects.FOCUS_CHANGED,)
AUDIT_ACTIONS = (
    "vision.plan", "vision.plan.approved", "vision.plan.denied", "vision.plan.approval_refused",
    "vision.action", "vision.plan.done", "vision.plan.failed", "vision.plan.stopped", "vision.plan.stale",
)  # fmt: skip
PARTS = ("tree", "frame", "scale", "capture", "ocr", "total")
TICKS = ("skipped", "changed")


def zero_common_series(common: CommonMetrics) -> None:
    start_at_zero(common, publishes=(), receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


class VisionMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.plans = Counter(
            "kronii_vision_plans", "Plans made, by the state they started in", ["state"], registry=registry
        )
        self.actions = Counter(
            "kronii_vision_actions",
            "Actions performed, by type and outcome",
            ["type", "outcome"],
            registry=registry,
        )
        self.safety = Counter(
            "kronii_vision_safety_rows", "Safety rows that fired, by row", ["row"], registry=registry
        )
        self.ticks = Counter(
            "kronii_vision_ticks", "Screen ticks while a plan is active: skipped by R1 or changed", ["decision"],
            registry=registry,
        )  # fmt: skip
        self.ends = Counter(
            "kronii_vision_plan_ends", "Plans ended, by final state", ["state"], registry=registry
        )
        self.effects = Counter(
            "kronii_vision_effects",
            "Actions' expected effects looked for afterwards, by effect and whether it was seen",
            ["effect", "seen"],
            registry=registry,
        )
        self.context = Histogram(
            "kronii_vision_context_seconds",
            "Building a screen context, by part",
            ["part"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=registry,
        )
        for state in PlanState:
            self.plans.labels(state.value)
            self.ends.labels(state.value)
        for kind in ActionType:
            for outcome in ("done", "failed"):
                self.actions.labels(kind.value, outcome)
        for row in ROWS:
            self.safety.labels(row.id)
        for effect in Effect:
            for seen in ("yes", "no"):
                self.effects.labels(effect.value, seen)
        for decision in TICKS:
            self.ticks.labels(decision)
        for part in PARTS:
            self.context.labels(part)

    def effect(self, effect: str, seen: bool) -> None:
        self.effects.labels(effect, "yes" if seen else "no").inc()

    def safety_rows(self, rows: Sequence[str]) -> None:
        for row in rows:
            self.safety.labels(row).inc()

    def context_timings(self, timings: Mapping[str, float]) -> None:
        """One context build's parts, in milliseconds as context_build keeps them."""
        for part, ms in timings.items():
            if part in PARTS:
                self.context.labels(part).observe(ms / 1000)
