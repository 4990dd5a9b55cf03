"""The job use case in process: request -> scheduler rounds -> capture -> status -> screenshot read once,
driven through the use cases (request_capture, track_jobs, schedule_jobs, run_capture, serve_screenshots) with fakes
of the store, the display, the burst work, the vault, the tokens and the bus, and a clock the test moves."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import pytest
from kronii.capture.adapters.status_bus import StatusPublisher
from kronii.capture.core.bypass import MatchParams
from kronii.capture.core.capabilities import Capability
from kronii.capture.core.commands import CaptureRequest
from kronii.capture.core.identity import Identity
from kronii.capture.core.status import JobEvent, JobStatus
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.settings import CaptureSettings
from kronii.capture.usecases.follow_desktop import DesktopView, FollowDesktop
from kronii.capture.usecases.request_capture import RequestCapture, rate_limits
from kronii.capture.usecases.run_capture import RunCapture
from kronii.capture.usecases.schedule_jobs import JobScheduler
from kronii.capture.usecases.serve_screenshots import ScreenshotDesk
from kronii.capture.usecases.track_jobs import JobBoard
from kronii.capture.v1 import capture_pb2 as pb
from kronii.foundation.errors import NotFound, PermissionDenied, ResourceExhausted, Unavailable
from kronii.stores.bus import Bus

from tests.unit.capture import capture_fakes as fakes

CALLER = Identity("agent", "agent-1", None, None, "", Capability.REQUEST_CAPTURE | Capability.READ_REDACTED)


@dataclass
class Rig:
    clock: fakes.Clock
    view: DesktopView
    store: fakes.JobStore
    bus: fakes.Bus
    frames: fakes.Frames
    work: fakes.Work
    vault: fakes.Vault
    audit: fakes.Audit
    metrics: CaptureMetrics
    board: JobBoard
    intake: RequestCapture
    scheduler: JobScheduler
    screenshots: ScreenshotDesk
    desktop: FollowDesktop

    async def request(self, **fields: Any) -> tuple[str, bool]:
        values = {
            "process_id": fakes.TARGET.pid, "app_name": fakes.TARGET.app_name, "app_start_time_ms": 0,
            "window_id": fakes.TARGET.window_id, "bypass": 0, "burst_count": 3, "burst_interval_ms": 300,
            "priority": 0, "ttl_ms": 0, "requester": "tests", **fields,
        }  # fmt: skip
        accepted = await self.intake.request_capture(CALLER, CaptureRequest(**values))
        return accepted.job_id, accepted.merged

    def statuses(self, job_id: str) -> list[int]:
        return [
            message.status
            for subject, message in self.bus.published
            if subject.endswith(f".{job_id}") and isinstance(message, pb.CaptureStatus)
        ]


def rig(*, work: fakes.Work | None = None, display: bool = True, **changes: Any) -> Rig:
    settings: CaptureSettings = fakes.settings(**changes)
    clock, view, store, bus = fakes.Clock(), DesktopView(), fakes.JobStore(), fakes.Bus()
    frames, work, vault, audit = fakes.Frames(), work or fakes.Work(), fakes.Vault(), fakes.Audit()
    metrics = fakes.metrics()
    board = JobBoard(store, StatusPublisher(cast(Bus, bus)), metrics, audit, view, clock)
    problem = None if display else "no display: DISPLAY is not set; capture requests are refused"
    intake = RequestCapture(board, store, settings, metrics, view, clock, display_problem=problem)
    run = RunCapture(board, frames if display else None, work, vault, settings, metrics, clock)
    desktop = FollowDesktop(view, fakes.Snapshots())
    scheduler = JobScheduler(
        board, run, view, desktop, clock,
        limits=rate_limits(settings), match=MatchParams(), interval_ms=settings.matcher_interval_ms,
    )  # fmt: skip
    screenshots = ScreenshotDesk(vault, fakes.Tokens(), settings, metrics, audit, clock)
    return Rig(
        clock, view, store, bus, frames, work, vault, audit, metrics, board, intake, scheduler, screenshots,
        desktop,
    )  # fmt: skip


async def settle() -> None:
    """Let the queued job's announcement (a task of its own) reach the bus."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_a_request_is_captured_once_its_window_is_focused_and_its_screenshot_reads_once() -> None:
    r = rig()
    job_id, merged = await r.request()
    await settle()
    assert not merged
    assert (await r.board.job(job_id)).status is JobStatus.QUEUED

    await r.scheduler.round()  # picked; nothing focused yet
    assert (await r.board.job(job_id)).status is JobStatus.WAITING
    fakes.focus(r.view)
    r.clock.advance(5_000)  # past the input backoff
    await r.scheduler.round()

    record = await r.board.job(job_id)
    assert record.status is JobStatus.PERSISTED
    assert record.captured_window_id == fakes.TARGET.window_id
    assert record.frames_captured == 3 and r.frames.bursts == [((0, 0, 8, 6), 3, 300)]
    assert record.redaction_level == "green" and record.primary_score == 0.9
    assert r.statuses(job_id) == [pb.QUEUED, pb.WAITING, pb.CAPTURING, pb.SCORING, pb.REDACTING, pb.PERSISTED]
    raw_kinds = [r.vault.objects[object_id].meta.kind for object_id in record.raw_ids]
    assert raw_kinds == ["raw", "raw", "raw"]
    # The raw frames are stored best first: the fake scores the last frame of the burst best.
    assert [r.vault.objects[object_id].png for object_id in record.raw_ids] == [
        b"raw-png:P",
        b"raw-png:(",
        b"raw-png:\x00",
    ]
    assert r.audit.rows[-1]["action"] == "capture.job" and r.audit.rows[-1]["outcome"] == "persisted"

    token, _ = await r.screenshots.issue_token(CALLER, record.primary_screenshot_id)
    png, meta = await r.screenshots.screenshot(record.primary_screenshot_id, token)
    assert png == b"redacted-png" and meta.kind == "redacted"
    with pytest.raises(PermissionDenied):
        await r.screenshots.screenshot(record.primary_screenshot_id, token)


async def test_a_raw_frame_is_never_served_as_a_screenshot() -> None:
    r = rig()
    job_id, _ = await r.request()
    await r.scheduler.round()
    fakes.focus(r.view)
    r.clock.advance(5_000)
    await r.scheduler.round()
    raw_id = (await r.board.job(job_id)).raw_ids[0]

    with pytest.raises(NotFound):
        await r.screenshots.issue_token(CALLER, raw_id)


async def test_the_same_request_within_the_merge_window_joins_the_live_job() -> None:
    r = rig()
    first, _ = await r.request()
    second, merged = await r.request()

    assert merged and second == first
    assert r.store.queue == [first]
    assert fakes.sample(r.metrics.requests, "merged") == 1


async def test_a_job_whose_window_never_shows_expires_at_its_deadline() -> None:
    r = rig()
    job_id, _ = await r.request(ttl_ms=2_000)
    await r.scheduler.round()
    r.clock.advance(1_999)
    await r.scheduler.round()
    assert (await r.board.job(job_id)).status is JobStatus.WAITING

    r.clock.advance(1)
    await r.scheduler.round()
    record = await r.board.job(job_id)
    assert record.status is JobStatus.EXPIRED
    assert "within 2000 ms" in record.reason


async def test_the_user_typing_holds_a_ready_job_back() -> None:
    r = rig(input_backoff_ms=1_500)
    job_id, _ = await r.request()
    await r.scheduler.round()
    fakes.focus(r.view)
    r.view.input_at(r.clock.now_ms)

    assert r.scheduler.next_ready() == ""
    r.clock.advance(1_500)
    assert r.scheduler.next_ready() == job_id


async def test_a_frame_redaction_refuses_ends_the_job_rejected_with_nothing_stored() -> None:
    r = rig(work=fakes.Work(level=None))
    job_id, _ = await r.request()
    await r.scheduler.round()
    fakes.focus(r.view)
    r.clock.advance(5_000)
    await r.scheduler.round()

    record = await r.board.job(job_id)
    assert record.status is JobStatus.REJECTED
    assert record.reason == "redaction refused the frame: a password field"
    assert record.redaction_level == "red" and record.masked_fraction == 0.6
    assert r.vault.objects == {}


async def test_requests_over_the_per_app_limit_are_refused_with_a_retry_time() -> None:
    r = rig(per_app_per_minute=2, merge_window_ms=0)
    await r.request(window_id=1)
    await r.request(window_id=2)

    with pytest.raises(ResourceExhausted) as refused:
        await r.request(window_id=3)
    assert refused.value.retry_after_ms and refused.value.retry_after_ms > 0
    assert len(r.store.queue) == 2


async def test_without_a_display_a_request_is_refused_as_unavailable() -> None:
    r = rig(display=False)

    with pytest.raises(Unavailable, match="DISPLAY is not set"):
        await r.request()
    assert fakes.sample(r.metrics.requests, "refused") == 1


async def test_a_watcher_sees_every_status_and_stops_when_the_job_is_cancelled() -> None:
    r = rig()
    job_id, _ = await r.request()
    seen: list[JobStatus] = []
    stream = r.board.watch(job_id)
    seen.append((await anext(stream))[1].history[0].status)
    await r.scheduler.round()
    cancelled = await r.board.cancel(job_id)
    async for index, record in stream:
        seen.append(record.history[index].status)

    assert cancelled.status is JobStatus.CANCELLED
    assert seen == [JobStatus.QUEUED, JobStatus.WAITING, JobStatus.CANCELLED]


async def test_on_restart_a_job_caught_mid_capture_fails_and_a_waiting_one_waits_on() -> None:
    r = rig()
    waiting_id, _ = await r.request(window_id=1)
    capturing_id, _ = await r.request(window_id=2)
    await r.scheduler.round()
    await r.board.transition(capturing_id, JobEvent.MATCHED)

    restarted = rig()
    restarted.store.saved = dict(r.store.saved)
    restarted.view.focus_seq = 9
    await restarted.board.settle_leftovers()

    assert (await restarted.board.job(capturing_id)).status is JobStatus.FAILED
    assert restarted.board.active[waiting_id].record.status is JobStatus.WAITING
    assert restarted.board.active[waiting_id].enqueued_focus_seq == 9


async def test_a_job_cancelled_while_it_was_redacted_stores_nothing() -> None:
    r = rig()
    job_id, _ = await r.request()

    class CancellingWork(fakes.Work):
        def redact(self, frame: Any, *, app: str) -> Any:
            r.board.active.pop(job_id, None)
            return super().redact(frame, app=app)

    r.scheduler = replace_run(r, CancellingWork())
    await r.scheduler.round()
    fakes.focus(r.view)
    r.clock.advance(5_000)
    await r.scheduler.round()

    assert r.vault.objects == {}


def replace_run(r: Rig, work: fakes.Work) -> JobScheduler:
    settings = fakes.settings()
    run = RunCapture(r.board, r.frames, work, r.vault, settings, r.metrics, r.clock)
    return JobScheduler(
        r.board, run, r.view, None, r.clock,
        limits=rate_limits(settings), match=MatchParams(), interval_ms=100,
    )  # fmt: skip


async def test_the_purge_counts_and_audits_what_retention_removed() -> None:
    r = rig(raw_days=1, redacted_days=7)
    kept = await r.vault.put(job_id="j", kind="raw", png=b"x", width=1, height=1, expires_at=None)
    object_id = await r.vault.put(
        job_id="j", kind="redacted", png=b"y", width=1, height=1,
        expires_at=fakes.START,
    )  # fmt: skip

    assert await r.screenshots.purge_now() == 1
    assert object_id not in r.vault.objects and kept in r.vault.objects
    assert fakes.sample(r.metrics.purged, "redacted") == 1
    assert r.audit.rows[-1] == {
        "actor": "capture", "action": "capture.purge", "subject": "", "outcome": "ok",
        "raw_purged": 0, "redacted_purged": 1, "files_missing": 0,
    }  # fmt: skip


async def test_reading_raw_frames_is_refused_unless_the_operator_enabled_it() -> None:
    closed = rig()
    with pytest.raises(PermissionDenied):
        await closed.screenshots.raw_encrypted("object-0001-raw")

    opened = rig(read_raw_encrypted_enabled=True)
    object_id = await opened.vault.put(job_id="j", kind="raw", png=b"x", width=1, height=1, expires_at=None)
    assert await opened.screenshots.raw_encrypted(object_id) == (b"sealed:x", 3)
    with pytest.raises(NotFound):
        await opened.screenshots.raw_encrypted("object-9999-raw")
