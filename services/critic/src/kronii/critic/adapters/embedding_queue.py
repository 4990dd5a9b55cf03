"""The seed's BackgroundJobQueue for embeddings: the shell's commands are embedded off the hot path, by
one worker thread, so a burst of commands never costs the person more than a set share of one core.

- Bounded: when full, the oldest waiting job is dropped (counted); the newest commands are the ones a
  hint at the next prompt needs, and a dropped record only stays keyword-searchable.
- Per-job time cap, from enqueue: a job still waiting at its deadline is not run; a running one gets
  the time left and an embedder that can stop (MiniLmEmbedder: onnxruntime's terminate flag) stops.
- CPU duty cap: over any ``duty_window_s`` the worker's own CPU time stays within
  ``cpu_share * duty_window_s`` (give or take the one job that crossed the line): past it the worker
  sleeps between jobs. One embedding of a command line is ~6 ms, 256 tokens ~85 ms.
- Every submitted job ends in exactly one EmbeddingResult (its callback), with its enqueue-to-done
  latency, and the ``observe`` callback gets (outcome, latency) for the service's histogram."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from kronii.critic.core.embedding_jobs import CpuBudget, EmbeddingResult, JobOutcome, QueueStats
from kronii.critic.ports import Embedder, TimeLimitedEmbedder

__all__ = ["EmbeddingQueue"]

log = logging.getLogger(__name__)

_TIMER_SLACK_S = 0.002


ResultCallback = Callable[[EmbeddingResult], None]
OutcomeObserver = Callable[[JobOutcome, float], None]


@dataclass(frozen=True)
class _Job:
    key: str
    text: str
    on_done: ResultCallback | None
    enqueued: float
    deadline: float


class EmbeddingQueue:
    def __init__(
        self,
        embedder: Embedder,
        capacity: int = 256,
        job_timeout_s: float = 2.0,
        cpu_share: float = 0.5,
        duty_window_s: float = 1.0,
        observe: OutcomeObserver | None = None,
    ) -> None:
        if capacity < 1 or job_timeout_s <= 0:
            raise ValueError("capacity must be >= 1 and job_timeout_s > 0")
        self._embedder = embedder
        self._capacity = capacity
        self._job_timeout_s = job_timeout_s
        self._budget = CpuBudget(cpu_share, duty_window_s)
        self._observe = observe
        self._jobs: deque[_Job] = deque()
        self._changed = threading.Condition()
        self._busy = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._submitted = 0
        self._outcomes = dict.fromkeys(JobOutcome, 0)
        self._cpu_seconds = 0.0
        self._throttled_seconds = 0.0

    @property
    def capacity(self) -> int:
        return self._capacity

    def start(self) -> None:
        with self._changed:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="critic-embed", daemon=True)
                self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Lets the running job finish (or reach its cap); jobs still waiting end as DROPPED."""
        with self._changed:
            self._stopping = True
            left = list(self._jobs)
            self._jobs.clear()
            self._changed.notify_all()
            thread = self._thread
        for job in left:
            self._finish(job, (), JobOutcome.DROPPED)
        if thread is not None:
            thread.join(timeout_s)

    def submit(self, key: str, text: str, on_done: ResultCallback | None = None) -> bool:
        """Queues ``text``; False when the queue has stopped (the job ends DROPPED at once)."""
        now = time.monotonic()
        job = _Job(key, text, on_done, now, now + self._job_timeout_s)
        pushed_out: _Job | None = None
        with self._changed:
            self._submitted += 1
            accepted = not self._stopping
            if accepted:
                if len(self._jobs) >= self._capacity:
                    pushed_out = self._jobs.popleft()
                self._jobs.append(job)
                self._changed.notify_all()
        if pushed_out is not None:
            self._finish(pushed_out, (), JobOutcome.DROPPED)
        if not accepted:
            self._finish(job, (), JobOutcome.DROPPED)
        return accepted

    def wait_idle(self, timeout_s: float) -> bool:
        """True once nothing waits and nothing runs (for tests, benchmarks and an orderly stop)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._jobs and not self._busy, timeout_s)

    def stats(self) -> QueueStats:
        with self._changed:
            return QueueStats(
                submitted=self._submitted,
                outcomes=dict(self._outcomes),
                depth=len(self._jobs),
                cpu_seconds=self._cpu_seconds,
                throttled_seconds=self._throttled_seconds,
            )

    def _work(self) -> None:
        while True:
            job = self._next_job()
            if job is None:
                return
            try:
                vector, outcome = self._run(job)
            except Exception:  # an embedder's own bug must not end the worker
                log.exception("critic: embedding job %s failed", job.key)
                vector, outcome = (), JobOutcome.FAILED
            self._finish(job, vector, outcome)
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def _next_job(self) -> _Job | None:
        self._hold_duty_cap()
        with self._changed:
            self._changed.wait_for(lambda: bool(self._jobs) or self._stopping)
            if self._stopping:
                return None
            self._busy = True
            return self._jobs.popleft()

    def _hold_duty_cap(self) -> None:
        pause = self._budget.wait_before_next(time.monotonic())
        if pause <= 0:
            return
        with self._changed:
            self._changed.wait_for(lambda: self._stopping, pause)
            self._throttled_seconds += pause

    def _run(self, job: _Job) -> tuple[tuple[float, ...], JobOutcome]:
        if not self._embedder.available:  # the first call loads the model, here off the hot path
            return (), JobOutcome.UNAVAILABLE
        left = job.deadline - time.monotonic()
        if left <= 0:
            return (), JobOutcome.TIMED_OUT
        cpu_before = time.thread_time()
        try:
            if isinstance(self._embedder, TimeLimitedEmbedder):
                vectors = self._embedder.embed_within([job.text], left)
            else:
                vectors = self._embedder.embed([job.text])
        finally:
            cpu = time.thread_time() - cpu_before
            self._budget.charge(cpu, time.monotonic())
            with self._changed:
                self._cpu_seconds += cpu
        if vectors and vectors[0]:
            return vectors[0], JobOutcome.EMBEDDED
        # A timer may fire a hair before the clock reads the deadline.
        timed_out = time.monotonic() >= job.deadline - _TIMER_SLACK_S
        return (), JobOutcome.TIMED_OUT if timed_out else JobOutcome.FAILED

    def _finish(self, job: _Job, vector: tuple[float, ...], outcome: JobOutcome) -> None:
        latency = time.monotonic() - job.enqueued
        with self._changed:
            self._outcomes[outcome] += 1
        for call in (self._observe_outcome, job.on_done):
            if call is None:
                continue
            try:
                call(EmbeddingResult(job.key, vector, outcome, latency))
            except Exception:  # a caller's callback must not end the worker
                log.exception("critic: the callback for embedding job %s failed", job.key)

    def _observe_outcome(self, result: EmbeddingResult) -> None:
        if self._observe is not None:
            self._observe(result.outcome, result.latency_s)
