"""The one interface every LLM backend (`rules`, `openai`, `llamacpp`) implements. Async because
model backends wait on HTTP or a worker thread; the `rules` backend answers at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kronii.pipeline.core.router import Family
from kronii.pipeline.roles.values import (
    Called,
    Fragment,
    Notification,
    Plan,
    PlanHistory,
    RoleContext,
    Synthesis,
)


class RoleBackend(Protocol):
    """The four role calls. Input is redacted context only; output must match `schemas`."""

    @property
    def name(self) -> str: ...

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]: ...

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]: ...

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]: ...

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]: ...
