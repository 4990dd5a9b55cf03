"""When vision stops waiting for capture, it cancels the job it asked for: left running, an abandoned
job holds capture's queue and the next requests expire behind it (seen in the context benchmark)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.vision.adapters import capture_frames
from kronii.vision.adapters.capture_frames import CaptureScreenshots, _Attempt, _Session
from kronii.vision.ports import ScreenshotUnavailable


class _CancelRecorder:
    def __init__(self) -> None:
        self.cancelled: list[tuple[str, Any]] = []

    async def CancelCapture(
        self, job: cpb.CaptureJobId, *, metadata: Any, timeout: float
    ) -> cpb.CaptureStatus:
        self.cancelled.append((job.job_id, metadata))
        return cpb.CaptureStatus(job_id=job.job_id, status=cpb.CANCELLED)


def _source(tmp_path: Path, stub: _CancelRecorder, status: str) -> CaptureScreenshots:
    socket = tmp_path / "capture.sock"
    socket.touch()
    source = CaptureScreenshots(socket, tmp_path / "vision.key", timeout_secs=0.2)
    source._session = _Session((("authorization", "Bearer t"),), renew_at=1e12)
    source._stub = lambda: stub  # type: ignore[assignment,method-assign,return-value]

    async def take(attempt: _Attempt) -> Any:
        attempt.job_id, attempt.status = "job-7", status
        await asyncio.sleep(5)

    source._take = take  # type: ignore[method-assign]
    return source


@pytest.mark.asyncio
async def test_a_job_vision_gave_up_on_is_cancelled_at_capture(tmp_path: Path) -> None:
    stub = _CancelRecorder()
    with pytest.raises(ScreenshotUnavailable, match=r"within 0\.2 s"):
        await _source(tmp_path, stub, "CAPTURING").focused_window()
    assert [job for job, _ in stub.cancelled] == ["job-7"]
    assert stub.cancelled[0][1] == (("authorization", "Bearer t"),)


@pytest.mark.asyncio
async def test_a_job_that_already_ended_is_not_cancelled(tmp_path: Path) -> None:
    stub = _CancelRecorder()
    with pytest.raises(ScreenshotUnavailable):
        await _source(tmp_path, stub, "PERSISTED").focused_window()
    assert stub.cancelled == []
    assert {"PERSISTED", "CANCELLED", "EXPIRED"} <= capture_frames._TERMINAL_NAMES
