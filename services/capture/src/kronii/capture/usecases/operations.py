"""The one front the capture service's API calls (HTTP, gRPC and the NATS handlers alike), once the
guard (`access`) has identified and admitted the caller: each operation handed to the use case that
owns it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from kronii.capture.core.bypass import WindowFacts
from kronii.capture.core.commands import CaptureAccepted, CaptureRequest
from kronii.capture.core.identity import Identity
from kronii.capture.core.screenshots import ObjectMeta
from kronii.capture.core.status import JobRecord
from kronii.capture.usecases.follow_desktop import FollowDesktop
from kronii.capture.usecases.guard_access import Guard
from kronii.capture.usecases.request_capture import RequestCapture
from kronii.capture.usecases.serve_screenshots import ScreenshotDesk
from kronii.capture.usecases.track_jobs import JobBoard

__all__ = ["CaptureOperations"]


class CaptureOperations:
    def __init__(
        self,
        access: Guard,
        intake: RequestCapture,
        board: JobBoard,
        screenshots: ScreenshotDesk,
        desktop: FollowDesktop,
    ) -> None:
        self.access = access
        self._intake = intake
        self._board = board
        self._screenshots = screenshots
        self._desktop = desktop

    # ---- jobs ------------------------------------------------------------------------------------

    async def request_capture(self, identity: Identity, request: CaptureRequest) -> CaptureAccepted:
        """Validate, merge or queue; InvalidArgument names the bad field."""
        return await self._intake.request_capture(identity, request)

    async def job(self, job_id: str) -> JobRecord:
        return await self._board.job(job_id)

    async def cancel(self, job_id: str) -> JobRecord:
        return await self._board.cancel(job_id)

    def watch(self, job_id: str) -> AsyncIterator[tuple[int, JobRecord]]:
        return self._board.watch(job_id)

    # ---- screenshots -----------------------------------------------------------------------------

    async def issue_token(self, identity: Identity, screenshot_id: str) -> tuple[str, datetime]:
        return await self._screenshots.issue_token(identity, screenshot_id)

    async def screenshot(self, screenshot_id: str, token: str) -> tuple[bytes, ObjectMeta]:
        return await self._screenshots.screenshot(screenshot_id, token)

    async def list_meta(self, limit: int) -> list[ObjectMeta]:
        return await self._screenshots.list_meta(limit)

    async def raw_encrypted(self, screenshot_id: str) -> tuple[bytes, int]:
        return await self._screenshots.raw_encrypted(screenshot_id)

    # ---- the sensor's events ---------------------------------------------------------------------

    def focus_changed(self, facts: WindowFacts | None, at_ms: int | None = None) -> None:
        self._desktop.focus_changed(facts, at_ms)

    def lock_changed(self, locked: bool) -> None:
        self._desktop.lock_changed(locked)
