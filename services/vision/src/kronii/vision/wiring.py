"""Building the vision engine's parts from its settings: the planner backend, the safety policy and
the screen's sources. Kept apart from app.py so the app stays a list of start and stop steps."""

from __future__ import annotations

import os
from pathlib import Path

from kronii.common.llm.protocol import LlmBackend
from kronii.common.rendezvous import capture_socket_path
from kronii.vision.core.actions import ActionClass
from kronii.vision.core.safety import ClassPolicy, SafetyPolicy
from kronii.vision.model_planner import ModelPlanner, RulesPlanner
from kronii.vision.ports import Planner
from kronii.vision.settings import VisionSettings

__all__ = ["broker_url", "capture_socket", "make_planner", "safety_policy", "screen_scale"]


def make_planner(settings: VisionSettings) -> Planner:
    if settings.planner == "rules":
        return RulesPlanner()
    model: LlmBackend
    if settings.planner == "openai":
        from kronii.common.llm.openai import OpenAIBackend

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
        from kronii.common.llm.llamacpp import LlamaCppBackend

        assert settings.llamacpp_model_path is not None
        model = LlamaCppBackend(
            settings.llamacpp_model_path,
            timeout_secs=settings.llm_timeout_secs,
            max_output_tokens=settings.llm_max_output_tokens,
        )
    return ModelPlanner(
        model, timeout_secs=settings.llm_timeout_secs, max_output_tokens=settings.llm_max_output_tokens
    )


def safety_policy(settings: VisionSettings) -> SafetyPolicy:
    return SafetyPolicy(
        allowed_apps=frozenset(settings.apps()),
        classes={
            ActionClass.READ_ONLY: ClassPolicy(settings.read_only_policy),
            ActionClass.INPUT: ClassPolicy(settings.input_policy),
            ActionClass.LAUNCH: ClassPolicy(settings.launch_policy),
        },
        min_ocr_confidence=settings.min_ocr_confidence,
    )


def screen_scale(environ: dict[str, str] | None = None) -> float:
    """Device pixels per logical pixel, as GTK applications on this desktop use it (GDK_SCALE)."""
    env = os.environ if environ is None else environ
    try:
        scale = float(env.get("GDK_SCALE", "1") or "1")
    except ValueError:
        return 1.0
    return scale if scale > 0 else 1.0


def capture_socket(settings: VisionSettings) -> Path:
    """capture's Unix socket, as capture itself places it (its KRONII_CAPTURE_SOCKET_DIR included)."""
    configured = os.environ.get("KRONII_CAPTURE_SOCKET_DIR", "").strip()
    return capture_socket_path(Path(settings.data_dir), Path(configured) if configured else None)


def broker_url(settings: VisionSettings) -> str:
    if settings.broker_url:
        return settings.broker_url
    return (
        os.environ.get("KRONII_BROKER_URL")
        or f"http://127.0.0.1:{os.environ.get('KRONII_BROKER_HTTP_PORT', '8106')}"
    )
