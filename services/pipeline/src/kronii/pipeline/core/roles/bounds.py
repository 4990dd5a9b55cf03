"""What a model's answer may be, beyond its schema: the domain's bounds, and the output budget each
role needs to fit its largest allowed answer. Pure: no I/O, time passed in.

A reply that is valid JSON for the schema but out of these bounds counts as invalid (R2's retry,
then the rules' answer): confidence above 0, cooldowns and wake-ups within the limits the runner
and the scheduler keep, distinct filters that never mute the lock signals, texts within their
lengths that are not copies of a field name or of each other, and extracted values whose words
are in the context the model was given (a value the context does not hold was invented).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kronii.pipeline.core.roles.schemas import ROLE_SCHEMAS
from kronii.pipeline.core.roles.values import Role
from kronii.pipeline.core.states import TriggerKind

__all__ = [
    "COOLDOWN_CHOICES_MS",
    "FILTERABLE_TRIGGERS",
    "LIMITS",
    "WAKEUP_CHOICES_MS",
    "ModelBounds",
    "TextLimits",
    "largest_answer",
    "model_schema",
    "output_budget",
    "problems",
]


@dataclass(frozen=True, slots=True)
class TextLimits:
    """Counts and lengths a model's answer keeps to; the prompts say them and the budgets fit them."""

    fragments: int = 4
    fragment_kind: int = 32
    fragment_value: int = 120
    fragment_source: int = 40
    candidates: int = 2
    action: int = 32
    title: int = 100
    rationale: int = 240
    conflicts: int = 2
    conflict: int = 120
    reason: int = 160
    body: int = 240
    source_summary: int = 120
    label: int = 40


LIMITS = TextLimits()


@dataclass(frozen=True, slots=True)
class ModelBounds:
    """The time bounds of a plan, from the runner's and the scheduler's limits."""

    max_cooldown_ms: int = 3_600_000
    max_wakeup_ahead_ms: int = 24 * 3_600_000
    # A wake-up a little in the past is a clock's rounding, not nonsense: it fires at once.
    past_tolerance_ms: int = 60_000
    max_snooze_ms: int = 24 * 3_600_000


# The planner picks its times from these (a small model copies a number far better than it adds
# one); the grammar offers exactly these values, relative to the call's now.
WAKEUP_CHOICES_MS = (600_000, 1_800_000, 3_600_000)
COOLDOWN_CHOICES_MS = (300_000, 600_000, 1_200_000, 1_800_000, 3_600_000)

# Lock start and end carry the privacy rules (capture stops when the screen locks): never muted.
FILTERABLE_TRIGGERS = frozenset(
    {
        TriggerKind.TITLE_CHANGED.value,
        TriggerKind.ACTIVITY_PULSE.value,
        TriggerKind.FOCUS_CHANGED.value,
        TriggerKind.STATE_CHANGED.value,
        TriggerKind.TICK.value,
    }
)

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]*\Z")
_SOURCE = re.compile(r"(window|trigger|screenshot|plugin:[\w.\-]+)\Z")
_WORD = re.compile(r"[^\W_]{3,}")
# JSON with short strings costs a small model's tokenizer about one token per three characters.
_CHARS_PER_TOKEN = 3


def _field_names() -> frozenset[str]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.update(str(key) for key in properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(list(ROLE_SCHEMAS.values()))
    # A schema's own title ("NotifierOutput") is a name too: Gemma 3 270M wrote it as a notification title.
    names.update(str(schema.get("title", "")).lower() for schema in ROLE_SCHEMAS.values())
    return frozenset(name for name in names if name)


FIELD_NAMES = _field_names()


def _text(problems: list[str], where: str, value: object, limit: int, *, empty: bool = False) -> str:
    text = str(value).strip()
    if not text and not empty:
        problems.append(f"{where} is empty")
    elif len(text) > limit:
        problems.append(f"{where} is longer than {limit} characters")
    elif text.lower() in FIELD_NAMES:
        problems.append(f"{where} is the field name {text!r}, not a value")
    elif text.startswith("<") and text.endswith(">"):
        problems.append(f"{where} is the prompt's placeholder {text!r}, not a value")
    return text.lower()


def _distinct(problems: list[str], where: str, values: Iterable[str]) -> None:
    seen: set[str] = set()
    for value in values:
        if value and value in seen:
            problems.append(f"{where} repeat {value!r}")
        seen.add(value)


def _extractor(data: Mapping[str, Any], context: str) -> list[str]:
    problems: list[str] = []
    fragments = data.get("fragments", [])
    if len(fragments) > LIMITS.fragments:
        problems.append(f"more than {LIMITS.fragments} fragments")
    known = {word.lower() for word in _WORD.findall(context)}
    for index, fragment in enumerate(fragments):
        where = f"fragments[{index}]"
        kind = _text(problems, f"{where}.kind", fragment["kind"], LIMITS.fragment_kind)
        if kind and not _IDENTIFIER.match(kind):
            problems.append(f"{where}.kind {kind!r} is not a lower-case word")
        value = _text(problems, f"{where}.value", fragment["value"], LIMITS.fragment_value)
        if value and value == kind:
            problems.append(f"{where}.value repeats its kind")
        invented = [word for word in _WORD.findall(value) if word.lower() not in known]
        if invented:
            problems.append(f"{where}.value has words the context does not hold: {', '.join(invented[:3])}")
        if not fragment["confidence"] > 0:
            problems.append(f"{where}.confidence is 0")
        if not _SOURCE.match(str(fragment["source"])):
            problems.append(f"{where}.source must be window, trigger, screenshot or plugin:<id>")
    return problems


def _synthesizer(data: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    candidates = data.get("candidates", [])
    if len(candidates) > LIMITS.candidates:
        problems.append(f"more than {LIMITS.candidates} candidates")
    for index, candidate in enumerate(candidates):
        where = f"candidates[{index}]"
        action = _text(problems, f"{where}.action", candidate["action"], LIMITS.action)
        if action and not _IDENTIFIER.match(action):
            problems.append(f"{where}.action {action!r} is not a lower-case word")
        title = _text(problems, f"{where}.title", candidate["title"], LIMITS.title)
        rationale = _text(problems, f"{where}.rationale", candidate["rationale"], LIMITS.rationale)
        if title and title in (action, rationale):
            problems.append(f"{where}.title copies another field")
        if rationale and rationale == action:
            problems.append(f"{where}.rationale copies the action")
        if not candidate["confidence"] > 0:
            problems.append(f"{where}.confidence is 0")
    _distinct(problems, "candidate titles", (str(c["title"]).strip().lower() for c in candidates))
    conflicts = data.get("conflicts", [])
    if len(conflicts) > LIMITS.conflicts:
        problems.append(f"more than {LIMITS.conflicts} conflicts")
    for index, conflict in enumerate(conflicts):
        _text(problems, f"conflicts[{index}]", conflict, LIMITS.conflict)
    return problems


def _planner(data: Mapping[str, Any], now_ms: int, bounds: ModelBounds) -> list[str]:
    problems: list[str] = []
    wakeup = int(data["next_wakeup_ms"])
    if not now_ms - bounds.past_tolerance_ms <= wakeup <= now_ms + bounds.max_wakeup_ahead_ms:
        problems.append(
            f"next_wakeup_ms must be between now ({now_ms}) and {bounds.max_wakeup_ahead_ms} ms ahead"
        )
    if not 0 <= int(data["min_cooldown_ms"]) <= bounds.max_cooldown_ms:
        problems.append(f"min_cooldown_ms must be 0..{bounds.max_cooldown_ms}")
    filters = [str(item) for item in data["trigger_filters"]]
    _distinct(problems, "trigger_filters", filters)
    muted = sorted(set(filters) - FILTERABLE_TRIGGERS)
    if muted:
        problems.append(f"trigger_filters may not mute {', '.join(muted)}")
    _text(problems, "reason", data["reason"], LIMITS.reason)
    return problems


def _notifier(data: Mapping[str, Any], bounds: ModelBounds, context: str) -> list[str]:
    notification = data.get("notification")
    if notification is None:
        return []
    problems: list[str] = []
    title = _text(problems, "title", notification["title"], LIMITS.title)
    known = {word.lower() for word in _WORD.findall(context)}
    if context and title and not any(word.lower() in known for word in _WORD.findall(title)):
        problems.append("title names nothing of the suggestion it announces")
    body = _text(problems, "body", notification["body"], LIMITS.body)
    if title and title == body:
        problems.append("body copies the title")
    _text(problems, "source_summary", notification["source_summary"], LIMITS.source_summary)
    labels = [
        _text(problems, f"actions[{i}].label", action["label"], LIMITS.label)
        for i, action in enumerate(notification["actions"])
    ]
    _distinct(problems, "action labels", labels)
    for index, action in enumerate(notification["actions"]):
        snooze = int(action.get("snooze_ms", 0))
        if not 0 <= snooze <= bounds.max_snooze_ms:
            problems.append(f"actions[{index}].snooze_ms must be 0..{bounds.max_snooze_ms}")
    return problems


def problems(
    role: Role,
    data: Mapping[str, Any],
    *,
    now_ms: int,
    context: str = "",
    bounds: ModelBounds | None = None,
) -> list[str]:
    """Why a schema-valid answer is out of bounds; empty when it is fine. `context` is the text the
    role was given: the extractor's values must come from there, a notification's title must name
    something of it; `now_ms` is the planner's now."""
    bounds = bounds or ModelBounds()
    if role is Role.EXTRACTOR:
        return _extractor(data, context)
    if role is Role.SYNTHESIZER:
        return _synthesizer(data)
    if role is Role.PLANNER:
        return _planner(data, now_ms, bounds)
    return _notifier(data, bounds, context)


def largest_answer(role: Role) -> dict[str, Any]:
    """The longest answer the limits allow for `role`: what its output budget must fit."""
    fragment = {
        "kind": "k" * LIMITS.fragment_kind,
        "value": "v" * LIMITS.fragment_value,
        "confidence": 0.875,
        "source": "s" * LIMITS.fragment_source,
    }
    if role is Role.EXTRACTOR:
        return {"fragments": [fragment] * LIMITS.fragments}
    if role is Role.SYNTHESIZER:
        candidate = {
            "action": "a" * LIMITS.action,
            "title": "t" * LIMITS.title,
            "rationale": "r" * LIMITS.rationale,
            "confidence": 0.875,
        }
        return {
            "candidates": [candidate] * LIMITS.candidates,
            "conflicts": ["c" * LIMITS.conflict] * LIMITS.conflicts,
            "cost_label": "medium",
        }
    if role is Role.PLANNER:
        return {
            "notify": False,
            "next_wakeup_ms": 9_999_999_999_999,
            "min_cooldown_ms": 3_600_000,
            "trigger_filters": ["activity_pulse", "title_changed"],
            "reason": "r" * LIMITS.reason,
            "capture_preemption": "downgrade",
        }
    action = {"label": "l" * LIMITS.label, "snooze_ms": 3_600_000}
    return {
        "notification": {
            "title": "t" * LIMITS.title,
            "body": "b" * LIMITS.body,
            "source_summary": "s" * LIMITS.source_summary,
            "actions": [{"kind": "snooze", **action}, {"kind": "disable", **action}],
        }
    }


def output_budget(role: Role) -> int:
    """Output tokens for one `role` call: its largest allowed answer, pretty-printed the way small
    models write it, rounded up to 32."""
    text = json.dumps(largest_answer(role), indent=2)
    tokens = math.ceil(len(text) / _CHARS_PER_TOKEN)
    return math.ceil(tokens / 32) * 32


def _narrow(node: dict[str, Any], drop: Iterable[str] = (), **max_lengths: int) -> None:
    properties = node["properties"]
    for name in drop:
        properties.pop(name, None)
    for name, limit in max_lengths.items():
        properties[name]["maxLength"] = limit


def model_schema(role: Role, *, sources: Iterable[str] = (), now_ms: int | None = None) -> dict[str, Any]:
    """The role's schema as a model is asked for it: without the fields the pipeline computes
    itself (hashes, keys, sources, snooze times), with the counts and lengths of `LIMITS`. All
    bounds are short enough for llama.cpp's grammar (one rule per allowed character), so a
    grammar-constrained model cannot ramble past them; the full schema still checks the result.
    `sources` are the extractor's possible fragment sources for this call (window, plugin:<id>...);
    `now_ms` the planner's now, from which its wake-up choices are counted."""
    schema = copy.deepcopy(dict(ROLE_SCHEMAS[role]))
    schema.pop("$schema", None)
    properties = schema["properties"]
    if role is Role.EXTRACTOR:
        properties["fragments"]["maxItems"] = LIMITS.fragments
        _narrow(
            properties["fragments"]["items"],
            kind=LIMITS.fragment_kind,
            value=LIMITS.fragment_value,
            source=LIMITS.fragment_source,
        )
        if sources:
            fragment = properties["fragments"]["items"]["properties"]
            fragment["source"] = {"enum": sorted(set(sources))}
    elif role is Role.SYNTHESIZER:
        _narrow(schema, drop=("fragments", "context_hash"))
        properties["candidates"]["maxItems"] = LIMITS.candidates
        _narrow(
            properties["candidates"]["items"],
            drop=("key", "sources", "confidence_label"),
            action=LIMITS.action,
            title=LIMITS.title,
            rationale=LIMITS.rationale,
        )
        properties["conflicts"]["maxItems"] = LIMITS.conflicts
        properties["conflicts"]["items"]["maxLength"] = LIMITS.conflict
    elif role is Role.PLANNER:
        _narrow(schema, drop=("capture_preemption",), reason=LIMITS.reason)
        properties["trigger_filters"]["items"] = {"enum": sorted(FILTERABLE_TRIGGERS)}
        properties["min_cooldown_ms"] = {"enum": list(COOLDOWN_CHOICES_MS)}
        if now_ms is not None:
            properties["next_wakeup_ms"] = {"enum": [now_ms + ahead for ahead in WAKEUP_CHOICES_MS]}
    else:
        notification = properties["notification"]["oneOf"][1]
        _narrow(
            notification,
            drop=("context_hash", "candidate_key"),
            title=LIMITS.title,
            body=LIMITS.body,
            source_summary=LIMITS.source_summary,
        )
        actions = notification["properties"]["actions"]
        actions["maxItems"] = 2
        _narrow(actions["items"], drop=("snooze_ms", "target"), label=LIMITS.label)
    return schema
