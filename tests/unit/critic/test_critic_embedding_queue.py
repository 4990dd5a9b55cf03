"""The critic's embedding queue (the seed's BackgroundJobQueue): bounded with the oldest dropped and
counted, jobs in order, a per-job time cap (waiting and running), a CPU duty cap measured from the
process's own CPU clock, and exactly one result per job."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

import pytest
from kronii.critic.adapters.embedder import MiniLmEmbedder
from kronii.critic.adapters.embedding_queue import EmbeddingQueue
from kronii.critic.core.embedding_jobs import CpuBudget, EmbeddingResult, JobOutcome


class FakeEmbedder:
    """Gives each text a vector naming it; can hold a call until released, or burn CPU per call."""

    def __init__(self, cpu_per_call_s: float = 0.0, available: bool = True) -> None:
        self.seen: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self._cpu_per_call_s = cpu_per_call_s
        self._available = available

    @property
    def available(self) -> bool:
        return self._available

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        self.seen.extend(texts)
        self.entered.set()
        self.gate.wait(10)
        if self._cpu_per_call_s:
            until = time.thread_time() + self._cpu_per_call_s
            while time.thread_time() < until:
                pass
        return [(float(len(text)),) for text in texts]


class StoppableEmbedder(FakeEmbedder):
    """Honours a time limit the way MiniLmEmbedder does: the run ends at the limit with nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.limits: list[float | None] = []

    def embed_within(self, texts: Sequence[str], seconds: float | None) -> list[tuple[float, ...]]:
        self.limits.append(seconds)
        self.seen.extend(texts)
        time.sleep(seconds if seconds is not None else 0)
        return []


class Results:
    def __init__(self) -> None:
        self.items: list[EmbeddingResult] = []
        self._lock = threading.Lock()

    def __call__(self, result: EmbeddingResult) -> None:
        with self._lock:
            self.items.append(result)

    def by_key(self) -> dict[str, EmbeddingResult]:
        with self._lock:
            return {item.key: item for item in self.items}


@pytest.fixture
def results() -> Results:
    return Results()


@pytest.fixture
def queues() -> Iterator[list[EmbeddingQueue]]:
    made: list[EmbeddingQueue] = []
    yield made
    for queue in made:
        queue.stop()


def started(made: list[EmbeddingQueue], queue: EmbeddingQueue) -> EmbeddingQueue:
    made.append(queue)
    queue.start()
    return queue


def test_jobs_are_embedded_in_the_order_they_were_submitted(
    queues: list[EmbeddingQueue], results: Results
) -> None:
    embedder = FakeEmbedder()
    queue = started(queues, EmbeddingQueue(embedder, capacity=100))
    texts = [f"command {index} " + "x" * index for index in range(30)]
    for index, text in enumerate(texts):
        queue.submit(str(index), text, results)
    assert queue.wait_idle(5)
    assert embedder.seen == texts
    assert [item.key for item in results.items] == [str(index) for index in range(30)]
    assert all(item.outcome is JobOutcome.EMBEDDED for item in results.items)
    assert results.items[7].vector == (float(len(texts[7])),)


def test_a_full_queue_drops_its_oldest_waiting_jobs_and_counts_them(
    queues: list[EmbeddingQueue], results: Results
) -> None:
    embedder = FakeEmbedder()
    embedder.gate.clear()
    queue = started(queues, EmbeddingQueue(embedder, capacity=4))
    queue.submit("running", "held by the worker", results)
    assert embedder.entered.wait(5)
    for index in range(7):
        assert queue.submit(f"w{index}", f"waiting {index}", results)
    dropped_now = [item.key for item in results.items]
    assert dropped_now == ["w0", "w1", "w2"]
    assert queue.stats().depth == 4
    embedder.gate.set()
    assert queue.wait_idle(5)
    stats = queue.stats()
    assert stats.outcomes[JobOutcome.DROPPED] == 3
    assert stats.outcomes[JobOutcome.EMBEDDED] == 5
    assert stats.submitted == 8
    assert embedder.seen == ["held by the worker", "waiting 3", "waiting 4", "waiting 5", "waiting 6"]


def test_a_job_still_waiting_at_its_time_cap_is_not_run(
    queues: list[EmbeddingQueue], results: Results
) -> None:
    embedder = FakeEmbedder()
    embedder.gate.clear()
    queue = started(queues, EmbeddingQueue(embedder, job_timeout_s=0.2))
    queue.submit("first", "holds the worker past the cap", results)
    assert embedder.entered.wait(5)
    queue.submit("stale", "waits too long", results)
    time.sleep(0.3)
    embedder.gate.set()
    assert queue.wait_idle(5)
    outcome = results.by_key()
    assert outcome["stale"].outcome is JobOutcome.TIMED_OUT
    assert outcome["stale"].latency_s >= 0.2
    assert "waits too long" not in embedder.seen


def test_a_running_job_gets_only_the_time_left_and_ends_timed_out(
    queues: list[EmbeddingQueue], results: Results
) -> None:
    embedder = StoppableEmbedder()
    queue = started(queues, EmbeddingQueue(embedder, job_timeout_s=0.15))
    queue.submit("slow", "never finishes in time", results)
    assert queue.wait_idle(5)
    (result,) = results.items
    assert result.outcome is JobOutcome.TIMED_OUT
    assert result.vector == ()
    assert embedder.limits[0] is not None and 0 < embedder.limits[0] <= 0.15
    assert 0.14 <= result.latency_s < 0.5


def test_the_real_model_is_stopped_at_the_time_cap(queues: list[EmbeddingQueue], results: Results) -> None:
    embedder = MiniLmEmbedder()
    assert embedder.available
    long_line = "error: " + " ".join(f"token{index}" for index in range(400))
    began = time.perf_counter()
    assert embedder.embed([long_line])
    full_run_s = time.perf_counter() - began
    queue = started(queues, EmbeddingQueue(embedder, job_timeout_s=full_run_s / 8))
    queue.submit("long", long_line, results)
    assert queue.wait_idle(5)
    (result,) = results.items
    assert result.outcome is JobOutcome.TIMED_OUT
    assert result.latency_s < full_run_s / 2


def test_the_worker_holds_its_cpu_share_measured_on_the_process_clock(queues: list[EmbeddingQueue]) -> None:
    share, window_s, jobs, cpu_per_job_s = 0.25, 0.2, 30, 0.01
    embedder = FakeEmbedder(cpu_per_call_s=cpu_per_job_s)
    queue = EmbeddingQueue(embedder, capacity=jobs, cpu_share=share, duty_window_s=window_s)
    for index in range(jobs):
        queue.submit(str(index), f"line {index}")
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    started(queues, queue)
    assert queue.wait_idle(20)
    cpu, wall = time.process_time() - cpu_before, time.perf_counter() - wall_before
    assert cpu >= jobs * cpu_per_job_s
    # Each window may hold its share plus the one job that crossed the line.
    windows = wall / window_s + 1
    assert cpu <= windows * (share * window_s + cpu_per_job_s) * 1.1
    assert cpu / wall < 0.5  # uncapped, the worker would keep a core busy (1.0)
    assert queue.stats().throttled_seconds > 0


def test_no_window_of_the_duty_cap_holds_more_than_its_share(queues: list[EmbeddingQueue]) -> None:
    share, window_s, jobs, cpu_per_job_s = 0.3, 0.25, 25, 0.01
    spans: list[tuple[float, float, float]] = []  # wall start, wall end, the thread's CPU seconds

    class TimedEmbedder(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
            began, cpu_before = time.perf_counter(), time.thread_time()
            vectors = super().embed(texts)
            spans.append((began, time.perf_counter(), time.thread_time() - cpu_before))
            return vectors

    queue = EmbeddingQueue(
        TimedEmbedder(cpu_per_call_s=cpu_per_job_s), capacity=jobs, cpu_share=share, duty_window_s=window_s
    )
    for index in range(jobs):
        queue.submit(str(index), f"line {index}")
    started(queues, queue)
    assert queue.wait_idle(20)
    assert len(spans) == jobs

    def cpu_within(start: float, end: float) -> float:
        # A job's CPU counted in proportion to the part of its run inside [start, end].
        return sum(
            cpu * max(0.0, min(ended, end) - max(began, start)) / max(ended - began, 1e-9)
            for began, ended, cpu in spans
        )

    # Any window holds its share, plus the job that crossed the line and one reaching in from before.
    worst = max(cpu_within(began, began + window_s) for began, _, _ in spans)
    assert worst <= share * window_s + 2 * cpu_per_job_s
    assert worst >= share * window_s * 0.5  # the windows were used, not left idle


def test_the_cpu_budget_waits_until_enough_of_the_window_has_passed() -> None:
    budget = CpuBudget(share=0.5, window_s=2.0)
    budget.charge(0.6, now=0.0)
    assert budget.wait_before_next(now=0.1) == 0.0
    budget.charge(0.5, now=0.5)
    # 1.1 s used of a 1.0 s allowance: the first charge must leave the window (at 2.0).
    assert budget.wait_before_next(now=0.5) == pytest.approx(1.5)
    assert budget.wait_before_next(now=2.0) == 0.0
    budget.charge(0.6, now=2.0)
    # 0.5 (ended 0.5) + 0.6 (ended 2.0): room again once the 0.5 leaves, at 2.5.
    assert budget.wait_before_next(now=2.1) == pytest.approx(0.4)


def test_without_a_model_every_job_ends_unavailable_and_nothing_runs(
    queues: list[EmbeddingQueue], results: Results
) -> None:
    embedder = FakeEmbedder(available=False)
    queue = started(queues, EmbeddingQueue(embedder))
    for index in range(3):
        queue.submit(str(index), "ls -la", results)
    assert queue.wait_idle(5)
    assert [item.outcome for item in results.items] == [JobOutcome.UNAVAILABLE] * 3
    assert embedder.seen == []


class BrokenOnceEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        if texts[0] == "boom":
            raise RuntimeError("embedder bug")
        return super().embed(texts)


def test_an_embedder_error_fails_that_job_only(queues: list[EmbeddingQueue], results: Results) -> None:
    queue = started(queues, EmbeddingQueue(BrokenOnceEmbedder()))
    for key in ("boom", "after"):
        queue.submit(key, key, results)
    assert queue.wait_idle(5)
    outcome = results.by_key()
    assert outcome["boom"].outcome is JobOutcome.FAILED
    assert outcome["after"].outcome is JobOutcome.EMBEDDED


def test_every_job_ends_in_exactly_one_result_across_stop(results: Results) -> None:
    embedder = FakeEmbedder()
    embedder.gate.clear()
    observed: list[tuple[JobOutcome, float]] = []
    queue = EmbeddingQueue(embedder, observe=lambda outcome, latency: observed.append((outcome, latency)))
    queue.start()
    queue.submit("running", "held", results)
    assert embedder.entered.wait(5)
    queue.submit("waiting", "never run", results)
    releaser = threading.Timer(0.1, embedder.gate.set)
    releaser.start()
    queue.stop()
    assert not queue.submit("late", "after stop", results)
    outcome = results.by_key()
    assert len(results.items) == 3
    assert outcome["running"].outcome is JobOutcome.EMBEDDED
    assert outcome["running"].latency_s >= 0.09
    assert outcome["waiting"].outcome is JobOutcome.DROPPED
    assert outcome["late"].outcome is JobOutcome.DROPPED
    assert sorted(item[0] for item in observed) == sorted(item.outcome for item in results.items)
    assert queue.stats().outcomes[JobOutcome.DROPPED] == 2
