"""What the supervisor asks the person through the pipeline's notices (kronii.pipeline.notice):
the bubble offering a failure to an agent (with its button), and a thread the guard blocked. The
pipeline shows them through its gates; a bus that is away loses the bubble (the offer is kept, and
`kronii agents hand` takes it)."""

from __future__ import annotations

import logging

from kronii.pipeline.v1 import pipeline_pb2 as ppb
from kronii.runtime.service import ServiceContext
from kronii.stores import subjects
from kronii.supervisor.api.convert import stamp

__all__ = ["PipelineNotices"]

log = logging.getLogger(__name__)


class PipelineNotices:
    def __init__(self, ctx: ServiceContext) -> None:
        self._ctx = ctx

    async def show(
        self,
        *,
        kind: str,
        title: str,
        body: str,
        dedup_key: str,
        at: float,
        offer_id: str = "",
        offer_label: str = "",
    ) -> bool:
        """Whether the notice went out on the bus."""
        if not self._ctx.bus.connected:
            return False
        notice = ppb.Notice(
            source="supervisor", kind=kind, title=title, body=body, dedup_key=dedup_key, at=stamp(at),
            offer_id=offer_id, offer_label=offer_label,
        )  # fmt: skip
        try:
            await self._ctx.bus.publish(subjects.PIPELINE_NOTICE, notice)
        except Exception as error:
            log.warning("the notice %r was not published: %s", kind, error)
            return False
        return True
