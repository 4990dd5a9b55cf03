"""The in-process parts `kronii replay`, the service and the tests fill RunnerPorts with where no
outside thing stands behind a port: no capture service, runs kept in memory, no audit trail."""

from __future__ import annotations

from typing import Any

from kronii.pipeline.core.answers import CaptureOutcome
from kronii.pipeline.core.router import BaseSnapshot
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import CaptureStatus, Priority

__all__ = ["InMemoryRuns", "NoCapture", "no_audit"]


class NoCapture:
    """No ScreenCapture service: every request fails at once, and the round degrades (seed row 9)."""

    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str:
        return "none"

    async def outcome(self, job_id: str) -> CaptureOutcome:
        return CaptureOutcome(CaptureStatus.FAILED, reason="no capture service")

    async def cancel(self, job_id: str) -> None:
        return None


class InMemoryRuns:
    """A run store for replay and tests: the latest record of each run, in order of creation."""

    def __init__(self) -> None:
        self.records: dict[str, RunRecord] = {}

    async def save(self, record: RunRecord) -> None:
        self.records[record.run_id] = record


async def no_audit(*, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any) -> None:
    """An audit trail that keeps nothing (replay)."""
    return None
