"""The four roles over a model: `ModelRoleBackend` turns each role call into one JSON-protocol call
of an `LlmBackend` (openai, llamacpp) with the role's schema, and the reply back into the role's
type through `roles.codec`. `EstimatingBackend` answers with the rules backend but counts the
tokens the same prompts would cost a model: `kronii replay --backend openai` without `--call`.

Every prompt is built from the round's redacted context only (the budgeted text, the fragments
extracted from it, the synthesis and the plan); the backends' InputGuard checks again."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from kronii.pipeline.adapters.llm import CallRecord as LlmCallRecord
from kronii.pipeline.adapters.llm import LlmBackend, estimate_tokens
from kronii.pipeline.core.router import Family
from kronii.pipeline.roles import codec
from kronii.pipeline.roles.model import (
    Called,
    CallRecord,
    Fragment,
    Notification,
    Plan,
    PlanHistory,
    Role,
    RoleContext,
    Synthesis,
)
from kronii.pipeline.roles.rules import RulesBackend
from kronii.pipeline.roles.schemas import ROLE_SCHEMAS

__all__ = ["SYSTEM_PROMPTS", "EstimatingBackend", "ModelRoleBackend", "role_prompt"]

SYSTEM_PROMPTS = {
    Role.EXTRACTOR: (
        "You extract facts about what the user is working on from a desktop context. "
        'Return a JSON object {"fragments": [{"kind", "value", "confidence", "source"}]}: '
        'kinds like file, project, page, meeting, app; source "window" for the window title, '
        '"plugin:<id>" for plugin content. Placeholders like [EMAIL_1] stay as they are.'
    ),
    Role.SYNTHESIZER: (
        "You merge extracted facts into at most three candidate suggestions, best first. "
        'Return {"candidates": [{"action", "title", "rationale", "confidence"}], '
        '"conflicts": [], "cost_label": "low"|"medium"|"high"}.'
    ),
    Role.PLANNER: (
        "You decide whether the best candidate is worth a notification now and when to look again. "
        'Return {"notify": bool, "next_wakeup_ms": epoch ms, "min_cooldown_ms": int, '
        '"trigger_filters": [trigger kinds to ignore until then], "reason": str}.'
    ),
    Role.NOTIFIER: (
        "You write one short desktop notification for the planned suggestion, or null. Return "
        '{"notification": null} or {"notification": {"title", "body", "source_summary", '
        '"actions": [{"kind": "snooze", "label"}, {"kind": "disable", "label"}]}}.'
    ),
}


def _fragments(fragments: Sequence[Fragment]) -> list[dict[str, Any]]:
    return [
        {"kind": f.kind, "value": f.value, "confidence": f.confidence, "source": f.source} for f in fragments
    ]


def role_prompt(role: Role, payload: dict[str, Any]) -> tuple[str, str]:
    """(system, user) for one role call; the user message is the role's input as JSON."""
    return SYSTEM_PROMPTS[role], json.dumps(payload, ensure_ascii=False, sort_keys=True)


def extract_payload(context: RoleContext, family: Family) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "family": family.value,
        "trigger": context.trigger.value,
        "context": context.budget.text(),
    }
    if context.window is not None:
        payload["window"] = {
            "kind": context.window.kind.value,
            "app": context.window.app,
            "artifact": context.window.artifact,
            "detail": dict(context.window.detail),
        }
    return payload


def synthesize_payload(fragments: Sequence[Fragment]) -> dict[str, Any]:
    return {"fragments": _fragments(fragments)}


def plan_payload(synthesis: Synthesis, history: PlanHistory) -> dict[str, Any]:
    return {
        "now_ms": history.now_ms,
        "synthesis": codec.synthesis_to_json(synthesis),
        "recently_planned_hashes": [h for h, _ in history.recent_hashes][-10:],
        "surfaced_today": sorted(history.surfaced_today),
    }


def notify_payload(plan: Plan, synthesis: Synthesis) -> dict[str, Any]:
    return {
        "plan": codec.plan_to_json(plan),
        "best_candidate": codec.synthesis_to_json(synthesis)["candidates"][:1],
    }


def _short(call: LlmCallRecord, role: Role) -> CallRecord:
    return CallRecord(role, call.backend, call.input_tokens, call.output_tokens, call.latency_ms)


class ModelRoleBackend:
    """`RoleBackend` over an `LlmBackend`. `last_call` is the full record of the latest call
    (model, attempts, cost), which the Runner puts in the run's audit."""

    def __init__(self, llm: LlmBackend, *, max_output_tokens: int | None = None) -> None:
        self._llm = llm
        self._max_output_tokens = max_output_tokens
        self.last_call: LlmCallRecord | None = None

    @property
    def name(self) -> str:
        return self._llm.name

    async def _complete(self, role: Role, payload: dict[str, Any]) -> tuple[dict[str, Any], CallRecord]:
        system, user = role_prompt(role, payload)
        reply = await self._llm.complete_json(
            role=role.value,
            system=system,
            user=user,
            schema=ROLE_SCHEMAS[role],
            max_output_tokens=self._max_output_tokens,
        )
        self.last_call = reply.call
        return reply.data, _short(reply.call, role)

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]:
        data, call = await self._complete(Role.EXTRACTOR, extract_payload(context, family))
        return Called(codec.fragments_from_json(data), call)

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]:
        data, call = await self._complete(Role.SYNTHESIZER, synthesize_payload(fragments))
        return Called(codec.synthesis_from_json(data, fragments), call)

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        data, call = await self._complete(Role.PLANNER, plan_payload(synthesis, history))
        return Called(codec.plan_from_json(data), call)

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        data, call = await self._complete(Role.NOTIFIER, notify_payload(plan, synthesis))
        top = synthesis.top
        value = codec.notification_from_json(data, synthesis.context_hash, top.key if top else "")
        return Called(value, call)


class EstimatingBackend:
    """The rules backend's answers, with the tokens a model would have read (the same prompts as
    `ModelRoleBackend`) and written (the answer as JSON). Nothing is sent anywhere."""

    def __init__(self, model_name: str = "openai", rules: RulesBackend | None = None) -> None:
        self._rules = rules or RulesBackend()
        self._model_name = model_name
        self.last_call: LlmCallRecord | None = None

    @property
    def name(self) -> str:
        return f"{self._model_name} (estimated)"

    def _record(self, role: Role, payload: dict[str, Any], output: dict[str, Any]) -> CallRecord:
        system, user = role_prompt(role, payload)
        started = time.monotonic()
        call = LlmCallRecord(
            role=role.value,
            backend=self.name,
            model=self._model_name,
            input_tokens=estimate_tokens(system) + estimate_tokens(user),
            output_tokens=estimate_tokens(json.dumps(output)),
            latency_ms=round((time.monotonic() - started) * 1000),
            attempts=1,
            tokens_estimated=True,
        )
        self.last_call = call
        return _short(call, role)

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]:
        called = await self._rules.extract(context, family)
        call = self._record(
            Role.EXTRACTOR, extract_payload(context, family), codec.fragments_to_json(called.value)
        )
        return Called(called.value, call)

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]:
        called = await self._rules.synthesize(fragments)
        output = codec.synthesis_to_json(called.value)
        return Called(called.value, self._record(Role.SYNTHESIZER, synthesize_payload(fragments), output))

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        called = await self._rules.plan(synthesis, history)
        output = codec.plan_to_json(called.value)
        return Called(called.value, self._record(Role.PLANNER, plan_payload(synthesis, history), output))

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        called = await self._rules.notify(plan, synthesis)
        output = codec.notification_to_json(called.value)
        return Called(called.value, self._record(Role.NOTIFIER, notify_payload(plan, synthesis), output))
