"""One capture, once its window is focused: burst, score, redact the primary, seal and store.

Each stage reports its event on the board; a job cancelled meanwhile stops at the next stage and
stores nothing after redaction.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from kronii.capture.core.bypass import WindowFacts
from kronii.capture.core.frames import Frame
from kronii.capture.core.retention import expires_at_ms
from kronii.capture.core.scoring import Scored
from kronii.capture.core.status import JobEvent
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import BurstWork, CaptureUnavailable, FrameSource, ObjectStore, WindowGone
from kronii.capture.settings import CaptureSettings
from kronii.capture.usecases.track_jobs import JobBoard
from kronii.foundation.clock import Clock
from kronii.redaction.pixels import ImageRedaction

__all__ = ["RunCapture"]

log = logging.getLogger(__name__)


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


@dataclass(frozen=True)
class _Burst:
    job_id: str
    facts: WindowFacts
    frames: list[Frame]


class RunCapture:
    def __init__(
        self,
        board: JobBoard,
        frames: FrameSource | None,
        work: BurstWork,
        store: ObjectStore,
        settings: CaptureSettings,
        metrics: CaptureMetrics,
        clock: Clock,
        *,
        display_problem: str = "",
    ) -> None:
        self._board = board
        self._frames = frames
        self._work = work
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._clock = clock
        self._display_problem = display_problem

    async def run(self, job_id: str, facts: WindowFacts) -> None:
        """Capture the job; whatever goes wrong ends it in ERROR with a sentence."""
        try:
            await self._capture(job_id, facts)
        except (WindowGone, CaptureUnavailable) as error:
            await self._board.transition(job_id, JobEvent.ERROR, str(error))
        except Exception as error:
            log.exception("capture job %s failed", job_id)
            await self._board.transition(job_id, JobEvent.ERROR, f"internal error: {type(error).__name__}")

    async def _capture(self, job_id: str, facts: WindowFacts) -> None:
        burst = await self._burst(job_id, facts)
        if burst is None:
            return
        started = time.perf_counter()
        scored = await asyncio.to_thread(
            self._work.score, burst.frames, wm_class=facts.wm_class, title=facts.title
        )
        self._metrics.stage_seconds.labels("scoring").observe(time.perf_counter() - started)
        self._metrics.ocr_frames.inc(scored.ocr_calls)
        # A burst whose one readable frame was not read for its score is scored from the
        # redaction's reading of that frame: one Tesseract pass for the job, not two.
        if not scored.text_deferred and not await self._scored(job_id, scored):
            return
        started = time.perf_counter()
        primary = burst.frames[scored.primary.index]
        redaction = await asyncio.to_thread(self._work.redact, primary, app=facts.app_name)
        self._metrics.stage_seconds.labels("redaction").observe(time.perf_counter() - started)
        if scored.text_deferred:
            scored = scored.with_primary_text(redaction.text_coverage)
            if not await self._scored(job_id, scored):
                return
        if redaction.image is None:
            await self._board.transition(
                job_id,
                JobEvent.REDACTION_REFUSED,
                f"redaction refused the frame: {redaction.reason}",
                redaction_level="red",
                masked_fraction=round(redaction.masked_share, 4),
            )
            return
        if self._board.live(job_id) is None:  # cancelled while redacting: store nothing
            return
        await self._seal(burst, scored, redaction)

    async def _scored(self, job_id: str, scored: Scored) -> bool:
        """The job's SCORED step with its primary score; False when the job ended meanwhile."""
        primary_score = round(scored.primary.total, 4)
        return await self._board.transition(job_id, JobEvent.SCORED, primary_score=primary_score) is not None

    async def _burst(self, job_id: str, facts: WindowFacts) -> _Burst | None:
        """The frames of the focused window, or None when the job ended (no display, cancelled)."""
        if self._frames is None:
            await self._board.transition(job_id, JobEvent.ERROR, self._display_problem or "no display")
            return None
        record = await self._board.transition(
            job_id,
            JobEvent.MATCHED,
            captured_pid=facts.pid,
            captured_app_name=facts.app_name,
            captured_window_id=facts.window_id,
        )
        if record is None:
            return None
        spec = record.spec
        started = time.perf_counter()
        region = await asyncio.to_thread(self._frames.geometry, facts.window_id)
        frames = await asyncio.to_thread(
            self._frames.burst, region, spec.burst_count, spec.burst_interval_ms, facts.window_id
        )
        self._metrics.stage_seconds.labels("burst").observe(time.perf_counter() - started)
        if (
            await self._board.transition(job_id, JobEvent.FRAMES_CAPTURED, frames_captured=len(frames))
            is None
        ):
            return None
        return _Burst(job_id, facts, frames)

    async def _seal(self, burst: _Burst, scored: Scored, redaction: ImageRedaction) -> None:
        assert redaction.image is not None
        settings = self._settings
        started = time.perf_counter()
        created = self._clock.wall_ms()
        ordered = [burst.frames[score.index] for score in scored.ranked]
        raw_ids = await self._store_raw(burst.job_id, ordered, scored.primary.total, created)
        redacted_png = await asyncio.to_thread(self._work.redacted_png, redaction.image)
        primary_id = await self._store.put(
            job_id=burst.job_id,
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
        self._metrics.stage_seconds.labels("sealing").observe(time.perf_counter() - started)
        await self._board.transition(
            burst.job_id,
            JobEvent.REDACTED_OK,
            primary_screenshot_id=primary_id,
            raw_ids=tuple(raw_ids),
            redaction_level=redaction.level.value,
            masked_fraction=round(redaction.masked_share, 4),
        )

    async def _store_raw(self, job_id: str, frames: list[Frame], score: float, created: int) -> list[str]:
        settings = self._settings
        expires = expires_at_ms(
            "raw", created, raw_days=settings.raw_days, redacted_days=settings.redacted_days
        )
        if expires is None:  # raw_days 0: no original is kept at all
            return []
        ids = []
        for frame in frames:
            png = await asyncio.to_thread(self._work.raw_png, frame)
            ids.append(
                await self._store.put(
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
