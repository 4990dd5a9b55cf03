"""`kronii critic doctor` (core): the report's values, the tally of the shells' hooks, the window of
embedding latencies, and the sentences that say what is wrong. No I/O: times are passed in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "DoctorReport",
    "EmbeddingQueueState",
    "HookSeen",
    "HookTally",
    "LatencyWindow",
    "ModelState",
    "PlaceState",
    "RecordCounts",
    "doctor_problems",
]

LATENCY_WINDOW = 200  # the embeddings whose latencies the doctor's percentiles are of


@dataclass(frozen=True)
class HookSeen:
    shell: str
    events: int
    last_seen_ms: int  # 0: none since the critic started


@dataclass(frozen=True)
class PlaceState:
    """The spool file or the hint directory: where, whether usable, why not, what waits there."""

    path: str
    ok: bool
    problem: str = ""
    pending: int = 0


@dataclass(frozen=True)
class ModelState:
    available: bool
    name: str = ""
    sha256: str = ""
    problem: str = ""


@dataclass(frozen=True)
class RecordCounts:
    ram: int
    files: int
    database: int
    redactions: int


@dataclass(frozen=True)
class EmbeddingQueueState:
    depth: int
    capacity: int
    dropped: int
    latency_p50_ms: float
    latency_p95_ms: float


@dataclass(frozen=True)
class DoctorReport:
    """`kronii critic doctor`: ``muted_until_ms`` 0 when hints are not muted; ``problems`` are
    sentences, empty when all is well."""

    hooks: list[HookSeen]
    spool: PlaceState
    hints: PlaceState
    model: ModelState
    records: RecordCounts
    embeddings: EmbeddingQueueState
    muted_until_ms: int = 0
    problems: list[str] = field(default_factory=list)


class HookTally:
    """The events each shell's hook reported since the critic started, and when it last did."""

    def __init__(self) -> None:
        self._seen: dict[str, HookSeen] = {}

    def seen(self, shell: str, now_ms: int) -> None:
        before = self._seen.get(shell, HookSeen(shell, 0, 0))
        self._seen[shell] = HookSeen(shell, before.events + 1, now_ms)

    def hooks(self) -> list[HookSeen]:
        """By shell name."""
        return sorted(self._seen.values(), key=lambda hook: hook.shell)


class LatencyWindow:
    """The last LATENCY_WINDOW latencies (seconds) and their percentiles in ms."""

    def __init__(self, size: int = LATENCY_WINDOW) -> None:
        self._size = size
        self._latencies: list[float] = []

    def add(self, seconds: float) -> None:
        self._latencies = [*self._latencies[-(self._size - 1) :], seconds]

    def percentile_ms(self, share: float) -> float:
        """The latency below which ``share`` of the window lies, in ms (0.0 for an empty window)."""
        ordered = sorted(self._latencies)
        if not ordered:
            return 0.0
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 2)


def doctor_problems(report: DoctorReport, database_failures: int, lost: int) -> list[str]:
    """What is wrong, as the sentences `kronii critic doctor` prints, from the report's values and
    the memory's failure counts."""
    problems: list[str] = []
    if not report.hooks or all(hook.events == 0 for hook in report.hooks):
        problems.append(
            'no shell has reported a command yet: add eval "$(kronii shell-init bash)" to ~/.bashrc'
        )
    places: Sequence[PlaceState] = (report.spool, report.hints)
    problems.extend(place.problem for place in places if not place.ok)
    if not report.model.available:
        problems.append(f"no embeddings (search by keywords only): {report.model.problem}")
    if report.records.database < 0:
        problems.append("PostgreSQL does not answer: the day files keep the records until it does")
    if database_failures:
        problems.append(f"PostgreSQL refused {database_failures} write(s); the day files keep the records")
    if lost:
        problems.append(f"{lost} record(s) could not be kept")
    return problems
