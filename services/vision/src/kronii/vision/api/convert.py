"""The plan's view (a dict, plan_book.PlanRecord.view) as vision.proto's Plan, and the intent as taken in,
for both transports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf.json_format import ParseDict
from kronii.common.errors import InvalidArgument
from kronii.common.limits import unsafe_character
from kronii.vision.v1 import vision_pb2 as pb

__all__ = ["checked_intent", "plan_message"]

# Planning folds these into single spaces: a pasted intent may hold them.
_FOLDED_WHITESPACE = str.maketrans("\t\n\r", "   ")

_PLAN_FIELDS = frozenset(pb.Plan.DESCRIPTOR.fields_by_name)


def _action(item: Mapping[str, Any]) -> dict[str, Any]:
    args = item.get("args") or {}
    action: dict[str, Any] = {
        "type": item["type"],
        "target": args.get("target", ""),
        "text": args.get("text", ""),
        "delay_ms": args.get("delayMs", 0),
        "ui_element_id": args.get("uiElementId", ""),
        "require_confirmation": bool(args.get("requireConfirmation", False)),
        "metadata": dict(args.get("metadata") or {}),
        "description": item.get("description", ""),
    }
    if args.get("bounds"):
        action["bounds"] = args["bounds"]
    return action


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


def plan_message(view: Mapping[str, Any]) -> pb.Plan:
    data = {key: value for key, value in view.items() if key in _PLAN_FIELDS}
    data["actions"] = [_action(item) for item in view.get("actions", [])]
    data["ambiguities"] = [
        {
            "name": amb["name"],
            "candidates": [
                {"id": c["id"], "role": c["role"], **({"bounds": c["bounds"]} if c.get("bounds") else {})}
                for c in amb["candidates"]
            ],
        }
        for amb in view.get("ambiguities", [])
    ]
    return ParseDict(data, pb.Plan())
