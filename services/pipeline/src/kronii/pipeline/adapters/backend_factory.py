"""The roles' backend chosen by settings, the same for the service and `kronii replay --call`:
`rules` (the default), or a model (`openai`, `llamacpp`) with the rules as its floor, each role
within its output budget and the call's time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kronii.llm.protocol import CallRecord
from kronii.pipeline.core.roles.rules import RulesBackend
from kronii.pipeline.core.roles.values import BackendKind
from kronii.pipeline.ports import RoleBackend
from kronii.pipeline.settings import PipelineSettings

__all__ = ["make_backend"]


def make_backend(
    settings: PipelineSettings, *, on_call: Callable[[CallRecord], None] | None = None
) -> RoleBackend:
    """`on_call` sees every model call's record as it ends (progress for `replay --call`)."""
    if settings.llm_backend is BackendKind.RULES:
        return RulesBackend()
    from kronii.pipeline.adapters.model_roles import ModelRoleBackend

    llm: Any
    if settings.llm_backend is BackendKind.OPENAI:
        from kronii.llm.openai import OpenAIBackend

        assert settings.llm_base_url is not None  # the settings' validator says so
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        llm = OpenAIBackend(
            settings.llm_base_url,
            settings.llm_model,
            key,
            settings.llm_timeout_secs,
            settings.llm_max_output_tokens,
            response_format=settings.llm_response_format,
            price_per_1k_input=settings.llm_price_per_1k_input,
            price_per_1k_output=settings.llm_price_per_1k_output,
        )
    else:
        from kronii.llm.llamacpp import LlamaCppBackend

        assert settings.llamacpp_model_path is not None
        llm = LlamaCppBackend(
            settings.llamacpp_model_path,
            timeout_secs=settings.llm_timeout_secs,
            max_output_tokens=settings.llm_max_output_tokens,
        )
    return ModelRoleBackend(
        llm,
        timeout_secs=settings.llm_timeout_secs,
        budgets=settings.role_budgets(),
        bounds=settings.model_bounds(),
        on_call=on_call,
    )
