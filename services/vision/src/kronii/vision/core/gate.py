"""R1 and the cadence: when a tick may call the model, and how often ticks come.

R1: a frame whose pixel difference from the last one is below 0.01, with no focus change since, is
the same screen: no context build, no model call. Ticks run only while a plan is active (awaiting
confirmation or executing), every 0.5-2 s: the slower end when the engine's own CPU use is over its
budget, so watching the screen never costs the person their machine."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.vision.core.fingerprint import SCREEN_CHANGE_THRESHOLD

__all__ = ["Cadence", "should_call_model"]


def should_call_model(diff: float, focus_changed: bool) -> bool:
    """R1: False only when the screen is the same (diff below the threshold) and focus stayed."""
    return focus_changed or diff >= SCREEN_CHANGE_THRESHOLD


@dataclass(frozen=True, slots=True)
class Cadence:
    fastest_secs: float = 0.5
    slowest_secs: float = 2.0
    # Share of one core the ticks may use (their measured CPU time over wall time).
    cpu_budget: float = 0.1

    def __post_init__(self) -> None:
        if not 0 < self.fastest_secs <= self.slowest_secs:
            raise ValueError("the fastest tick must be positive and no slower than the slowest")
        if not 0 < self.cpu_budget <= 1:
            raise ValueError("the CPU budget is a share of one core, in (0, 1]")

    def interval(self, plan_active: bool, cpu_share: float) -> float | None:
        """Seconds to the next tick, or None: no plan is active, so nothing is watched at all."""
        if not plan_active:
            return None
        if cpu_share <= self.cpu_budget / 2:
            return self.fastest_secs
        if cpu_share >= self.cpu_budget:
            return self.slowest_secs
        share = (cpu_share - self.cpu_budget / 2) / (self.cpu_budget / 2)
        return self.fastest_secs + share * (self.slowest_secs - self.fastest_secs)
