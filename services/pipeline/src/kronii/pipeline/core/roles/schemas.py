"""JSON schemas (draft 2020-12) of each role's output, as data, so a model backend can validate
what a model wrote before the pipeline trusts it. Every output is an object at the top level
(what structured-output APIs ask for). `codec` converts between these documents and the types.

`context_hash` is optional in the Synthesizer's schema: a model cannot be trusted to hash, so
`codec.synthesis_from_json` computes it from the fragments when it is missing."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from kronii.pipeline.core.roles.values import ConfidenceLabel, CostLabel, NotificationActionKind, Role
from kronii.pipeline.core.states import CapturePreemption, TriggerKind

JsonObject = dict[str, Any]

_CONFIDENCE: JsonObject = {"type": "number", "minimum": 0, "maximum": 1}
_TEXT: JsonObject = {"type": "string", "maxLength": 2000}

FRAGMENT: JsonObject = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "minLength": 1, "maxLength": 64},
        "value": _TEXT,
        "confidence": _CONFIDENCE,
        "source": {"type": "string", "minLength": 1, "maxLength": 128},
    },
    "required": ["kind", "value", "confidence", "source"],
    "additionalProperties": False,
}

EXTRACTOR_OUTPUT: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ExtractorOutput",
    "type": "object",
    "properties": {"fragments": {"type": "array", "items": FRAGMENT, "maxItems": 64}},
    "required": ["fragments"],
    "additionalProperties": False,
}

CANDIDATE: JsonObject = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "minLength": 1, "maxLength": 64},
        "key": {"type": "string", "maxLength": 512},
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "rationale": _TEXT,
        "confidence": _CONFIDENCE,
        "confidence_label": {"enum": [label.value for label in ConfidenceLabel]},
        "sources": {"type": "array", "items": {"type": "string", "maxLength": 128}, "maxItems": 32},
    },
    "required": ["action", "title", "rationale", "confidence"],
    "additionalProperties": False,
}

SYNTHESIZER_OUTPUT: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "SynthesizerOutput",
    "type": "object",
    "properties": {
        "candidates": {"type": "array", "items": CANDIDATE, "maxItems": 16},
        "fragments": {"type": "array", "items": FRAGMENT, "maxItems": 64},
        "conflicts": {"type": "array", "items": _TEXT, "maxItems": 64},
        "context_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "cost_label": {"enum": [label.value for label in CostLabel]},
    },
    "required": ["candidates", "conflicts", "cost_label"],
    "additionalProperties": False,
}

PLANNER_OUTPUT: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PlannerOutput",
    "type": "object",
    "properties": {
        "notify": {"type": "boolean"},
        "next_wakeup_ms": {"type": "integer", "minimum": 0},
        "min_cooldown_ms": {"type": "integer", "minimum": 0},
        "trigger_filters": {
            "type": "array",
            "items": {"enum": [kind.value for kind in TriggerKind]},
            "uniqueItems": True,
        },
        "reason": _TEXT,
        "capture_preemption": {"enum": [p.value for p in CapturePreemption]},
    },
    "required": ["notify", "next_wakeup_ms", "min_cooldown_ms", "trigger_filters", "reason"],
    "additionalProperties": False,
}

NOTIFICATION_ACTION: JsonObject = {
    "type": "object",
    "properties": {
        "kind": {"enum": [kind.value for kind in NotificationActionKind]},
        "label": {"type": "string", "minLength": 1, "maxLength": 80},
        "snooze_ms": {"type": "integer", "minimum": 0},
        "target": {"type": "string", "maxLength": 64},
    },
    "required": ["kind", "label"],
    "additionalProperties": False,
}

NOTIFICATION: JsonObject = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "body": _TEXT,
        "source_summary": {"type": "string", "minLength": 1, "maxLength": 500},
        # The seed wants snooze and disable entry points on every notification.
        "actions": {
            "type": "array",
            "items": NOTIFICATION_ACTION,
            "allOf": [
                {"contains": {"properties": {"kind": {"const": "snooze"}}}},
                {"contains": {"properties": {"kind": {"const": "disable"}}}},
            ],
        },
        "context_hash": {"type": "string", "maxLength": 64},
        "candidate_key": {"type": "string", "maxLength": 512},
    },
    "required": ["title", "body", "source_summary", "actions"],
    "additionalProperties": False,
}

NOTIFIER_OUTPUT: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "NotifierOutput",
    "type": "object",
    "properties": {"notification": {"oneOf": [{"type": "null"}, NOTIFICATION]}},
    "required": ["notification"],
    "additionalProperties": False,
}

ROLE_SCHEMAS: Mapping[Role, JsonObject] = MappingProxyType(
    {
        Role.EXTRACTOR: EXTRACTOR_OUTPUT,
        Role.SYNTHESIZER: SYNTHESIZER_OUTPUT,
        Role.PLANNER: PLANNER_OUTPUT,
        Role.NOTIFIER: NOTIFIER_OUTPUT,
    }
)


class RoleOutputError(ValueError):
    """A role's output does not match its schema; `problems` name the fields ("$.fragments[0].kind: ...")."""

    def __init__(self, role: Role, problems: list[str]) -> None:
        super().__init__(f"{role} output does not match its schema: {'; '.join(problems)}")
        self.role = role
        self.problems = tuple(problems)


def output_problems(role: Role, document: object) -> list[str]:
    """Every schema violation of `document` as "<json path>: <message>", empty when valid."""
    # Imported here: the settings read these schemas' sizes, and `kronii status` should not pay for jsonschema.
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    validator = jsonschema.Draft202012Validator(ROLE_SCHEMAS[role])
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{error.json_path}: {error.message}" for error in errors]


def check_output(role: Role, document: object) -> None:
    problems = output_problems(role, document)
    if problems:
        raise RoleOutputError(role, problems)
