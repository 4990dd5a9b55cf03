"""The four roles over a model: `ModelRoleBackend` turns each role call into one JSON-protocol call
of an `LlmBackend` (openai, llamacpp) with the role's schema, and the reply back into the role's
type through `roles.codec`. `EstimatingBackend` answers with the rules backend but counts the
tokens the same prompts would cost a model: `kronii replay --backend openai` without `--call`.

Every prompt is built from the round's redacted context only (the budgeted text, the fragments
extracted from it, the synthesis and the plan); the backends' InputGuard checks again."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kronii.llm.protocol import CallRecord as LlmCallRecord
from kronii.llm.protocol import (
    LlmBackend,
    LlmError,
    ModelOutputError,
    UnredactedInputError,
    estimate_tokens,
)
from kronii.pipeline.core.budget import ItemSource
from kronii.pipeline.core.roles import bounds, codec, rules
from kronii.pipeline.core.roles import floor as floors
from kronii.pipeline.core.roles.bounds import LIMITS, ModelBounds, output_budget
from kronii.pipeline.core.roles.rules import RulesBackend, RulesParams
from kronii.pipeline.core.roles.schemas import RoleOutputError
from kronii.pipeline.core.roles.values import (
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
from kronii.pipeline.core.router import Family

__all__ = ["SYSTEM_PROMPTS", "EstimatingBackend", "ModelRoleBackend", "role_prompt"]

SYSTEM_PROMPTS = {
    Role.EXTRACTOR: (
        "You extract facts about what the user is working on from a desktop context given as JSON. "
        'Return {"fragments": [{"kind", "value", "confidence", "source"}]} with at most '
        f"{LIMITS.fragments} fragments. kind is one lower-case word (file, project, page, repository, "
        "meeting, error, command); value is copied from the context, at most "
        f"{LIMITS.fragment_value} characters, never the kind itself; confidence is between 0.1 and 1; "
        'source is "window" for the window title or "plugin:<id>" for plugin content. '
        'Placeholders like [EMAIL_1] stay as they are. No facts found: {"fragments": []}.'
    ),
    Role.SYNTHESIZER: (
        "You turn facts about the user's work into at most "
        f"{LIMITS.candidates} suggestions worth a desktop notification, best first. Return "
        '{"candidates": [{"action", "title", "rationale", "confidence"}], "conflicts": [], '
        '"cost_label": "low"|"medium"|"high"}. action is one lower-case word (review, '
        "related_tasks, meeting_notes, resume, fix_test); title is a short imperative sentence "
        f"naming the fact (at most {LIMITS.title} characters); rationale says in one sentence why "
        f"(at most {LIMITS.rationale} characters); confidence is between 0.1 and 1. "
        'Nothing worth suggesting: {"candidates": [], "conflicts": [], "cost_label": "low"}.'
    ),
    Role.PLANNER: (
        "You decide whether the best candidate is worth a notification now and when to look again. "
        'Return {"notify": true|false, "next_wakeup_ms": <one of wakeup_options_ms>, '
        '"min_cooldown_ms": <one of 300000, 600000, 1200000, 1800000, 3600000>, '
        '"trigger_filters": [], "reason": "<why, in one sentence>"}. '
        "Notify only for a high-confidence candidate whose context hash is not among the recently "
        "planned ones and whose key was not surfaced today."
    ),
    Role.NOTIFIER: (
        "You write one short desktop notification for the planned suggestion. Return "
        '{"notification": {"title", "body", "source_summary", "actions": [{"kind": "snooze", '
        '"label"}, {"kind": "disable", "label"}]}}, or {"notification": null} when the plan does '
        f"not notify. title at most {LIMITS.title} characters, body one or two sentences (at most "
        f"{LIMITS.body}), source_summary says what it is based on; labels are short button texts."
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
    now = history.now_ms
    return {
        "now_ms": now,
        # A small model copies a number far better than it adds one.
        "wakeup_options_ms": [now + ahead for ahead in bounds.WAKEUP_CHOICES_MS],
        "synthesis": codec.synthesis_to_json(synthesis),
        "recently_planned_hashes": [h for h, _ in history.recent_hashes][-10:],
        "surfaced_today": sorted(history.surfaced_today),
    }


def notify_payload(plan: Plan, synthesis: Synthesis) -> dict[str, Any]:
    return {
        "plan": codec.plan_to_json(plan),
        "best_candidate": codec.synthesis_to_json(synthesis)["candidates"][:1],
    }


def fragment_sources(context: RoleContext) -> list[str]:
    """Where this round's facts can come from: the window title and each plugin in the budget."""
    plugins = [f"plugin:{item.name}" for item in context.budget.items if item.source is ItemSource.PLUGIN]
    return ["window", *plugins]


def _short(call: LlmCallRecord, role: Role) -> CallRecord:
    return CallRecord(role, call.backend, call.input_tokens, call.output_tokens, call.latency_ms)


def _fallback_code(error: Exception) -> str:
    if isinstance(error, UnredactedInputError):
        return "unredacted"
    if isinstance(error, ModelOutputError) or not isinstance(error, LlmError):
        return "invalid_output"
    return "timeout" if "did not answer within" in str(error) or "ran out of" in str(error) else "unavailable"


class ModelRoleBackend:
    """`RoleBackend` over an `LlmBackend`, with the rules as the floor (`roles.floor`).

    Each role call asks the model within the role's output budget and the call's time, checks the
    answer against the schema and the domain's bounds, and combines it with the rules' answer for
    the same input. A model that fails, times out, answers out of bounds or contradicts a hard rule
    leaves the rules' answer in place. `last_call` is the full record of the latest call (model,
    attempts, cost, and `fallback`: "<code>: <why>" when the rules' answer was used)."""

    def __init__(
        self,
        llm: LlmBackend,
        *,
        timeout_secs: float = 30.0,
        budgets: Mapping[Role, int] | None = None,
        bounds: ModelBounds | None = None,
        rules_params: RulesParams | None = None,
        on_call: Callable[[LlmCallRecord], None] | None = None,
    ) -> None:
        self._llm = llm
        self._timeout_secs = timeout_secs
        self._budgets = dict(budgets) if budgets is not None else {role: output_budget(role) for role in Role}
        self._bounds = bounds or ModelBounds()
        self._params = rules_params or RulesParams()
        self._on_call = on_call
        self.last_call: LlmCallRecord | None = None

    @property
    def name(self) -> str:
        return self._llm.name

    async def _ask(
        self, role: Role, payload: dict[str, Any], *, now_ms: int, sources: Sequence[str] = ()
    ) -> tuple[dict[str, Any] | None, LlmCallRecord, str]:
        system, user = role_prompt(role, payload)
        try:
            reply = await self._llm.complete_json(
                role=role.value,
                system=system,
                user=user,
                schema=bounds.model_schema(role, sources=sources, now_ms=now_ms or None),
                max_output_tokens=self._budgets[role],
                timeout_secs=self._timeout_secs,
                check=lambda data: bounds.problems(
                    role, data, now_ms=now_ms, context=user, bounds=self._bounds
                ),
            )
        except LlmError as error:
            call = error.call or LlmCallRecord(role.value, self.name, outcome="error")
            return None, call, f"{_fallback_code(error)}: {error}"
        return reply.data, reply.call, ""

    def _settle(self, role: Role, call: LlmCallRecord, fallback: str) -> CallRecord:
        self.last_call = dataclasses.replace(call, fallback=fallback)
        if self._on_call is not None:
            self._on_call(self.last_call)
        return _short(self.last_call, role)

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]:
        floor = rules.extract(context, family)
        data, call, fallback = await self._ask(
            Role.EXTRACTOR,
            extract_payload(context, family),
            now_ms=context.now_ms,
            sources=fragment_sources(context),
        )
        model: list[Fragment] = []
        if data is not None:
            try:
                model = codec.fragments_from_json(data)
            except (RoleOutputError, ValueError, KeyError) as error:
                fallback = f"invalid_output: {error}"
        return Called(floors.fragments(model, floor), self._settle(Role.EXTRACTOR, call, fallback))

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]:
        floor = rules.synthesize(fragments)
        data, call, fallback = await self._ask(Role.SYNTHESIZER, synthesize_payload(fragments), now_ms=0)
        value = floor
        if data is not None:
            try:
                value = floors.synthesis(codec.synthesis_from_json(data, fragments), floor)
            except (RoleOutputError, ValueError, KeyError) as error:
                fallback = f"invalid_output: {error}"
        return Called(value, self._settle(Role.SYNTHESIZER, call, fallback))

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        floor = rules.plan(synthesis, history, self._params)
        data, call, fallback = await self._ask(
            Role.PLANNER, plan_payload(synthesis, history), now_ms=history.now_ms
        )
        value = floor
        if data is not None:
            try:
                model = codec.plan_from_json(data)
            except (RoleOutputError, ValueError, KeyError) as error:
                fallback = f"invalid_output: {error}"
            else:
                value, overruled = floors.plan(
                    model, floor, synthesis, history, self._params.repeat_window_ms
                )
                fallback = overruled
        return Called(value, self._settle(Role.PLANNER, call, fallback))

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        floor = rules.notify(plan, synthesis, self._params)
        data, call, fallback = await self._ask(Role.NOTIFIER, notify_payload(plan, synthesis), now_ms=0)
        value = floor
        if data is not None:
            top = synthesis.top
            try:
                model = codec.notification_from_json(data, synthesis.context_hash, top.key if top else "")
            except (RoleOutputError, ValueError, KeyError) as error:
                fallback = f"invalid_output: {error}"
            else:
                value, overruled = floors.notification(model, floor, plan)
                fallback = overruled
        return Called(value, self._settle(Role.NOTIFIER, call, fallback))


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
