"""VisionOperations for the API: the use cases (planning, approvals, the context) behind one door,
answering in the plan's view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronii.vision.context_build import ContextBuilder
from kronii.vision.plan_book import PlanBook
from kronii.vision.planning import Planning

__all__ = ["VisionDesk"]


class VisionDesk:
    def __init__(self, book: PlanBook, planning: Planning, builder: ContextBuilder) -> None:
        self._book = book
        self._planning = planning
        self._builder = builder

    async def plan(self, intent: str, requester: str, execute: bool) -> dict[str, Any]:
        return (await self._planning.make(intent, requester, execute=execute)).view()

    def plans(self) -> Sequence[dict[str, Any]]:
        return [record.view() for record in self._book.all()]

    def show(self, plan_id: str) -> dict[str, Any]:
        return self._book.get(plan_id).view()

    async def approve(self, plan_id: str, actor: str) -> dict[str, Any]:
        return (await self._planning.approve(plan_id, actor)).view()

    async def deny(self, plan_id: str, actor: str) -> dict[str, Any]:
        return (await self._planning.deny(plan_id, actor)).view()

    def run(self, plan_id: str) -> dict[str, Any]:
        return self._planning.run(plan_id).view()

    async def context(self) -> dict[str, Any]:
        built = await self._builder.build()
        ctx = built.context
        return {
            "screenshot_id": ctx.screenshot_id,
            "screenshot_hash": ctx.screenshot_hash,
            "focused_title": ctx.focused_title,
            "screen_bounds": ctx.screen_bounds.as_dict(),
            "scale": ctx.scale,
            "tree": [node.as_prompt() for node in ctx.tree],
            "ocr": [
                {"text": z.text, "confidence": round(z.confidence, 3), "bounds": z.bounds.as_dict()}
                for z in ctx.ocr
            ],
            "notes": list(ctx.notes),
            "timings_ms": {part: round(ms, 1) for part, ms in built.timings_ms.items()},
        }
