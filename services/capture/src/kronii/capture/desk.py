"""The operations the API layers call once the guard has admitted the caller (ports.CaptureOperations):
each handed to the use case that owns it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from kronii.capture.core.identity import Identity
from kronii.capture.core.screenshots import ObjectMeta
from kronii.capture.core.status import JobRecord
from kronii.capture.guard import Guard
from kronii.capture.job_board import JobBoard
from kronii.capture.job_intake import JobIntake
from kronii.capture.screenshots import ScreenshotDesk

__all__ = ["CaptureDesk"]


class CaptureDesk:
    def __init__(
        self, access: Guard, intake: JobIntake, board: JobBoard, screenshots: ScreenshotDesk
    ) -> None:
        self.access = access
        self._intake = intake
        self._board = board
        self._screenshots = screenshots

    async def request_capture(self, identity: Identity, fields: dict[str, Any]) -> tuple[str, bool]:
        return await self._intake.request_capture(identity, fields)

    async def job(self, job_id: str) -> JobRecord:
        return await self._board.job(job_id)

    async def cancel(self, job_id: str) -> JobRecord:
        return await self._board.cancel(job_id)

    def watch(self, job_id: str) -> AsyncIterator[tuple[int, JobRecord]]:
        return self._board.watch(job_id)

    async def issue_token(self, identity: Identity, screenshot_id: str) -> tuple[str, datetime]:
        return await self._screenshots.issue_token(identity, screenshot_id)

    async def screenshot(self, screenshot_id: str, token: str) -> tuple[bytes, ObjectMeta]:
        return await self._screenshots.screenshot(screenshot_id, token)

    async def list_meta(self, limit: int) -> list[ObjectMeta]:
        return await self._screenshots.list_meta(limit)

    async def raw_encrypted(self, screenshot_id: str) -> tuple[bytes, int]:
        return await self._screenshots.raw_encrypted(screenshot_id)
