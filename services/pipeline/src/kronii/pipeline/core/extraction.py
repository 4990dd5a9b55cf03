"""Book-keeping of one round's extractors (seed row 12: "All extractors done or timed out"). The
service runs them in parallel with a deadline; this says when the round may move on and what
each extractor ended as."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum


class ExtractorOutcome(StrEnum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    TIMED_OUT = "timed_out"


@dataclass(slots=True)
class ExtractorRound:
    """Extractors started at `started_at_ms`, each allowed `timeout_ms`."""

    names: tuple[str, ...]
    started_at_ms: int
    timeout_ms: int
    _outcomes: dict[str, ExtractorOutcome] = field(default_factory=dict)

    @classmethod
    def start(cls, names: Iterable[str], now_ms: int, timeout_ms: int) -> ExtractorRound:
        unique = tuple(dict.fromkeys(names))
        if not unique or timeout_ms <= 0:
            raise ValueError("an extractor round needs at least one extractor and timeout_ms > 0")
        return cls(unique, now_ms, timeout_ms, dict.fromkeys(unique, ExtractorOutcome.RUNNING))

    @property
    def deadline_ms(self) -> int:
        return self.started_at_ms + self.timeout_ms

    def finish(self, name: str, ok: bool, now_ms: int) -> None:
        """Records a result; one that comes after the deadline counts as timed out (already merged without it)."""
        if self._outcomes.get(name) is not ExtractorOutcome.RUNNING:
            return
        if now_ms >= self.deadline_ms:
            self._outcomes[name] = ExtractorOutcome.TIMED_OUT
        else:
            self._outcomes[name] = ExtractorOutcome.DONE if ok else ExtractorOutcome.FAILED

    def outcomes(self, now_ms: int) -> dict[str, ExtractorOutcome]:
        late = now_ms >= self.deadline_ms
        return {
            name: ExtractorOutcome.TIMED_OUT if late and outcome is ExtractorOutcome.RUNNING else outcome
            for name, outcome in self._outcomes.items()
        }

    def settled(self, now_ms: int) -> bool:
        """`Facts.extractors_settled`: every extractor done, failed, or past the deadline."""
        return all(o is not ExtractorOutcome.RUNNING for o in self.outcomes(now_ms).values())
