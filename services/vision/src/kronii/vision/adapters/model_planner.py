"""The planner behind the engine's Planner port: the rules (the default; core/rules_planner.py) or a
model through the shared backends (kronii.llm: OpenAI-compatible or llama.cpp) with the seed's
strict schema and R2 (one stricter retry, then stop). The model sees redacted text only: the backends'
input guard refuses a prompt in which the redaction engine still finds a secret."""

from __future__ import annotations

from kronii.llm.protocol import LlmBackend, LlmError
from kronii.vision.core.actions import ACTION_SCHEMA, actions_from_reply
from kronii.vision.core.commands import PlanAnswer
from kronii.vision.core.context import ScreenContext
from kronii.vision.core.prompt import SYSTEM, out_of_bounds, user_prompt
from kronii.vision.core.rules_planner import RulesPlanner
from kronii.vision.ports import Planner
from kronii.vision.settings import VisionSettings

__all__ = ["ModelPlanner", "make_planner"]

ROLE = "vision_planner"


class ModelPlanner:
    def __init__(
        self, model: LlmBackend, *, timeout_secs: float, max_output_tokens: int = 512, max_nodes: int = 20
    ) -> None:
        self._model = model
        self._timeout = timeout_secs
        self._budget = max_output_tokens
        self._max_nodes = max_nodes

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        try:
            reply = await self._model.complete_json(
                role=ROLE,
                system=SYSTEM,
                user=user_prompt(intent, context, self._max_nodes),
                schema=ACTION_SCHEMA,
                max_output_tokens=self._budget,
                timeout_secs=self._timeout,
                check=lambda data: out_of_bounds(data, context),
            )
        except LlmError as error:
            call = error.call.as_dict() if error.call is not None else None
            return PlanAnswer((), f"the model gave no usable plan: {error}", self._model.name, call)
        return PlanAnswer(actions_from_reply(reply.data), "", self._model.name, reply.call.as_dict())


def make_planner(settings: VisionSettings) -> Planner:
    """The settings' planner: the rules, or a model through the backend they name."""
    if settings.planner == "rules":
        return RulesPlanner()
    model: LlmBackend
    if settings.planner == "openai":
        from kronii.llm.openai import OpenAIBackend

        assert settings.llm_base_url is not None  # the settings' validator says so
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        model = OpenAIBackend(
            settings.llm_base_url,
            settings.llm_model,
            key,
            settings.llm_timeout_secs,
            settings.llm_max_output_tokens,
        )
    else:
        from kronii.llm.llamacpp import LlamaCppBackend

        assert settings.llamacpp_model_path is not None
        model = LlamaCppBackend(
            settings.llamacpp_model_path,
            timeout_secs=settings.llm_timeout_secs,
            max_output_tokens=settings.llm_max_output_tokens,
        )
    return ModelPlanner(
        model,
        timeout_secs=settings.llm_timeout_secs,
        max_output_tokens=settings.llm_max_output_tokens,
        max_nodes=settings.max_tree_nodes,
    )
