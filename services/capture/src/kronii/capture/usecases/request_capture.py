"""A capture request becomes a job: validated into its spec (core.request), merged into a live twin
or rate-limited (core.admission), then queued on the board."""

from __future__ import annotations

from kronii.capture.core.admission import RateLimiter, RateLimits, merge_key
from kronii.capture.core.commands import CaptureAccepted, CaptureRequest
from kronii.capture.core.identity import Identity
from kronii.capture.core.ids import new_id
from kronii.capture.core.request import RequestError
from kronii.capture.core.status import StoredJob, new_job
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import JobRepository
from kronii.capture.settings import CaptureSettings
from kronii.capture.usecases.follow_desktop import DesktopView
from kronii.capture.usecases.track_jobs import JobBoard
from kronii.foundation.clock import Clock
from kronii.foundation.errors import InvalidArgument, ResourceExhausted, Unavailable

__all__ = ["RequestCapture", "rate_limits"]


def rate_limits(settings: CaptureSettings) -> RateLimits:
    return RateLimits(
        global_per_minute=settings.global_per_minute,
        per_app_per_minute=settings.per_app_per_minute,
        input_backoff_ms=settings.input_backoff_ms,
    )


class RequestCapture:
    def __init__(
        self,
        board: JobBoard,
        jobs: JobRepository,
        settings: CaptureSettings,
        metrics: CaptureMetrics,
        view: DesktopView,
        clock: Clock,
        *,
        display_problem: str | None,
    ) -> None:
        """`display_problem` is None when a display is there to capture, else why there is none."""
        self._board = board
        self._jobs = jobs
        self._settings = settings
        self._metrics = metrics
        self._view = view
        self._clock = clock
        self._display_problem = display_problem
        self._limiter = RateLimiter(rate_limits(settings))

    async def request_capture(self, identity: Identity, request: CaptureRequest) -> CaptureAccepted:
        """Validate, merge or queue."""
        metrics, jobs = self._metrics, self._jobs
        try:
            # A ttl of 0 means "the default": this service's, which an operator may have set.
            spec = request.validated(default_ttl_ms=self._settings.default_ttl_ms)
        except RequestError as error:
            raise InvalidArgument(str(error), field=error.field) from None
        if self._display_problem is not None:
            metrics.requests.labels("refused").inc()
            raise Unavailable(self._display_problem or "no display to capture")
        key = merge_key(spec)
        job_id = new_id(12)
        holder = await jobs.claim_merge(key, job_id, self._settings.merge_window_ms)
        if holder is not None:
            existing = self._board.live(holder)
            if existing is not None and not existing.record.terminal:
                metrics.requests.labels("merged").inc()
                return CaptureAccepted(holder, merged=True)
            await jobs.release_merge(key, holder)
            await jobs.claim_merge(key, job_id, self._settings.merge_window_ms)
        moment = self._clock.wall_ms()
        admission = self._limiter.check(moment, spec.app_name)
        if not admission.allowed:
            await jobs.release_merge(key, job_id)
            metrics.requests.labels("refused").inc()
            raise ResourceExhausted(
                f"rate limit: {admission.reason}; retry in {admission.retry_after_ms} ms",
                retry_after_ms=admission.retry_after_ms,
            )
        self._limiter.record(moment, spec.app_name)
        await self._board.enqueue(
            StoredJob(new_job(job_id, spec, moment, merge_key=key), self._view.focus_seq)
        )
        metrics.requests.labels("queued").inc()
        self._view.poke()
        return CaptureAccepted(job_id, merged=False)
