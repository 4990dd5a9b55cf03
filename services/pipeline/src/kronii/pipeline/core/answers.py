"""What the outside answers a round, as the ports return it: the scheduler's admission and a
capture job's outcome."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.pipeline.core.states import CaptureStatus

__all__ = ["Admit", "CaptureOutcome"]


@dataclass(frozen=True, slots=True)
class Admit:
    allowed: bool
    reason: str = ""
    # When the refusing rules will have passed (the scheduler's retry_after_ms); 0 when unknown.
    retry_after_ms: int = 0


@dataclass(frozen=True, slots=True)
class CaptureOutcome:
    status: CaptureStatus
    screenshot_id: str = ""
    reason: str = ""
