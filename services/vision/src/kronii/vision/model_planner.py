"""The planners: the rules (the default; core/rules_planner.py) and a model through the shared backends
(kronii.common.llm: OpenAI-compatible or llama.cpp) with the seed's strict schema and R2 (one stricter
retry, then stop). The model sees redacted text only: the backends' input guard refuses a prompt in which
the redaction engine still finds a secret."""

from __future__ import annotations

from kronii.common.llm.protocol import LlmBackend, LlmError
from kronii.vision.core.actions import ACTION_SCHEMA, actions_from_reply
from kronii.vision.core.context import ScreenContext
from kronii.vision.core.prompt import SYSTEM, out_of_bounds, user_prompt
from kronii.vision.core.rules_planner import plan_by_rules
from kronii.vision.ports import PlanAnswer

__all__ = ["ModelPlanner", "RulesPlanner"]

ROLE = "vision_planner"


class RulesPlanner:
    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        answer = plan_by_rules(intent, context)
        return PlanAnswer(answer.actions, answer.note, "rules")


class ModelPlanner:
    def __init__(self, model: LlmBackend, *, timeout_secs: float, max_output_tokens: int = 512) -> None:
        self._model = model
        self._timeout = timeout_secs
        self._budget = max_output_tokens

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        try:
            reply = await self._model.complete_json(
                role=ROLE,
                system=SYSTEM,
                user=user_prompt(intent, context),
                schema=ACTION_SCHEMA,
                max_output_tokens=self._budget,
                timeout_secs=self._timeout,
                check=lambda data: out_of_bounds(data, context),
            )
        except LlmError as error:
            call = error.call.as_dict() if error.call is not None else None
            return PlanAnswer((), f"the model gave no usable plan: {error}", self._model.name, call)
        return PlanAnswer(actions_from_reply(reply.data), "", self._model.name, reply.call.as_dict())
