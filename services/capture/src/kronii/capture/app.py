"""The capture service: the job lifecycle around the pure core.

Requests are validated (core.request), merged or rate-limited (core.admission), queued in Redis
(adapters.jobs), picked in priority order, matched against the focused window the sensor reports
(adapters.matcher_feed + core.bypass), captured one job at a time (adapters.frames), scored and
redacted (worker), sealed and stored (adapters.vault). Every status change goes to Redis, PostgreSQL,
NATS (`kronii.capture.status.<job_id>`) and the in-process watchers, in that order.

The API layers (api/) call the operations at the bottom of CaptureApp with an Identity; they check
capabilities and the circuit breaker first (api.guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import grpc
from fastapi import APIRouter
from kronii.capture.adapters.access import AccessPolicy
from kronii.capture.adapters.frames import CaptureUnavailable, Frame, FrameGrabber, WindowGone
from kronii.capture.adapters.jobs import JobStore, StoredJob
from kronii.capture.adapters.matcher_feed import DesktopView, MatcherFeed
from kronii.capture.adapters.polkit import PolkitClient
from kronii.capture.adapters.presence import PresenceGate
from kronii.capture.adapters.sessions import ClientSessions, Identity
from kronii.capture.adapters.socket import FrontDoorError, LocalFrontDoor, socket_path
from kronii.capture.adapters.text_density import ocr_text_density
from kronii.capture.adapters.tokens import TokenBook
from kronii.capture.adapters.vault import ObjectMeta, ObjectNotFound, ObjectVault
from kronii.capture.core.admission import RateLimiter, RateLimits, input_backoff_ms, merge_key
from kronii.capture.core.breaker import CircuitBreaker
from kronii.capture.core.bypass import MatchParams, Readiness, WindowFacts, readiness
from kronii.capture.core.ids import new_id
from kronii.capture.core.request import RequestError, validate_request
from kronii.capture.core.retention import expires_at_ms, keep_raw
from kronii.capture.core.status import (
    InvalidTransition,
    JobEvent,
    JobRecord,
    JobStatus,
    advance,
    expired,
    new_job,
)
from kronii.capture.keys import master_key_provider
from kronii.capture.logpaths import install_path_scrubber
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.settings import CaptureSettings
from kronii.capture.worker import Redactor, encode_png, score_burst
from kronii.common import subjects
from kronii.common.access import AccessRules
from kronii.common.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
)
from kronii.common.service import DependencyStatus, ServiceContext
from kronii.redaction.pixels import png_bytes

__all__ = ["CaptureApp", "StatusUpdate"]

log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


@dataclass(frozen=True)
class StatusUpdate:
    """One entry of a job's history, as watchers receive it (index = position in the history)."""

    index: int
    job: JobRecord


class CaptureApp:
    # Every private route checks an agent session itself; agents sign in through the handshake.
    access_rules = AccessRules(
        self_authenticating=True,
        token_free_http=frozenset({"/v1/capture/challenge", "/v1/capture/authenticate"}),
        token_free_grpc=frozenset(
            {
                "/kronii.capture.v1.ScreenCapture/BeginChallenge",
                "/kronii.capture.v1.ScreenCapture/Authenticate",
            }
        ),
    )

    def __init__(self) -> None:
        self.ctx: ServiceContext | None = None
        self.settings: CaptureSettings | None = None
        self.metrics: CaptureMetrics | None = None
        self.view = DesktopView()
        self.jobs: JobStore | None = None
        self.vault: ObjectVault | None = None
        self.tokens: TokenBook | None = None
        self.clients: ClientSessions | None = None
        self.presence: PresenceGate | None = None
        self.breaker = CircuitBreaker()
        self.front_door: LocalFrontDoor | None = None
        self._feed: MatcherFeed | None = None
        self._grabber: FrameGrabber | None = None
        self._display_problem = ""
        self._redactor: Redactor | None = None
        self._limiter = RateLimiter()
        self._limits = RateLimits()
        self._match = MatchParams()
        # Jobs not yet finished, by id; finished ones are read from the store.
        self._active: dict[str, StoredJob] = {}
        self._watchers: dict[str, set[asyncio.Queue[StatusUpdate]]] = {}
        self._persist_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._running_job = ""

    # ---- ServiceApp --------------------------------------------------------------------------

    async def start(self, ctx: ServiceContext) -> None:
        settings = ctx.settings
        assert isinstance(settings, CaptureSettings)
        install_path_scrubber()
        if ctx.redis is None or ctx.sessions is None:
            raise RuntimeError("the capture service needs Redis and PostgreSQL")
        self.ctx, self.settings = ctx, settings
        self.metrics = CaptureMetrics(ctx)
        self._limits = RateLimits(
            global_per_minute=settings.global_per_minute,
            per_app_per_minute=settings.per_app_per_minute,
            input_backoff_ms=settings.input_backoff_ms,
        )
        self._limiter = RateLimiter(self._limits)
        self._match = MatchParams(app_restart_tolerance_ms=settings.app_restart_tolerance_ms)
        self.breaker = CircuitBreaker(
            settings.breaker_failures,
            int(settings.breaker_window_secs * 1000),
            int(settings.breaker_open_secs * 1000),
        )
        provider = await asyncio.to_thread(
            master_key_provider,
            data_dir=settings.data_dir,
            vault_url=settings.vault_url,
            vault_token=settings.vault_token,
            vault_key_name=settings.vault_key_name,
            use_secret_service=settings.use_secret_service,
        )
        self.vault = ObjectVault(
            settings.store_dir,
            ctx.sessions,
            provider,
            store_raw=keep_raw(settings.raw_days),
            record=ctx.record,
        )
        self.tokens = TokenBook(ctx.redis, settings.token_ttl_secs)
        self.clients = ClientSessions(ctx.redis, ctx.sessions, session_ttl_secs=settings.session_ttl_secs)
        self.presence = PresenceGate(
            ctx.redis,
            PolkitClient(timeout_s=settings.polkit_timeout_secs),
            window_secs=settings.human_window_secs,
            record=ctx.record,
        )
        self.jobs = JobStore(ctx.redis, ctx.sessions)
        self._redactor = Redactor(settings.max_masked_area)
        self._grabber = await self._open_display(settings.display)
        self._feed = MatcherFeed(ctx.bus, ctx.redis, self.view)
        await self._feed.start()
        await self._settle_leftovers()
        if settings.grpc_port:
            self.front_door = LocalFrontDoor(
                socket_path(settings.data_dir, settings.socket_dir),
                (settings.host, settings.grpc_port),
                AccessPolicy.build(settings.allowed_uids, settings.allowed_exes),
                record=ctx.record,
                on_refused=lambda reason: (
                    self.metrics.socket_refused.labels(reason).inc() if self.metrics else None
                ),
            )
            try:
                await self.front_door.start()
            except (FrontDoorError, OSError) as error:
                # Agents can still come in over gRPC with a session; local clients cannot.
                log.error("the local socket is not available: %s", error)
                self.front_door = None
        self._tasks.append(asyncio.create_task(self._schedule(), name="capture-schedule"))
        self._tasks.append(asyncio.create_task(self._purge_loop(), name="capture-purge"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.front_door is not None:
            with contextlib.suppress(Exception):
                await self.front_door.stop()
        if self._feed is not None:
            with contextlib.suppress(Exception):
                await self._feed.stop()

    def routers(self) -> Iterable[APIRouter]:
        from kronii.capture.api.http_api import capture_router

        return [capture_router(self)]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        from kronii.capture.api.grpc_api import CaptureServicer
        from kronii.capture.v1 import capture_pb2 as pb
        from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

        pb_grpc.add_ScreenCaptureServicer_to_server(CaptureServicer(self), server)
        return [pb.DESCRIPTOR.services_by_name["ScreenCapture"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        if self._grabber is None:
            display = DependencyStatus(False, self._display_problem, required=False)
        else:
            display = DependencyStatus(True, self._grabber.display, required=False)
        socket_ok = self.front_door is not None
        return {
            "display": display,
            "local_socket": DependencyStatus(
                socket_ok, "listening" if socket_ok else "not listening", required=False
            ),
            "sensor": DependencyStatus(
                self.view.snapshot_seen,
                "snapshot seen" if self.view.snapshot_seen else "no sensor snapshot yet",
                required=False,
            ),
        }

    @property
    def display_available(self) -> bool:
        return self._grabber is not None

    async def _open_display(self, name: str | None) -> FrameGrabber | None:
        if not name:
            self._display_problem = "no display: DISPLAY is not set; capture requests are refused"
            log.warning("%s", self._display_problem)
            return None
        grabber = FrameGrabber(name)
        try:
            await asyncio.to_thread(grabber.check)
        except CaptureUnavailable as error:
            self._display_problem = f"no display: {error}; capture requests are refused"
            log.warning("%s", self._display_problem)
            return None
        return grabber

    # ---- job state ---------------------------------------------------------------------------

    async def _settle_leftovers(self) -> None:
        """Jobs a previous run left unfinished: waiting ones wait on, the rest failed mid-way."""
        assert self.jobs is not None
        for job_id in await self.jobs.active_ids():
            stored = await self.jobs.load(job_id)
            if stored is None or stored.record.terminal:
                continue
            # The focus counter restarted with this process: a FocusNext job waits for the next switch.
            stored = replace(stored, enqueued_focus_seq=self.view.focus_seq)
            self._active[job_id] = stored
            if stored.record.status not in (JobStatus.QUEUED, JobStatus.WAITING):
                await self._transition(job_id, JobEvent.ERROR, "the service restarted during the capture")

    async def _transition(
        self, job_id: str, event: JobEvent, reason: str = "", **changes: Any
    ) -> JobRecord | None:
        """Apply `event` to the live job; None when the job is gone or already finished (cancelled)."""
        stored = self._active.get(job_id)
        if stored is None:
            return None
        record = replace(stored.record, **changes) if changes else stored.record
        try:
            record = advance(record, event, now_ms(), reason)
        except InvalidTransition as error:
            log.warning("job %s: %s", job_id, error)
            return None
        stored = replace(stored, record=record)
        if record.terminal:
            self._active.pop(job_id, None)
        else:
            self._active[job_id] = stored
        await self._persist(stored)
        return record

    async def _persist(self, stored: StoredJob) -> None:
        ctx, jobs, metrics = self.ctx, self.jobs, self.metrics
        assert ctx is not None and jobs is not None and metrics is not None
        record = stored.record
        # One lock: status changes reach the store, the bus and the watchers in the order they happened.
        async with self._persist_lock:
            try:
                await jobs.save(stored)
            except Exception:
                log.exception("storing job %s failed", record.job_id)
            from kronii.capture.api.convert import status_message

            try:
                await ctx.bus.publish(subjects.capture_status(record.job_id), status_message(record))
            except Exception as error:
                log.warning("publishing the status of job %s failed: %s", record.job_id, error)
            update = StatusUpdate(len(record.history) - 1, record)
            for queue in self._watchers.get(record.job_id, set()):
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(update)
        metrics.queue_depth.set(len(self._active))
        if record.terminal:
            metrics.jobs.labels(record.status.value).inc()
            if record.status is JobStatus.PERSISTED:
                metrics.request_to_persisted.observe(
                    max(0, (record.finished_ms or 0) - record.created_ms) / 1000
                )
            log.info("capture job %s %s %s", record.job_id, record.status.value, record.reason)
            await ctx.record(
                actor=f"requester:{record.spec.requester}",
                action="capture.job",
                subject=record.job_id,
                outcome=record.status.value,
                reason=record.reason,
                redaction_level=record.redaction_level,
                screenshot_id=record.primary_screenshot_id,
                frames=record.frames_captured,
            )

    # ---- scheduler ---------------------------------------------------------------------------

    async def _schedule(self) -> None:
        assert self.settings is not None
        interval = self.settings.matcher_interval_ms / 1000
        last_snapshot = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.view.changed.wait(), interval)
            self.view.changed.clear()
            try:
                await self._expire_due()
                await self._pick_queued()
                # The snapshot holds the idle time (input backoff) and heals a missed focus event.
                if self._waiting() and time.monotonic() - last_snapshot > 0.5 and self._feed is not None:
                    last_snapshot = time.monotonic()
                    await self._feed.refresh_snapshot()
                job_id = self._next_ready()
                if job_id:
                    await self._run_job(job_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the capture scheduler failed a round")

    async def _expire_due(self) -> None:
        moment = now_ms()
        for job_id, stored in list(self._active.items()):
            if expired(stored.record, moment):
                await self._transition(
                    job_id,
                    JobEvent.TTL_ELAPSED,
                    f"the window did not match within {stored.record.spec.ttl_ms} ms",
                )

    async def _pick_queued(self) -> None:
        assert self.jobs is not None
        for job_id in await self.jobs.pop_queued():
            if job_id in self._active and self._active[job_id].record.status is JobStatus.QUEUED:
                await self._transition(job_id, JobEvent.PICKED)

    def _waiting(self) -> list[StoredJob]:
        waiting = [stored for stored in self._active.values() if stored.record.status is JobStatus.WAITING]
        order = {"high": 0, "normal": 1, "low": 2}
        return sorted(waiting, key=lambda s: (order[s.record.spec.priority.value], s.record.created_ms))

    def _next_ready(self) -> str:
        """The best waiting job whose window is focused now, unless the user is typing (backoff)."""
        current = self.view.current
        for stored in self._waiting():
            verdict = readiness(
                stored.record.spec,
                current,
                enqueued_focus_seq=stored.enqueued_focus_seq,
                locked=self.view.locked,
                params=self._match,
            )
            if verdict is Readiness.READY:
                if input_backoff_ms(self.view.last_input_ms, now_ms(), self._limits) > 0:
                    return ""
                return stored.record.job_id
        return ""

    # ---- worker ------------------------------------------------------------------------------

    async def _run_job(self, job_id: str) -> None:
        facts = self.view.current
        assert facts is not None
        self._running_job = job_id
        try:
            await self._capture(job_id, facts)
        except (WindowGone, CaptureUnavailable) as error:
            await self._transition(job_id, JobEvent.ERROR, str(error))
        except Exception as error:
            log.exception("capture job %s failed", job_id)
            await self._transition(job_id, JobEvent.ERROR, f"internal error: {type(error).__name__}")
        finally:
            self._running_job = ""

    async def _capture(self, job_id: str, facts: WindowFacts) -> None:
        settings, metrics, vault, grabber, redactor = (
            self.settings,
            self.metrics,
            self.vault,
            self._grabber,
            self._redactor,
        )
        assert settings is not None and metrics is not None and vault is not None and redactor is not None
        if grabber is None:
            await self._transition(job_id, JobEvent.ERROR, self._display_problem or "no display")
            return
        record = await self._transition(
            job_id,
            JobEvent.MATCHED,
            captured_pid=facts.pid,
            captured_app_name=facts.app_name,
            captured_window_id=facts.window_id,
        )
        if record is None:
            return
        spec = record.spec
        started = time.perf_counter()
        region = await asyncio.to_thread(grabber.geometry, facts.window_id)
        frames = await asyncio.to_thread(grabber.burst, region, spec.burst_count, spec.burst_interval_ms)
        metrics.stage_seconds.labels("burst").observe(time.perf_counter() - started)
        if await self._transition(job_id, JobEvent.FRAMES_CAPTURED, frames_captured=len(frames)) is None:
            return

        started = time.perf_counter()
        scored = await asyncio.to_thread(
            score_burst, frames, wm_class=facts.wm_class, title=facts.title, ocr=ocr_text_density
        )
        metrics.stage_seconds.labels("scoring").observe(time.perf_counter() - started)
        metrics.ocr_frames.inc(scored.ocr_calls)
        primary = frames[scored.primary.index]
        if (
            await self._transition(job_id, JobEvent.SCORED, primary_score=round(scored.primary.total, 4))
            is None
        ):
            return

        started = time.perf_counter()
        redaction = await asyncio.to_thread(redactor.redact, primary, app=facts.app_name)
        metrics.stage_seconds.labels("redaction").observe(time.perf_counter() - started)
        if redaction.image is None:
            await self._transition(
                job_id,
                JobEvent.REDACTION_REFUSED,
                f"redaction refused the frame: {redaction.reason}",
                redaction_level="red",
                masked_fraction=round(redaction.masked_share, 4),
            )
            return
        if job_id not in self._active:  # cancelled while redacting: store nothing
            return

        started = time.perf_counter()
        created = now_ms()
        ordered = [frames[score.index] for score in scored.ranked]
        raw_ids = await self._store_raw(job_id, ordered, scored.primary.total, created)
        redacted_png = await asyncio.to_thread(png_bytes, redaction.image)
        primary_id = await vault.put(
            job_id=job_id,
            kind="redacted",
            png=redacted_png,
            width=redaction.image.width,
            height=redaction.image.height,
            score=scored.primary.total,
            redaction_level=redaction.level.value,
            masked_fraction=redaction.masked_share,
            expires_at=_moment(
                expires_at_ms(
                    "redacted", created, raw_days=settings.raw_days, redacted_days=settings.redacted_days
                )
            ),
        )
        metrics.stage_seconds.labels("sealing").observe(time.perf_counter() - started)
        await self._transition(
            job_id,
            JobEvent.REDACTED_OK,
            primary_screenshot_id=primary_id,
            raw_ids=tuple(raw_ids),
            redaction_level=redaction.level.value,
            masked_fraction=round(redaction.masked_share, 4),
        )

    async def _store_raw(self, job_id: str, frames: list[Frame], score: float, created: int) -> list[str]:
        settings, vault = self.settings, self.vault
        assert settings is not None and vault is not None
        expires = expires_at_ms(
            "raw", created, raw_days=settings.raw_days, redacted_days=settings.redacted_days
        )
        if expires is None:  # raw_days 0: no original is kept at all
            return []
        ids = []
        for frame in frames:
            png = await asyncio.to_thread(encode_png, frame.rgb)
            ids.append(
                await vault.put(
                    job_id=job_id,
                    kind="raw",
                    png=png,
                    width=frame.width,
                    height=frame.height,
                    score=score,
                    expires_at=_moment(expires),
                )
            )
        return ids

    # ---- retention ---------------------------------------------------------------------------

    async def purge_now(self) -> int:
        vault, ctx, metrics = self.vault, self.ctx, self.metrics
        assert vault is not None and ctx is not None and metrics is not None
        report = await vault.purge_expired()
        metrics.purged.labels("raw").inc(report.raw_purged)
        metrics.purged.labels("redacted").inc(report.redacted_purged)
        await ctx.record(
            actor="capture",
            action="capture.purge",
            outcome="ok",
            raw_purged=report.raw_purged,
            redacted_purged=report.redacted_purged,
            files_missing=report.files_missing,
        )
        return report.purged

    async def _purge_loop(self) -> None:
        assert self.settings is not None
        while True:
            try:
                await self.purge_now()
                if self.metrics is not None:
                    self.metrics.purge_runs.labels("ok").inc()
                    self.metrics.last_purge.set(time.time())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the retention purge failed")
                if self.metrics is not None:
                    self.metrics.purge_runs.labels("failed").inc()
            await asyncio.sleep(self.settings.purge_interval_secs)

    # ---- operations (called by api/ after the guard) -------------------------------------------

    async def request_capture(self, identity: Identity, fields: dict[str, Any]) -> tuple[str, bool]:
        """Validate, merge or queue; return (job_id, merged)."""
        jobs, metrics = self.jobs, self.metrics
        assert jobs is not None and metrics is not None
        assert self.settings is not None
        if not fields.get("ttl_ms"):
            # 0 means "the default": this service's, which an operator may have set.
            fields = {**fields, "ttl_ms": self.settings.default_ttl_ms}
        try:
            spec = validate_request(**fields)
        except RequestError as error:
            raise InvalidArgument(str(error), field=error.field) from None
        if self._grabber is None:
            metrics.requests.labels("refused").inc()
            raise Unavailable(self._display_problem or "no display to capture")
        key = merge_key(spec)
        job_id = new_id(12)
        assert self.settings is not None
        holder = await jobs.claim_merge(key, job_id, self.settings.merge_window_ms)
        if holder is not None:
            existing = self._active.get(holder)
            if existing is not None and not existing.record.terminal:
                metrics.requests.labels("merged").inc()
                return holder, True
            await jobs.release_merge(key, holder)
            await jobs.claim_merge(key, job_id, self.settings.merge_window_ms)
        moment = now_ms()
        admission = self._limiter.check(moment, spec.app_name)
        if not admission.allowed:
            await jobs.release_merge(key, job_id)
            metrics.requests.labels("refused").inc()
            raise ResourceExhausted(
                f"rate limit: {admission.reason}; retry in {admission.retry_after_ms} ms",
                retry_after_ms=admission.retry_after_ms,
            )
        self._limiter.record(moment, spec.app_name)
        stored = StoredJob(new_job(job_id, spec, moment, merge_key=key), self.view.focus_seq)
        self._active[job_id] = stored
        await jobs.enqueue(stored)
        metrics.requests.labels("queued").inc()
        metrics.queue_depth.set(len(self._active))
        self._publish_queued(stored)
        self.view.changed.set()
        return job_id, False

    def _publish_queued(self, stored: StoredJob) -> None:
        # enqueue() already saved the record; tell the bus and watchers the job exists.
        async def publish() -> None:
            ctx = self.ctx
            assert ctx is not None
            from kronii.capture.api.convert import status_message

            async with self._persist_lock:
                with contextlib.suppress(Exception):
                    await ctx.bus.publish(
                        subjects.capture_status(stored.record.job_id), status_message(stored.record)
                    )

        task = asyncio.create_task(publish())
        self._tasks.append(task)
        task.add_done_callback(lambda done: self._tasks.remove(done) if done in self._tasks else None)

    async def job(self, job_id: str) -> JobRecord:
        assert self.jobs is not None
        live = self._active.get(job_id)
        if live is not None:
            return live.record
        if not job_id or len(job_id) > 64:
            raise NotFound("no such capture job")
        stored = await self.jobs.load(job_id)
        if stored is None:
            raise NotFound("no such capture job")
        return stored.record

    async def cancel(self, job_id: str, reason: str = "cancelled by the caller") -> JobRecord:
        record = await self.job(job_id)
        if record.terminal:
            return record
        changed = await self._transition(job_id, JobEvent.CANCELLED, reason)
        return changed if changed is not None else await self.job(job_id)

    async def watch(self, job_id: str) -> AsyncIterator[tuple[int, JobRecord]]:
        """Each history entry of the job as (index, record), oldest first, until it ends."""
        queue: asyncio.Queue[StatusUpdate] = asyncio.Queue(maxsize=64)
        self._watchers.setdefault(job_id, set()).add(queue)
        try:
            record = await self.job(job_id)
            sent = 0
            for index in range(len(record.history)):
                yield (index, record)
                sent = index + 1
            if record.terminal:
                return
            while True:
                update = await queue.get()
                if update.index < sent:
                    continue
                for index in range(sent, update.index + 1):
                    yield (index, update.job)
                sent = update.index + 1
                if update.job.terminal:
                    return
        finally:
            watchers = self._watchers.get(job_id)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    self._watchers.pop(job_id, None)

    async def issue_token(self, identity: Identity, screenshot_id: str) -> tuple[str, datetime]:
        vault, tokens = self.vault, self.tokens
        assert vault is not None and tokens is not None
        meta = await self._meta(screenshot_id)
        if meta.kind != "redacted":
            raise NotFound("no such screenshot")
        return await tokens.issue(screenshot_id, identity.actor)

    async def screenshot(self, screenshot_id: str, token: str) -> tuple[bytes, ObjectMeta]:
        """The redacted PNG, once per token. A raw id never opens here, whatever the token."""
        vault, tokens = self.vault, self.tokens
        assert vault is not None and tokens is not None
        if not await tokens.redeem(screenshot_id, token):
            raise PermissionDenied("the token is unknown, used, expired or for another screenshot")
        meta = await self._meta(screenshot_id)
        if meta.kind != "redacted":
            raise NotFound("no such screenshot")
        try:
            png = await vault.open_plain(screenshot_id, "redacted")
        except ObjectNotFound:
            raise NotFound("no such screenshot") from None
        return png, meta

    async def list_meta(self, limit: int) -> list[ObjectMeta]:
        assert self.vault is not None
        if limit < 0:
            raise InvalidArgument("limit must not be negative", field="limit")
        return await self.vault.list_meta(min(limit or 50, 500), kind="redacted")

    async def raw_encrypted(self, screenshot_id: str) -> tuple[bytes, int]:
        assert self.vault is not None and self.settings is not None
        if not self.settings.read_raw_encrypted_enabled:
            raise PermissionDenied("reading raw frames is disabled on this host")
        try:
            return await self.vault.sealed_bytes(screenshot_id, kind="raw")
        except (ObjectNotFound, ValueError):
            raise NotFound("no such raw frame") from None

    async def _meta(self, screenshot_id: str) -> ObjectMeta:
        assert self.vault is not None
        try:
            return await self.vault.meta(screenshot_id)
        except (ObjectNotFound, ValueError):
            raise NotFound("no such screenshot") from None


def spec_fields(
    *,
    process_id: int,
    app_name: str,
    app_start_time_ms: int,
    window_id: int,
    bypass: Any,
    burst_count: int,
    burst_interval_ms: int,
    priority: Any,
    ttl_ms: int,
    requester: str,
) -> dict[str, Any]:
    """The keyword arguments of core.request.validate_request, as the API layers build them."""
    return {
        "process_id": process_id,
        "app_name": app_name,
        "app_start_time_ms": app_start_time_ms,
        "window_id": window_id,
        "bypass": bypass,
        "burst_count": burst_count,
        "burst_interval_ms": burst_interval_ms,
        "priority": priority,
        "ttl_ms": ttl_ms,
        "requester": requester,
    }
