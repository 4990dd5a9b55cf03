"""Every status change of a capture job on NATS (`kronii.capture.status.<job_id>`, ports.StatusFeed),
as capture.proto's CaptureStatus."""

from __future__ import annotations

from kronii.capture.api.convert import status_message
from kronii.capture.core.status import JobRecord
from kronii.stores import subjects
from kronii.stores.bus import Bus

__all__ = ["StatusPublisher"]


class StatusPublisher:
    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def publish(self, job: JobRecord) -> None:
        await self._bus.publish(subjects.CAPTURE_STATUS, status_message(job), job.job_id)
