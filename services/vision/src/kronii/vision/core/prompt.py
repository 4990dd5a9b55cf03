"""What a model is told (seed 001, "Prompting instructions"): the screen as redacted text (OCR zones and
the pruned tree, never pixels), the person's goal, and the strict action schema. And the domain check a
reply must pass besides the schema: it may only name elements and text zones of this screen."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kronii.vision.core.actions import ActionType
from kronii.vision.core.context import ScreenContext, UiNode

__all__ = ["SYSTEM", "out_of_bounds", "screen_payload", "user_prompt"]

SYSTEM = (
    "You are kronii's vision assistant. Given a screen context (OCR text and an accessibility tree with "
    "element ids and bounds), produce the smallest set of actions that fulfils the user's goal, as ONE JSON "
    'object {"actions": [...]} and nothing else. Each action is {"type": "open_app"|"type_text"|"wait"|'
    '"click_by_bounds"|"confirm", "args": {"target"?, "text"?, "delayMs"?, "uiElementId"?, "bounds"?, '
    '"requireConfirmation"?, "metadata"?}}. Prefer uiElementId from the tree over bounds; bounds are in the '
    "screenshot's pixels, as the OCR zones give them. When uncertain set args.requireConfirmation=true and "
    "describe the ambiguity in args.metadata.ambiguity."
)

_MAX_OCR_ZONES = 40
# The seed's "at most 20 nodes" of the tree in a model's prompt.
DEFAULT_PROMPT_NODES = 20


def _shown(tree: Sequence[UiNode], max_nodes: int) -> list[UiNode]:
    """At most `max_nodes` of the context's elements, in reading order: the window, the focused
    element, then what a plan can act on (what has an action or takes text), then the rest."""

    def rank(node: UiNode) -> int:
        if node.depth == 0 or node.focused:
            return 0
        return 1 if node.actions or node.editable or node.secured else 2

    kept = {node.id for node in sorted(tree, key=rank)[:max_nodes]}
    return [node for node in tree if node.id in kept]


def screen_payload(context: ScreenContext, max_nodes: int = DEFAULT_PROMPT_NODES) -> dict[str, Any]:
    width, height = context.screenshot_size
    zones = sorted(context.ocr, key=lambda z: -z.confidence)[:_MAX_OCR_ZONES]
    return {
        "focused_window": context.focused_title,
        "screenshot_size": {"width": width, "height": height},
        "ui_tree": [node.as_prompt() for node in _shown(context.tree, max_nodes)],
        "ocr": [
            {"text": z.text, "confidence": round(z.confidence, 2), "bounds": z.bounds.as_dict()}
            for z in zones
        ],
        "previous_actions": list(context.previous_actions),
    }


def user_prompt(intent: str, context: ScreenContext, max_nodes: int = DEFAULT_PROMPT_NODES) -> str:
    return (
        "Here is the screen context:\n"
        f"{json.dumps(screen_payload(context, max_nodes), ensure_ascii=False)}\n\n"
        f'TASK: Identify the smallest set of actions to fulfil: "{intent}". Only produce actions if you are '
        'more than 90% confident. If not, output: {"actions": [{"type": "confirm", "args": {"text": "<what '
        'you are unsure of>"}}]}'
    )


def out_of_bounds(data: dict[str, Any], context: ScreenContext) -> Sequence[str]:
    """Problems of a schema-valid reply against this screen: ids it does not have, and actions that
    lack what their type needs. R2 sends these back to the model once, then the plan stops."""
    known = {node.id for node in context.tree}
    problems: list[str] = []
    for index, item in enumerate(data.get("actions", [])):
        args = item.get("args") or {}
        kind = item.get("type")
        element = args.get("uiElementId")
        if element and element not in known:
            problems.append(f"action {index} names element {element!r}, which is not in ui_tree")
        if kind == ActionType.OPEN_APP and not args.get("target"):
            problems.append(f"action {index} (open_app) has no target")
        if kind == ActionType.TYPE_TEXT and not args.get("text"):
            problems.append(f"action {index} (type_text) has no text")
        if kind == ActionType.CLICK_BY_BOUNDS and not element and "bounds" not in args:
            problems.append(f"action {index} (click_by_bounds) has neither uiElementId nor bounds")
    return problems
