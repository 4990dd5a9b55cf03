"""The critic as a service: it wires the tiered memory (RAM ring, day files, PostgreSQL with
pgvector), the embedder and its background queue, the intake, the shells' spool and hint box, and
the API at start; the rules are in core/, the use cases in intake, memory, embedding_queue and desk."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

import grpc
from fastapi import APIRouter
from kronii.common.errors import Unavailable
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.critic.adapters.context_key import context_key
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.embedder import MODEL_SHA256, MiniLmEmbedder
from kronii.critic.adapters.pane_errors import PaneErrors
from kronii.critic.adapters.path_commands import PathCommands
from kronii.critic.adapters.pipeline_notices import PipelineNotices
from kronii.critic.adapters.policy_file import PolicyFile, mute_state_path
from kronii.critic.adapters.shell_init import SPOOL_NAME, critic_runtime_dir, prepare_runtime_dir
from kronii.critic.adapters.spool import HintBox, SpoolReader
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.api.grpc_api import CriticServicer
from kronii.critic.api.http_api import critic_router
from kronii.critic.core.model import InvocationEvent
from kronii.critic.desk import CriticDesk, DeskParts
from kronii.critic.embedding_queue import EmbeddingQueue, JobOutcome
from kronii.critic.intake import Intake
from kronii.critic.memory import MemoryOptions, TieredMemory
from kronii.critic.metrics import CriticMetrics, zero_common_series
from kronii.critic.ports import CriticOperations, EmbeddingQueueState, HookSeen, ModelState, PlaceState
from kronii.critic.settings import CriticSettings
from kronii.critic.v1 import critic_pb2 as pb
from kronii.critic.v1 import critic_pb2_grpc as pb_grpc
from kronii.redaction import RedactionContext, RedactionEngine

__all__ = ["CriticApp"]

log = logging.getLogger(__name__)


class _Clock:
    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def monotonic(self) -> float:
        return time.monotonic()


class _Hints:
    """ports.HintSink over the HintBox (a write to a FIFO held open: it never blocks)."""

    def __init__(self, box: HintBox) -> None:
        self._box = box

    async def send(self, session: str, line: str) -> None:
        self._box.send(session, line)


def _policy_problem(policy: PolicyFile) -> str | None:
    """What is wrong with critic.toml now (read again if it changed), None when nothing is."""
    policy.current()
    return policy.problem


class CriticApp:
    def __init__(self) -> None:
        self._desk: CriticDesk | None = None
        self._memory: TieredMemory | None = None
        self._queue: EmbeddingQueue | None = None
        self._embedder: MiniLmEmbedder | None = None
        self._reader: SpoolReader | None = None
        self._hints: HintBox | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._hooks: dict[str, HookSeen] = {}
        self._latencies: list[float] = []
        self._capacity = 0

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, CriticSettings)
        metrics = CriticMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        data = Path(settings.data_dir)
        policy = PolicyFile(mute_state_path(data))
        files = DailyFiles(data / "critic")
        long_tier = PgVectorStore(ctx.engine) if ctx.engine is not None else None
        options = MemoryOptions(ring_size=settings.ring_size, retention_days=policy.current().retention_days)
        memory = TieredMemory(files, long_tier, options)
        await memory.start()
        self._memory = memory
        embedder = MiniLmEmbedder(low_memory=settings.embed_low_memory)
        self._embedder = embedder
        metrics.model_available.set(1 if await asyncio.to_thread(embedder.load) else 0)
        queue = EmbeddingQueue(
            embedder,
            capacity=settings.embed_queue_size,
            job_timeout_s=settings.embed_job_timeout_secs,
            cpu_share=settings.embed_cpu_share,
            observe=lambda outcome, seconds: self._observe(metrics, outcome, seconds),
        )
        queue.start()
        self._queue, self._capacity = queue, settings.embed_queue_size
        runtime = critic_runtime_dir(data_dir=data)
        prepare_runtime_dir(runtime)
        self._hints = HintBox(runtime)
        self._hints.start()
        self._reader = SpoolReader(runtime)
        intake = Intake(
            memory=memory,
            hints=_Hints(self._hints),
            notifications=PipelineNotices(ctx.bus),
            embeddings=queue,
            policy=policy,
            commands=PathCommands(),
            metrics=metrics,
            clock=_Clock(),
            engine=RedactionEngine(),
            context=RedactionContext(context_key(data / "critic" / "redaction.key")),
            pane_errors=PaneErrors.from_settings(settings) if settings.pane_error_text else None,
        )
        self._desk = CriticDesk(
            intake,
            memory,
            embedder,
            self._parts(metrics, policy, runtime),
            observe_knn=lambda tier, seconds: metrics.knn.labels(tier).observe(seconds),
        )
        self._tasks = [
            asyncio.create_task(self._read_spool(intake, metrics), name="critic-spool"),
            asyncio.create_task(self._nightly(memory, settings.cluster_hour), name="critic-nightly"),
            asyncio.create_task(
                self._sweep_gone_shells(self._hints, settings.gone_sweep_secs), name="critic-sweep"
            ),
        ]

    def _observe(self, metrics: CriticMetrics, outcome: JobOutcome, seconds: float) -> None:
        if outcome is JobOutcome.EMBEDDED:
            metrics.embed_latency.observe(seconds)
            self._latencies = [*self._latencies[-199:], seconds]
        elif outcome in (JobOutcome.DROPPED, JobOutcome.TIMED_OUT):
            metrics.embed_dropped.inc()
        if self._queue is not None:
            metrics.embed_queue.set(self._queue.stats().depth)

    async def _read_spool(self, intake: Intake, metrics: CriticMetrics) -> None:
        assert self._reader is not None
        malformed = 0
        async for event in self._reader.events():
            self._seen(event)
            try:
                await intake.report(event)
            except Exception:  # one bad event must not stop the shells' hints
                log.exception("critic: a command from %s could not be taken", event.shell)
            if self._reader.malformed > malformed:
                metrics.spool_malformed.inc(self._reader.malformed - malformed)
                malformed = self._reader.malformed

    def _seen(self, event: InvocationEvent) -> None:
        before = self._hooks.get(event.shell, HookSeen(event.shell, 0, 0))
        self._hooks[event.shell] = HookSeen(event.shell, before.events + 1, int(time.time() * 1000))

    @staticmethod
    async def _sweep_gone_shells(hints: HintBox, every_s: float) -> None:
        """Now and every ``every_s`` (KRONII_CRITIC_GONE_SWEEP_SECS, 30 s): the scratch files and hint FIFOs of shells that ended without
        their exit hook (killed, or the person's own EXIT trap replaced the critic's) are removed."""
        while True:
            try:
                gone = await asyncio.to_thread(hints.forget_gone)
                if gone:
                    log.info("critic: removed the files of %d shell(s) that are gone", len(gone))
            except OSError as error:
                log.warning("critic: could not sweep the files of ended shells: %s", error.strerror)
            await asyncio.sleep(every_s)

    @staticmethod
    async def _nightly(memory: TieredMemory, hour: int) -> None:
        while True:
            now = datetime.now()
            at = now.replace(hour=hour, minute=0, second=0, microsecond=0)
            if at <= now:
                at += timedelta(days=1)
            await asyncio.sleep((at - now).total_seconds())
            try:
                clusters, retention = await memory.run_nightly()
                log.info("critic: %d cluster(s) of similar errors; retention %s", len(clusters), retention)
            except Exception:
                log.exception("critic: the nightly clustering and retention failed; it runs again tomorrow")

    def _parts(self, metrics: CriticMetrics, policy: PolicyFile, runtime: Path) -> DeskParts:
        def place(path: Path, kind: str) -> PlaceState:
            ok = path.exists()
            return PlaceState(
                str(path), ok, "" if ok else f"the {kind} is missing: is the critic's runtime dir writable?"
            )

        def model() -> ModelState:
            embedder = self._embedder
            available = embedder is not None and embedder.available
            problem = "" if available or embedder is None else embedder.unavailable_reason
            return ModelState(available, "all-MiniLM-L6-v2 (int8 ONNX)", MODEL_SHA256, problem)

        def queue() -> EmbeddingQueueState:
            stats = self._queue.stats() if self._queue is not None else None
            ordered = sorted(self._latencies)

            def at(share: float) -> float:
                return (
                    round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 2)
                    if ordered
                    else 0.0
                )

            dropped = (
                sum(stats.outcomes.get(kind, 0) for kind in (JobOutcome.DROPPED, JobOutcome.TIMED_OUT))
                if stats
                else 0
            )
            return EmbeddingQueueState(
                stats.depth if stats else 0, self._capacity, dropped, at(0.5), at(0.95)
            )

        def redactions() -> int:
            return int(
                sum(
                    sample.value
                    for family in metrics.redacted.collect()
                    for sample in family.samples
                    if sample.name.endswith("_total")
                )
            )

        return DeskParts(
            hooks=lambda: sorted(self._hooks.values(), key=lambda hook: hook.shell),
            spool=lambda: place(runtime / SPOOL_NAME, "spool"),
            hints=lambda: place(runtime, "hint directory"),
            model=model,
            queue=queue,
            redactions=redactions,
            muted_until=lambda: policy.current().mute_until_ms,
            mute=policy.write_mute,
            policy_problem=lambda: _policy_problem(policy),
        )

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._reader is not None:
            self._reader.close()
        if self._hints is not None:
            self._hints.close()
        if self._queue is not None:
            await asyncio.to_thread(self._queue.stop)
        if self._memory is not None:
            await self._memory.close()

    def operations(self) -> CriticOperations:
        if self._desk is None:
            raise Unavailable("the critic is starting")
        return self._desk

    def routers(self) -> Iterable[APIRouter]:
        return [critic_router(self.operations)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        pb_grpc.add_CriticServicer_to_server(CriticServicer(self.operations), server)
        return [pb.DESCRIPTOR.services_by_name["Critic"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        embedder = self._embedder
        model_ok = embedder is not None and embedder.available
        return {
            "model": DependencyStatus(
                model_ok,
                "sentence embeddings"
                if model_ok
                else (embedder.unavailable_reason if embedder else "starting"),
                required=False,
            ),
            "spool": DependencyStatus(self._reader is not None, "reading the shells' spool", required=False),
        }
