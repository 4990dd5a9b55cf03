"""The wire and the engine's values, both ways: a plan as it stands (core PlanView) as vision.proto's
Plan, the context as built as the /context JSON, and the intent and the caller taken in as a command,
for both transports."""

from __future__ import annotations

from typing import Any

from kronii.edge.limits import unsafe_character
from kronii.foundation.errors import InvalidArgument
from kronii.vision.core.actions import Action
from kronii.vision.core.commands import PlanCommand
from kronii.vision.core.context import Bounds, Built, UiNode
from kronii.vision.core.plan_book import PlanView
from kronii.vision.v1 import vision_pb2 as pb

__all__ = ["checked_intent", "context_json", "plan_command", "plan_message"]

# Planning folds these into single spaces: a pasted intent may hold them.
_FOLDED_WHITESPACE = str.maketrans("\t\n\r", "   ")


def _bounds(box: Bounds) -> pb.Bounds:
    return pb.Bounds(x=box.x, y=box.y, width=box.width, height=box.height)


def _action(action: Action) -> pb.Action:
    message = pb.Action(
        type=action.type.value, target=action.target, text=action.text, delay_ms=action.delay_ms,
        ui_element_id=action.ui_element_id, require_confirmation=action.require_confirmation,
        metadata=dict(action.metadata), description=action.describe(),
    )  # fmt: skip
    if action.bounds is not None:
        message.bounds.CopyFrom(_bounds(action.bounds))
    return message


def _candidate(node: UiNode) -> pb.Candidate:
    candidate = pb.Candidate(id=node.id, role=node.role)
    if node.bounds is not None:
        candidate.bounds.CopyFrom(_bounds(node.bounds))
    return candidate


def checked_intent(intent: str) -> str:
    """The intent, refused when it holds a control or bidirectional-formatting character: the person
    approves by reading it (and the actions made from it) in a notification or a terminal, where such a
    character can hide, recolour or reorder the text an agent sent."""
    bad = unsafe_character(intent.translate(_FOLDED_WHITESPACE))
    if bad is not None:
        raise InvalidArgument(
            f"the intent contains a control or bidirectional-formatting character (U+{ord(bad):04X})",
            field="intent",
        )
    return intent


def plan_command(intent: str, requester: str, execute: bool) -> PlanCommand:
    """A plan request as taken in from either transport (the intent checked first)."""
    return PlanCommand(checked_intent(intent), requester, execute)


def plan_message(plan: PlanView) -> pb.Plan:
    evaluation, context = plan.evaluation, plan.context
    return pb.Plan(
        plan_id=plan.id, intent=plan.intent, state=plan.state.value, reason=plan.reason, note=plan.note,
        requester=plan.requester, backend=plan.backend, created_ms=plan.created_ms,
        screenshot_id=context.screenshot_id, screenshot_hash=context.screenshot_hash,
        focused_title=context.focused_title, fingerprint=plan.fingerprint,
        requires_confirmation=evaluation.requires_confirmation,
        actions=[_action(action) for action in evaluation.actions],
        dropped=[pb.Dropped(index=d.index, row=d.row, reason=d.reason) for d in evaluation.dropped],
        blocked=evaluation.blocked,
        ambiguities=[
            pb.Ambiguity(name=amb.name, candidates=[_candidate(node) for node in amb.candidates])
            for amb in evaluation.ambiguities
        ],
        safety_rows=list(evaluation.rows_fired), approved_by=plan.approved_by, replanned_as=plan.replanned_as,
        results=[pb.StepResult(index=r["index"], action=r["action"], how=r["how"]) for r in plan.results],
    )  # fmt: skip


def context_json(built: Built) -> dict[str, Any]:
    """What a plan would see now, as GET /v1/vision/context answers it."""
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
        "window": ctx.window.as_dict() if ctx.window is not None else None,
        "window_problem": ctx.window_problem,
        "timings_ms": {part: round(ms, 1) for part, ms in built.timings_ms.items()},
    }
