"""One role call of a round (Extractor, Synthesizer, Planner, Notifier) within the role timeout;
the call's record goes into the run whether it answered or not."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from kronii.llm.protocol import CallRecord as LlmCallRecord
from kronii.pipeline.core.roles.values import Called, CallRecord
from kronii.pipeline.core.round import Round, RunnerConfig
from kronii.pipeline.ports import RoleBackend
from kronii.pipeline.usecases.round_state import Standing

__all__ = ["RoleCalls"]


def _llm_record(call: CallRecord, detail: LlmCallRecord | None) -> LlmCallRecord:
    if detail is not None:
        return detail
    return LlmCallRecord(
        role=call.role.value,
        backend=call.backend,
        input_tokens=call.input_tokens,
        output_tokens=call.output_tokens,
        latency_ms=call.latency_ms,
        attempts=1,
        tokens_estimated=True,
    )


class RoleCalls:
    def __init__(self, standing: Standing, backend: RoleBackend, config: RunnerConfig) -> None:
        self._standing = standing
        self._backend = backend
        self._config = config

    async def call(self, current: Round, call: Any) -> Called[Any] | None:
        """One role call within the role timeout; its record goes into the run either way."""
        try:
            called: Called[Any] = await asyncio.wait_for(call, self._config.role_timeout_ms / 1000)
        except Exception as error:
            detail = getattr(error, "call", None)
            if isinstance(detail, LlmCallRecord):
                self._add_call(current, detail)
            current.notes.append(f"role call failed: {type(error).__name__}")
            return None
        detail = getattr(self._backend, "last_call", None)
        record = _llm_record(called.call, detail if isinstance(detail, LlmCallRecord) else None)
        if record.fallback:
            current.notes.append(f"{record.role}: rules' answer kept ({record.fallback[:200]})")
        self._add_call(current, record)
        return called

    def _add_call(self, current: Round, call: LlmCallRecord) -> None:
        self._standing.model_calls += 1
        current.record = replace(current.record, model_calls=(*current.record.model_calls, call))
