"""The action schema of seed 001 ("Prompting instructions"): what a plan may ask for, as strict JSON.

A model answers `{"actions": [...]}`: the seed's array wrapped in an object, because the shared JSON
protocol (R2) and grammar-constrained decoding work on objects. Every action is
`{"type", "args": {target?, text?, delayMs?, uiElementId?, bounds?, requireConfirmation?, metadata?}}`."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kronii.vision.core.context import Bounds

__all__ = [
    "ACTION_SCHEMA",
    "MAX_ACTIONS",
    "Action",
    "ActionClass",
    "ActionType",
    "action_class",
    "actions_from_reply",
]

MAX_ACTIONS = 8
MAX_TEXT = 500
MAX_WAIT_MS = 10_000


class ActionType(enum.StrEnum):
    OPEN_APP = "open_app"
    TYPE_TEXT = "type_text"
    WAIT = "wait"
    CLICK_BY_BOUNDS = "click_by_bounds"
    CONFIRM = "confirm"


class ActionClass(enum.StrEnum):
    """Every action type belongs to one class, and every class has a policy (allow, confirm, deny)."""

    READ_ONLY = "read_only"
    INPUT = "input"
    LAUNCH = "launch"


_CLASSES = {
    ActionType.OPEN_APP: ActionClass.LAUNCH,
    ActionType.TYPE_TEXT: ActionClass.INPUT,
    ActionType.CLICK_BY_BOUNDS: ActionClass.INPUT,
    ActionType.WAIT: ActionClass.READ_ONLY,
    ActionType.CONFIRM: ActionClass.READ_ONLY,
}


def action_class(kind: ActionType) -> ActionClass:
    return _CLASSES[kind]


@dataclass(frozen=True, slots=True)
class Action:
    type: ActionType
    target: str = ""
    text: str = ""
    delay_ms: int = 0
    ui_element_id: str = ""
    # In the redacted screenshot's pixels (a model sees OCR zones in those); see core/pixels.py.
    bounds: Bounds | None = None
    require_confirmation: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)

    def flagged(self, reason: str) -> Action:
        """This action with confirmation required and `reason` added to its metadata."""
        notes = dict(self.metadata)
        notes["confirm_reason"] = "; ".join(filter(None, (notes.get("confirm_reason", ""), reason)))
        return replace(self, require_confirmation=True, metadata=notes)

    def describe(self) -> str:
        """One line for a person: the confirmation dialog, `kronii vision show`, the audit row."""
        what = {
            ActionType.OPEN_APP: f"open {self.target}",
            ActionType.TYPE_TEXT: f"type {self.text!r}" + (f" into {self.target}" if self.target else ""),
            ActionType.WAIT: f"wait {self.delay_ms} ms",
            ActionType.CLICK_BY_BOUNDS: f"click {self.target or self.ui_element_id or 'at the bounds'}",
            ActionType.CONFIRM: f"ask: {self.text}",
        }[self.type]
        if self.ui_element_id:
            what += f" [{self.ui_element_id}]"
        return what

    def as_dict(self) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if self.target:
            args["target"] = self.target
        if self.text:
            args["text"] = self.text
        if self.delay_ms:
            args["delayMs"] = self.delay_ms
        if self.ui_element_id:
            args["uiElementId"] = self.ui_element_id
        if self.bounds is not None:
            args["bounds"] = self.bounds.as_dict()
        if self.require_confirmation:
            args["requireConfirmation"] = True
        if self.metadata:
            args["metadata"] = dict(self.metadata)
        return {"type": self.type.value, "args": args}


_BOUNDS_SCHEMA = {
    "type": "object",
    "properties": {k: {"type": "integer", "minimum": -100_000, "maximum": 100_000} for k in ("x", "y")}
    | {k: {"type": "integer", "minimum": 0, "maximum": 100_000} for k in ("width", "height")},
    "required": ["x", "y", "width", "height"],
    "additionalProperties": False,
}

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "actions": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_ACTIONS,
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": [t.value for t in ActionType]},
                    "args": {
                        "type": "object",
                        "properties": {
                            "target": {"type": "string", "maxLength": 200},
                            "text": {"type": "string", "maxLength": MAX_TEXT},
                            "delayMs": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS},
                            "uiElementId": {"type": "string", "maxLength": 16},
                            "bounds": _BOUNDS_SCHEMA,
                            "requireConfirmation": {"type": "boolean"},
                            "metadata": {
                                "type": "object",
                                "additionalProperties": {"type": "string", "maxLength": 200},
                                "maxProperties": 8,
                            },
                        },
                        "additionalProperties": False,
                    },
                },
                "required": ["type", "args"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["actions"],
    "additionalProperties": False,
}


def _action(item: Mapping[str, Any]) -> Action:
    args: Mapping[str, Any] = item.get("args") or {}
    bounds = args.get("bounds")
    metadata = args.get("metadata") or {}
    return Action(
        type=ActionType(item["type"]),
        target=str(args.get("target", "")),
        text=str(args.get("text", "")),
        delay_ms=int(args.get("delayMs", 0)),
        ui_element_id=str(args.get("uiElementId", "")),
        bounds=Bounds.from_dict(bounds) if isinstance(bounds, Mapping) else None,
        require_confirmation=bool(args.get("requireConfirmation", False)),
        metadata={str(k): str(v) for k, v in metadata.items()},
    )


def actions_from_reply(data: Mapping[str, Any]) -> tuple[Action, ...]:
    """The actions of a reply already valid for ACTION_SCHEMA."""
    return tuple(_action(item) for item in data["actions"])
