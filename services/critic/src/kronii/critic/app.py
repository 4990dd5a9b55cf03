"""The critic as a service, its composition root: it builds the tiered memory (RAM ring, day files,
PostgreSQL with pgvector), the embedder and its background queue, the shells' spool and hint box,
the use cases and their facade (usecases.operations.CriticOperations), and the API; it starts the
spool follower, the nightly upkeep and the sweep of ended shells, and stops them. The rules are in
core/, the use cases in usecases/."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from pathlib import Path

import grpc
from fastapi import APIRouter
from kronii.critic.adapters.context_key import context_key
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.embedder import MiniLmEmbedder
from kronii.critic.adapters.embedding_queue import EmbeddingQueue
from kronii.critic.adapters.indexed_long_tier import IndexedLongTier
from kronii.critic.adapters.pane_errors import PaneErrors
from kronii.critic.adapters.path_commands import PathCommands
from kronii.critic.adapters.pipeline_notices import PipelineNotices
from kronii.critic.adapters.policy_file import PolicyFile, mute_state_path
from kronii.critic.adapters.prompt_hints import PromptHints
from kronii.critic.adapters.runtime_places import RuntimePlaces
from kronii.critic.adapters.shell_init import critic_runtime_dir, prepare_runtime_dir
from kronii.critic.adapters.spool import HintBox, SpoolReader
from kronii.critic.adapters.supervisor_offers import SupervisorOffers
from kronii.critic.adapters.tiered_memory import TieredMemory
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.api.grpc_api import CriticServicer
from kronii.critic.api.http_api import critic_router
from kronii.critic.core.doctor import HookTally
from kronii.critic.core.knn_plan import KnnTuning
from kronii.critic.core.memory import MemoryOptions
from kronii.critic.metrics import CriticMetrics, zero_common_series
from kronii.critic.settings import CriticSettings
from kronii.critic.usecases.doctor import Doctor
from kronii.critic.usecases.export_records import ExportRecords
from kronii.critic.usecases.find_similar import FindSimilar
from kronii.critic.usecases.follow_spool import FollowSpool
from kronii.critic.usecases.list_clusters import ListClusters
from kronii.critic.usecases.mute_hints import MuteHints
from kronii.critic.usecases.nightly_upkeep import NightlyUpkeep
from kronii.critic.usecases.operations import CriticOperations
from kronii.critic.usecases.record_command import RecordCommand
from kronii.critic.usecases.search_records import SearchRecords, TimedKnn
from kronii.critic.usecases.sweep_gone_shells import SweepGoneShells
from kronii.critic.usecases.watch_embeddings import EmbeddingWatch
from kronii.critic.v1 import critic_pb2 as pb
from kronii.critic.v1 import critic_pb2_grpc as pb_grpc
from kronii.foundation.clock import SystemClock
from kronii.foundation.errors import Unavailable
from kronii.redaction import RedactionContext, shared_engine
from kronii.runtime.service import DependencyStatus, ServiceContext

__all__ = ["CriticApp"]


def _facade(
    record: RecordCommand,
    memory: TieredMemory,
    embedder: MiniLmEmbedder,
    watch: EmbeddingWatch,
    hooks: HookTally,
    runtime: Path,
    metrics: CriticMetrics,
    policy: PolicyFile,
    clock: SystemClock,
) -> CriticOperations:
    """The use cases the API calls, behind their facade."""
    doctor = Doctor(
        memory=memory, hooks=hooks, places=RuntimePlaces(runtime), model=embedder, embeddings=watch,
        redactions=metrics, policy=policy,
    )  # fmt: skip
    knn = TimedKnn(memory, clock, metrics.knn_seconds)
    return CriticOperations(
        record=record,
        search=SearchRecords(memory, embedder, knn, clock),
        similar=FindSimilar(memory, embedder, knn, clock),
        export=ExportRecords(memory.exports),
        doctor=doctor,
        mute=MuteHints(policy, clock),
        clusters=ListClusters(memory.upkeep),
    )


def _long_tier(
    ctx: ServiceContext, settings: CriticSettings
) -> tuple[IndexedLongTier | PgVectorStore | None, IndexedLongTier | None]:
    """PostgreSQL's table (none without a database), searched in process unless that is off."""
    if ctx.engine is None:
        return None, None
    tuning = KnnTuning(ef_search=settings.knn_ef_search, exact_below=settings.knn_exact_below)
    store = PgVectorStore(ctx.engine, tuning)
    if not settings.knn_in_process:
        return store, None
    indexed = IndexedLongTier(store, candidates=settings.knn_candidates)
    return indexed, indexed


class CriticApp:
    def __init__(self) -> None:
        self._operations: CriticOperations | None = None
        self._memory: TieredMemory | None = None
        self._embedder: MiniLmEmbedder | None = None
        self._queue: EmbeddingQueue | None = None
        self._reader: SpoolReader | None = None
        self._hints: HintBox | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._indexed: IndexedLongTier | None = None
        self._started = False

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, CriticSettings)
        clock = SystemClock()
        metrics = CriticMetrics(ctx.registry)
        zero_common_series(ctx.metrics)
        data = Path(settings.data_dir)
        policy = PolicyFile(mute_state_path(data))
        long_tier, indexed = _long_tier(ctx, settings)
        self._indexed, self._started = indexed, True
        options = MemoryOptions(ring_size=settings.ring_size, retention_days=policy.current().retention_days)
        memory = TieredMemory(DailyFiles(data / "critic"), long_tier, options, clock=clock.wall_ms)
        await memory.start()
        self._memory = memory
        embedder = MiniLmEmbedder(low_memory=settings.embed_low_memory)
        self._embedder = embedder
        metrics.model_available.set(1 if await asyncio.to_thread(embedder.load) else 0)
        watch = EmbeddingWatch(metrics)
        queue = EmbeddingQueue(
            embedder,
            capacity=settings.embed_queue_size,
            job_timeout_s=settings.embed_job_timeout_secs,
            cpu_share=settings.embed_cpu_share,
            observe=watch.observe,
        )
        watch.watch(queue)
        queue.start()
        self._queue = queue
        runtime = critic_runtime_dir(data_dir=data)
        prepare_runtime_dir(runtime)
        self._hints = HintBox(runtime)
        self._hints.start()
        hints = PromptHints(self._hints)
        self._reader = SpoolReader(runtime)
        record = RecordCommand(
            memory=memory,
            hints=hints,
            notifications=PipelineNotices(ctx.bus),
            embeddings=queue,
            policy=policy,
            commands=PathCommands(),
            metrics=metrics,
            clock=clock,
            engine=shared_engine(),
            context=RedactionContext(context_key(data / "critic" / "redaction.key")),
            pane_errors=PaneErrors.from_settings(settings) if settings.pane_error_text else None,
            offers=SupervisorOffers(ctx.bus) if settings.offer_repeated_failures else None,
        )
        hooks = HookTally()
        self._operations = _facade(record, memory, embedder, watch, hooks, runtime, metrics, policy, clock)
        follow = FollowSpool(self._reader, record, hooks, metrics, clock)
        nightly = NightlyUpkeep(memory.upkeep, clock, settings.cluster_hour)
        sweep = SweepGoneShells(hints, settings.gone_sweep_secs)
        self._tasks = [
            *([asyncio.create_task(indexed.keep_loaded(), name="critic-knn-index")] if indexed else []),
            asyncio.create_task(follow.run(), name="critic-spool"),
            asyncio.create_task(nightly.run(), name="critic-nightly"),
            asyncio.create_task(sweep.run(), name="critic-sweep"),
        ]

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
        if self._operations is None:
            raise Unavailable("the critic is starting")
        return self._operations

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
            "similar_search": _similar_search(self._indexed)
            if self._started
            else DependencyStatus(False, "starting", required=False),
        }


def _similar_search(indexed: IndexedLongTier | None) -> DependencyStatus:
    """Where similar records are searched: in the critic's process once its index is loaded; in
    PostgreSQL while it loads, or when KRONII_CRITIC_KNN_IN_PROCESS is false."""
    if indexed is None:
        return DependencyStatus(True, "in PostgreSQL (KRONII_CRITIC_KNN_IN_PROCESS=false)", required=False)
    index = indexed.index
    if index is None:
        return DependencyStatus(
            False, "the in-process index is loading: PostgreSQL answers meanwhile", required=False
        )
    took = f" in {indexed.load_seconds:.1f} s" if indexed.load_seconds is not None else ""
    return DependencyStatus(True, f"in process: {len(index)} records, loaded{took}", required=False)
