"""The plan's view (a dict, plan_book.PlanRecord.view) as vision.proto's Plan, for both transports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf.json_format import ParseDict
from kronii.vision.v1 import vision_pb2 as pb

__all__ = ["plan_message"]

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
