"""A capture request becomes a job: validated (core.request), merged into a live twin or rate-limited
(core.admission), then queued in the store and announced."""

from __future__ import annotations

from typing import Any

from kronii.capture.adapters.matcher_feed import DesktopView
from kronii.capture.core.admission import RateLimiter, RateLimits, merge_key
from kronii.capture.core.identity import Identity
from kronii.capture.core.ids import new_id
from kronii.capture.core.request import RequestError, validate_request
from kronii.capture.core.status import StoredJob, new_job
from kronii.capture.job_board import JobBoard
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import Clock
from kronii.capture.settings import CaptureSettings
from kronii.common.errors import InvalidArgument, ResourceExhausted, Unavailable

__all__ = ["JobIntake", "rate_limits"]


def rate_limits(settings: CaptureSettings) -> RateLimits:
    return RateLimits(
        global_per_minute=settings.global_per_minute,
        per_app_per_minute=settings.per_app_per_minute,
        input_backoff_ms=settings.input_backoff_ms,
    )


class JobIntake:
    def __init__(
        self,
        board: JobBoard,
        settings: CaptureSettings,
        metrics: CaptureMetrics,
        view: DesktopView,
        clock: Clock,
        *,
        display_problem: str | None,
    ) -> None:
        """`display_problem` is None when a display is there to capture, else why there is none."""
        self._board = board
        self._settings = settings
        self._metrics = metrics
        self._view = view
        self._clock = clock
        self._display_problem = display_problem
        self._limiter = RateLimiter(rate_limits(settings))

    async def request_capture(self, identity: Identity, fields: dict[str, Any]) -> tuple[str, bool]:
        """Validate, merge or queue; return (job_id, merged)."""
        metrics, store = self._metrics, self._board.store
        if not fields.get("ttl_ms"):
            # 0 means "the default": this service's, which an operator may have set.
            fields = {**fields, "ttl_ms": self._settings.default_ttl_ms}
        try:
            spec = validate_request(**fields)
        except RequestError as error:
            raise InvalidArgument(str(error), field=error.field) from None
        if self._display_problem is not None:
            metrics.requests.labels("refused").inc()
            raise Unavailable(self._display_problem or "no display to capture")
        key = merge_key(spec)
        job_id = new_id(12)
        holder = await store.claim_merge(key, job_id, self._settings.merge_window_ms)
        if holder is not None:
            existing = self._board.active.get(holder)
            if existing is not None and not existing.record.terminal:
                metrics.requests.labels("merged").inc()
                return holder, True
            await store.release_merge(key, holder)
            await store.claim_merge(key, job_id, self._settings.merge_window_ms)
        moment = self._clock()
        admission = self._limiter.check(moment, spec.app_name)
        if not admission.allowed:
            await store.release_merge(key, job_id)
            metrics.requests.labels("refused").inc()
            raise ResourceExhausted(
                f"rate limit: {admission.reason}; retry in {admission.retry_after_ms} ms",
                retry_after_ms=admission.retry_after_ms,
            )
        self._limiter.record(moment, spec.app_name)
        stored = StoredJob(new_job(job_id, spec, moment, merge_key=key), self._view.focus_seq)
        self._board.active[job_id] = stored
        await store.enqueue(stored)
        metrics.requests.labels("queued").inc()
        metrics.queue_depth.set(len(self._board.active))
        self._board.announce_queued(stored)
        self._view.changed.set()
        return job_id, False
