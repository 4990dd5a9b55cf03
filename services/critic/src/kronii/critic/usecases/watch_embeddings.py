"""What became of each embedding job (the queue's observer): the latency histogram, the dropped
count and the queue's depth in the metrics, and the window of latencies the doctor shows."""

from __future__ import annotations

from kronii.critic.core.doctor import EmbeddingQueueState, LatencyWindow
from kronii.critic.core.embedding_jobs import JobOutcome
from kronii.critic.metrics import CriticMetrics
from kronii.critic.ports import EmbeddingQueueStats

__all__ = ["EmbeddingWatch"]

_DROPPED = (JobOutcome.DROPPED, JobOutcome.TIMED_OUT)


class EmbeddingWatch:
    """``observe`` is the queue's observer (it runs on the queue's worker thread); ``watch`` names
    the queue once it is made (the queue takes the observer when it is made)."""

    def __init__(self, metrics: CriticMetrics) -> None:
        self._metrics = metrics
        self._latencies = LatencyWindow()
        self._queue: EmbeddingQueueStats | None = None

    def watch(self, queue: EmbeddingQueueStats) -> None:
        self._queue = queue

    def observe(self, outcome: JobOutcome, seconds: float) -> None:
        if outcome is JobOutcome.EMBEDDED:
            self._metrics.embed_latency.observe(seconds)
            self._latencies.add(seconds)
        elif outcome in _DROPPED:
            self._metrics.embed_dropped.inc()
        if self._queue is not None:
            self._metrics.embed_queue.set(self._queue.stats().depth)

    def state(self) -> EmbeddingQueueState:
        """The queue's depth, bound and drops, and the latencies' p50 and p95 in ms."""
        p50, p95 = self._latencies.percentile_ms(0.5), self._latencies.percentile_ms(0.95)
        if self._queue is None:
            return EmbeddingQueueState(0, 0, 0, p50, p95)
        stats = self._queue.stats()
        dropped = sum(stats.outcomes.get(kind, 0) for kind in _DROPPED)
        return EmbeddingQueueState(stats.depth, self._queue.capacity, dropped, p50, p95)
