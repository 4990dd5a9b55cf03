"""Wire <-> core for the pipeline, both ways: messages from the bus (sensor activity, plugin events,
scheduler ticks, plugin registrations) and trigger requests from agents as the core's commands
(`TriggerCommand`, stamped with the receiver's clock by the use case that takes it); notices from
other kronii services as the core's `Notice` (at the receiver's epoch-anchored monotonic
milliseconds); and the core's records (runs, plugins, controls) as the HTTP API's JSON."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any, Protocol

from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as apb
from kronii.edge.openapi import message_schema
from kronii.pipeline.core.commands import RecordedTrigger, TriggerCommand
from kronii.pipeline.core.controls import SourceControl
from kronii.pipeline.core.notices import Notice
from kronii.pipeline.core.plugins import Capabilities, PluginRecord, PluginRegistration
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import Priority, TriggerKind
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2 as spb

__all__ = [
    "REQUEST_SCHEMA",
    "TriggerRequestError",
    "control_json",
    "notice_from_message",
    "plugin_json",
    "recorded_triggers",
    "registration_from_message",
    "run_json",
    "trigger_from_message",
    "trigger_from_request",
]

_STATE_NAMES = {
    apb.ACTIVITY_STATE_ACTIVE: "active",
    apb.ACTIVITY_STATE_PASSIVE: "passive",
    apb.ACTIVITY_STATE_INACTIVE: "inactive",
    apb.ACTIVITY_STATE_LOCKED: "locked",
}

# What POST /v1/triggers takes: the core's external kinds, and "manual" (a person asking for a round).
REQUEST_KINDS = {
    **{
        kind.value: kind
        for kind in TriggerKind
        if kind not in (TriggerKind.INTERNAL, TriggerKind.CAPTURE_STATUS, TriggerKind.TIMEOUT)
    },
    "manual": TriggerKind.TICK,
}
_MAX_TEXT = 1_000
_MAX_WINDOW_DIGITS = 20  # an X window id is 32 bits; more digits are not an id


def _request_schema() -> dict[str, Any]:
    """What POST /v1/triggers documents: the proto's fields (ParseDict refuses unknown ones), with
    the kinds it takes listed and a source required."""
    schema = message_schema(pb.TriggerRequest.DESCRIPTOR)
    schema["properties"].update(
        kind={"type": "string", "enum": sorted(REQUEST_KINDS)},
        source={"type": "string", "minLength": 1, "pattern": r"\S"},
    )
    schema["required"] = ["kind", "source"]
    return schema


REQUEST_SCHEMA = _request_schema()


class TriggerRequestError(ValueError):
    """A trigger request that cannot be taken; the message names the field."""


def _focus_trigger(kind: TriggerKind, focus: apb.Focus, priority: Priority) -> TriggerCommand:
    return TriggerCommand(
        kind,
        app=focus.app_name,
        wm_class=focus.wm_class,
        window_id=int(focus.window_id),
        title=focus.title,
        priority=priority,
    )


def trigger_from_message(message: Message) -> TriggerCommand | None:
    """The trigger a bus message stands for; None for messages that are not triggers."""
    if isinstance(message, apb.FocusChanged):
        # Another app taking the focus is news worth preempting a cooldown or a capture for.
        priority = Priority.HIGH if message.change == "app" else Priority.NORMAL
        return _focus_trigger(TriggerKind.FOCUS_CHANGED, message.current, priority)
    if isinstance(message, apb.TitleChanged):
        return _focus_trigger(TriggerKind.TITLE_CHANGED, message.focus, Priority.NORMAL)
    if isinstance(message, apb.StateChanged):
        transition = message.transition
        return TriggerCommand(
            TriggerKind.STATE_CHANGED,
            from_state=_STATE_NAMES.get(transition.__getattribute__("from"), ""),
            to_state=_STATE_NAMES.get(transition.to, ""),
        )
    if isinstance(message, apb.ActivityPulse):
        return TriggerCommand(TriggerKind.ACTIVITY_PULSE)
    if isinstance(message, apb.LockChanged):
        kind = TriggerKind.LOCK_START if message.locked else TriggerKind.LOCK_END
        return TriggerCommand(kind, priority=Priority.HIGH if not message.locked else Priority.NORMAL)
    if isinstance(message, pb.PluginEvent):
        high = message.attributes.get("priority", "") == "high"
        return TriggerCommand(
            TriggerKind.PLUGIN_EVENT,
            plugin_app_id=message.app_id,
            plugin_kind=message.kind,
            priority=Priority.HIGH if high else Priority.NORMAL,
        )
    if isinstance(message, spb.Tick):
        return TriggerCommand(TriggerKind.TICK, app=message.app)
    if isinstance(message, pb.TriggerRequest):
        return trigger_from_request(message)
    return None


def _text(attributes: Mapping[str, str], name: str) -> str:
    value = attributes.get(name, "")
    if len(value) > _MAX_TEXT:
        raise TriggerRequestError(f"attributes.{name} is longer than {_MAX_TEXT} characters")
    return value


def trigger_from_request(request: pb.TriggerRequest) -> TriggerCommand:
    """A TriggerRequest (POST /v1/triggers, kronii.pipeline.trigger) as a TriggerCommand, or
    TriggerRequestError naming the field that is wrong."""
    # Exactly as listed: "TICK" or "manual\n" is a caller's mistake to hear about, not to guess.
    kind = REQUEST_KINDS.get(request.kind)
    if kind is None:
        raise TriggerRequestError(
            f"kind must be one of {', '.join(sorted(REQUEST_KINDS))}, not {request.kind!r}"
        )
    if not request.source.strip():
        raise TriggerRequestError("source is required: who sends the trigger (an agent id, a plugin, 'cli')")
    attributes = request.attributes
    window_id = _window_id(attributes)
    plugin_kind = _text(attributes, "plugin_kind") or _text(attributes, "event")
    _check_kind_needs(kind, request.app_id, plugin_kind, attributes)
    return TriggerCommand(
        kind,
        app=request.app_id if kind is not TriggerKind.PLUGIN_EVENT else "",
        wm_class=_text(attributes, "wm_class"),
        window_id=window_id,
        title=_text(attributes, "title"),
        priority=Priority.HIGH if request.high_priority else Priority.NORMAL,
        from_state=_text(attributes, "from_state"),
        to_state=_text(attributes, "to_state"),
        plugin_app_id=request.app_id if kind is TriggerKind.PLUGIN_EVENT else "",
        plugin_kind=plugin_kind,
    )


def _window_id(attributes: Mapping[str, str]) -> int:
    """attributes.window_id as a number (0 when absent), or TriggerRequestError."""
    window = attributes.get("window_id", "0") or "0"
    if not window.isdigit() or not window.isascii():
        raise TriggerRequestError("attributes.window_id must be a whole number")
    if len(window) > _MAX_WINDOW_DIGITS:
        raise TriggerRequestError(f"attributes.window_id has more than {_MAX_WINDOW_DIGITS} digits")
    return int(window)


def _check_kind_needs(
    kind: TriggerKind, app_id: str, plugin_kind: str, attributes: Mapping[str, str]
) -> None:
    """TriggerRequestError when the request lacks what its kind needs: a plugin_event its plugin's app id and
    event kind, a state_changed the state it changed to."""
    if kind is TriggerKind.PLUGIN_EVENT and not (app_id and plugin_kind):
        raise TriggerRequestError("a plugin_event needs app_id and attributes.plugin_kind")
    if kind is TriggerKind.STATE_CHANGED and not _text(attributes, "to_state"):
        raise TriggerRequestError("a state_changed needs attributes.to_state")


_MAX_NOTICE_TITLE = 200
_MAX_NOTICE_BODY = 2_000
_MAX_OFFER_LABEL = 64
# An offer's id as the supervisor takes it (1 to 128 letters, digits or ._:@/-).
_OFFER_ID = re.compile(r"[A-Za-z0-9._:@/-]{1,128}")


def _offer_of(message: pb.Notice) -> tuple[str, str]:
    """(offer id, button label); ("", "") for a notice that offers nothing."""
    if not message.offer_id:
        if message.offer_label:
            raise TriggerRequestError("a notice's offer_label needs an offer_id")
        return "", ""
    if not _OFFER_ID.fullmatch(message.offer_id):
        raise TriggerRequestError("a notice's offer_id must be 1 to 128 letters, digits or ._:@/-")
    label = " ".join(message.offer_label.split())
    if len(label) > _MAX_OFFER_LABEL:
        raise TriggerRequestError(f"a notice's offer_label is at most {_MAX_OFFER_LABEL} characters")
    return message.offer_id, label


def notice_from_message(message: pb.Notice, now_ms: int) -> Notice:
    """A notice as the core reads it; TriggerRequestError (a ValueError) says what is wrong with it."""
    for name in ("source", "kind"):
        value = getattr(message, name)
        if not value or not value.replace("_", "").replace("-", "").isalnum() or len(value) > 64:
            raise TriggerRequestError(f"a notice's {name} must be 1 to 64 letters, digits, '-' or '_'")
    if not message.title.strip():
        raise TriggerRequestError("a notice needs a title")
    if len(message.title) > _MAX_NOTICE_TITLE or len(message.body) > _MAX_NOTICE_BODY:
        raise TriggerRequestError(
            f"a notice's title is at most {_MAX_NOTICE_TITLE} characters and its body {_MAX_NOTICE_BODY}"
        )
    if len(message.dedup_key) > _MAX_TEXT:
        raise TriggerRequestError(f"a notice's dedup_key is longer than {_MAX_TEXT} characters")
    offer_id, offer_label = _offer_of(message)
    return Notice(
        source=message.source,
        kind=message.kind,
        title=message.title.strip(),
        body=message.body.strip(),
        dedup_key=message.dedup_key,
        high_priority=message.high_priority,
        at_ms=now_ms,
        offer_id=offer_id,
        offer_label=offer_label,
    )


class _Recorded(Protocol):
    """A recorded bus message (adapters/recording.RecordedEvent)."""

    @property
    def offset_ms(self) -> int: ...

    @property
    def message(self) -> Message: ...


def recorded_triggers(events: Iterable[_Recorded]) -> list[RecordedTrigger]:
    """A recording's events as the triggers a replay feeds (None for a message that is no trigger)."""
    return [RecordedTrigger(event.offset_ms, trigger_from_message(event.message)) for event in events]


def registration_from_message(message: pb.PluginRegistration) -> PluginRegistration:
    caps = message.capabilities
    return PluginRegistration(
        app_id=message.app_id,
        display_name=message.display_name,
        version=message.version,
        capabilities=Capabilities(caps.snapshot, caps.events, caps.summarize, caps.redact_hint),
        risk_score=message.risk_score,
    )


def run_json(record: RunRecord) -> dict[str, Any]:
    """A run as GET /v1/runs shows it: times in epoch seconds, each state's stay in milliseconds."""
    return {
        "run_id": record.run_id,
        "trigger_summary": record.trigger_summary,
        "states": [
            {"state": v.state, "entered_at_ms": v.entered_at_ms, "left_at_ms": v.left_at_ms}
            for v in record.states
        ],
        "route": record.route,
        "plugins_used": list(record.plugins_used),
        "redaction_level": record.redaction_level,
        "model_calls": [call.as_dict() for call in record.model_calls],
        "tokens_in": record.tokens_in,
        "tokens_out": record.tokens_out,
        "cost_estimate": record.cost_estimate,
        "decision": record.decision,
        "notes": list(record.notes),
        "notification_id": record.notification_id,
        "next_wakeup_at": record.next_wakeup_at,
        "created_at": record.created_at,
        "finished_at": record.finished_at,
        "duration_ms": None
        if record.finished_at is None
        else round((record.finished_at - record.created_at) * 1000),
    }


def plugin_json(record: PluginRecord) -> dict[str, Any]:
    return asdict(record)


def control_json(control: SourceControl) -> dict[str, Any]:
    return {
        "source_key": control.source_key,
        "snoozed_until": control.snoozed_until,
        "disabled": control.disabled,
        "notification_id": control.notification_id,
        "updated_at": control.updated_at,
    }
