"""Role values to and from the JSON documents of `schemas`. `*_from_json` validate first, so a
model's output either becomes a typed value or raises `RoleOutputError` naming the fields."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronii.pipeline.core.roles import rules
from kronii.pipeline.core.roles.schemas import JsonObject, check_output
from kronii.pipeline.core.roles.values import (
    Candidate,
    ConfidenceLabel,
    CostLabel,
    Fragment,
    Notification,
    NotificationAction,
    NotificationActionKind,
    Plan,
    Role,
    Synthesis,
    confidence_label,
)
from kronii.pipeline.core.states import CapturePreemption


def _fragment(fragment: Fragment) -> JsonObject:
    return {
        "kind": fragment.kind,
        "value": fragment.value,
        "confidence": fragment.confidence,
        "source": fragment.source,
    }


def fragments_to_json(fragments: Sequence[Fragment]) -> JsonObject:
    return {"fragments": [_fragment(f) for f in fragments]}


def synthesis_to_json(synthesis: Synthesis) -> JsonObject:
    return {
        "candidates": [
            {
                "action": c.action,
                "key": c.key,
                "title": c.title,
                "rationale": c.rationale,
                "confidence": c.confidence,
                "confidence_label": c.confidence_label.value,
                "sources": list(c.sources),
            }
            for c in synthesis.candidates
        ],
        "fragments": [_fragment(f) for f in synthesis.fragments],
        "conflicts": list(synthesis.conflicts),
        "context_hash": synthesis.context_hash,
        "cost_label": synthesis.cost_label.value,
    }


def plan_to_json(plan: Plan) -> JsonObject:
    return {
        "notify": plan.notify,
        "next_wakeup_ms": plan.next_wakeup_ms,
        "min_cooldown_ms": plan.min_cooldown_ms,
        "trigger_filters": list(plan.trigger_filters),
        "reason": plan.reason,
        "capture_preemption": plan.capture_preemption.value,
    }


def notification_to_json(notification: Notification | None) -> JsonObject:
    if notification is None:
        return {"notification": None}
    return {
        "notification": {
            "title": notification.title,
            "body": notification.body,
            "source_summary": notification.source_summary,
            "actions": [
                {"kind": a.kind.value, "label": a.label, "snooze_ms": a.snooze_ms, "target": a.target}
                for a in notification.actions
            ],
            "context_hash": notification.context_hash,
            "candidate_key": notification.candidate_key,
        }
    }


def _fragment_from(data: dict[str, Any]) -> Fragment:
    return Fragment(str(data["kind"]), str(data["value"]), float(data["confidence"]), str(data["source"]))


def fragments_from_json(document: object) -> list[Fragment]:
    check_output(Role.EXTRACTOR, document)
    assert isinstance(document, dict)  # the schema says so
    return [_fragment_from(f) for f in document["fragments"]]


def synthesis_from_json(document: object, input_fragments: Sequence[Fragment]) -> Synthesis:
    """A Synthesizer's output; fragments default to the merged input, the hash is always recomputed
    from the fragments (a model's own hash is not trusted)."""
    check_output(Role.SYNTHESIZER, document)
    assert isinstance(document, dict)
    if "fragments" in document:
        fragments = tuple(_fragment_from(f) for f in document["fragments"])
    else:
        fragments = rules.merge(input_fragments)[0]
    candidates = tuple(
        Candidate(
            action=c["action"],
            key=c.get("key") or f"{c['action']}:{c['title']}",
            title=c["title"],
            rationale=c["rationale"],
            confidence=float(c["confidence"]),
            confidence_label=ConfidenceLabel(c["confidence_label"])
            if "confidence_label" in c
            else confidence_label(float(c["confidence"])),
            sources=tuple(c.get("sources", ())),
        )
        for c in document["candidates"]
    )
    return Synthesis(
        candidates=candidates,
        fragments=fragments,
        conflicts=tuple(document["conflicts"]),
        context_hash=rules.context_hash(fragments),
        cost_label=CostLabel(document["cost_label"]),
    )


def plan_from_json(document: object) -> Plan:
    check_output(Role.PLANNER, document)
    assert isinstance(document, dict)
    return Plan(
        notify=bool(document["notify"]),
        next_wakeup_ms=int(document["next_wakeup_ms"]),
        min_cooldown_ms=int(document["min_cooldown_ms"]),
        trigger_filters=tuple(document["trigger_filters"]),
        reason=str(document["reason"]),
        capture_preemption=CapturePreemption(document.get("capture_preemption", CapturePreemption.CANCEL)),
    )


def notification_from_json(
    document: object, context_hash: str = "", candidate_key: str = ""
) -> Notification | None:
    check_output(Role.NOTIFIER, document)
    assert isinstance(document, dict)
    data = document["notification"]
    if data is None:
        return None
    return Notification(
        title=data["title"],
        body=data["body"],
        source_summary=data["source_summary"],
        actions=tuple(
            NotificationAction(
                NotificationActionKind(a["kind"]),
                a["label"],
                int(a.get("snooze_ms", 0)),
                str(a.get("target", "")),
            )
            for a in data["actions"]
        ),
        context_hash=data.get("context_hash") or context_hash,
        candidate_key=data.get("candidate_key") or candidate_key,
    )
