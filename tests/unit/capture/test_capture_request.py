"""validate_request: seed 000 "CaptureRequest fields" ranges, defaults and per-policy targets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kronii.capture.core.request import (
    DEFAULT_BURST_COUNT,
    DEFAULT_BURST_INTERVAL_MS,
    DEFAULT_REQUESTER,
    DEFAULT_TTL_MS,
    NUMBER_BY_BYPASS,
    NUMBER_BY_PRIORITY,
    Bypass,
    CaptureSpec,
    Priority,
    RequestError,
    validate_request,
)


def request(**overrides: Any) -> CaptureSpec:
    fields: dict[str, Any] = {
        "process_id": 4242,
        "app_name": "xterm",
        "app_start_time_ms": 1_700_000_000_000,
        "window_id": 0x1A00007,
        "bypass": Bypass.STRICT,
        "burst_count": 0,
        "burst_interval_ms": 0,
        "priority": None,
        "ttl_ms": 0,
        "requester": "",
    }
    fields.update(overrides)
    return validate_request(**fields)


def test_zero_and_empty_fields_take_the_seed_defaults() -> None:
    spec = request()
    assert spec.burst_count == DEFAULT_BURST_COUNT == 3
    assert spec.burst_interval_ms == DEFAULT_BURST_INTERVAL_MS == 300
    assert spec.ttl_ms == DEFAULT_TTL_MS == 30_000
    assert spec.priority is Priority.NORMAL
    assert spec.requester == DEFAULT_REQUESTER == "kronii"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("burst_count", 2),
        ("burst_count", 3),
        ("burst_interval_ms", 250),
        ("burst_interval_ms", 400),
        ("ttl_ms", 1_000),
        ("ttl_ms", 300_000),
    ],
)
def test_range_bounds_are_accepted(field: str, value: int) -> None:
    assert getattr(request(**{field: value}), field) == value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("burst_count", 1),
        ("burst_count", 4),
        ("burst_interval_ms", 249),
        ("burst_interval_ms", 401),
        ("ttl_ms", 999),
        ("ttl_ms", 300_001),
        ("process_id", -1),
        ("window_id", -5),
        ("app_start_time_ms", -1),
        ("burst_count", True),
        ("burst_count", "3"),
    ],
)
def test_out_of_range_field_is_a_request_error_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(RequestError) as caught:
        request(**{field: value})
    assert caught.value.field == field
    assert field in str(caught.value)
    assert str(caught.value).endswith(".")
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("value", [Bypass.WINDOW_RELAXED, "window_relaxed", "WINDOW_RELAXED", 2])
def test_bypass_accepts_enum_value_proto_name_and_proto_number(value: object) -> None:
    assert request(bypass=value).bypass is Bypass.WINDOW_RELAXED


@pytest.mark.parametrize("value", [None, "", 0, "BYPASS_POLICY_UNSPECIFIED"])
def test_unspecified_bypass_means_strict(value: object) -> None:
    assert request(bypass=value).bypass is Bypass.STRICT


@pytest.mark.parametrize(
    ("value", "expected"),
    [("HIGH", Priority.HIGH), (1, Priority.LOW), ("PRIORITY_UNSPECIFIED", Priority.NORMAL)],
)
def test_priority_accepts_proto_names_and_numbers(value: object, expected: Priority) -> None:
    assert request(priority=value).priority is expected


@pytest.mark.parametrize(
    ("field", "value"), [("bypass", "loose"), ("bypass", 9), ("priority", "urgent"), ("priority", 7)]
)
def test_unknown_enum_value_names_the_field_and_the_choices(field: str, value: object) -> None:
    with pytest.raises(RequestError) as caught:
        request(**{field: value})
    assert caught.value.field == field
    assert "must be one of" in caught.value.message


CAPTURE_PROTO = Path(__file__).resolve().parents[3] / "proto" / "kronii" / "capture" / "v1" / "capture.proto"


def proto_enum(name: str) -> dict[str, int]:
    body = re.search(r"enum " + name + r" \{(.*?)\}", CAPTURE_PROTO.read_text(), re.DOTALL)
    assert body is not None
    return {label.lower(): int(number) for label, number in re.findall(r"(\w+) = (\d+);", body.group(1))}


def test_core_enum_numbers_follow_capture_proto() -> None:
    assert {bypass.value: number for bypass, number in NUMBER_BY_BYPASS.items()} == {
        label: number for label, number in proto_enum("BypassPolicy").items() if number
    }
    assert {priority.value: number for priority, number in NUMBER_BY_PRIORITY.items()} == {
        label: number for label, number in proto_enum("Priority").items() if number
    }


@pytest.mark.parametrize(
    ("bypass", "missing", "field"),
    [
        (Bypass.STRICT, {"process_id": 0}, "process_id"),
        (Bypass.STRICT, {"window_id": 0}, "window_id"),
        (Bypass.WINDOW_RELAXED, {"process_id": 0}, "process_id"),
        (Bypass.APP_RELAXED, {"app_name": ""}, "app_name"),
    ],
)
def test_policy_without_its_target_field_is_refused(
    bypass: Bypass, missing: dict[str, object], field: str
) -> None:
    with pytest.raises(RequestError) as caught:
        request(bypass=bypass, **missing)
    assert caught.value.field == field
    assert bypass.value in str(caught.value)


def test_focus_next_needs_no_target() -> None:
    spec = request(bypass=Bypass.FOCUS_NEXT, process_id=0, window_id=0, app_name="", app_start_time_ms=0)
    assert spec.bypass is Bypass.FOCUS_NEXT


def test_window_relaxed_needs_no_window_id() -> None:
    assert request(bypass=Bypass.WINDOW_RELAXED, window_id=0).window_id == 0


@pytest.mark.parametrize("requester", ["agent-7", "ops@host", "svc:capture.v1", "a" * 64])
def test_requester_in_the_allowed_alphabet_is_kept(requester: str) -> None:
    assert request(requester=requester).requester == requester


@pytest.mark.parametrize("requester", ["a" * 65, "has space", "semi;colon", "pipe|x", "ümlaut"])
def test_requester_outside_the_alphabet_is_refused(requester: str) -> None:
    with pytest.raises(RequestError) as caught:
        request(requester=requester)
    assert caught.value.field == "requester"


def test_app_name_with_control_characters_is_refused() -> None:
    with pytest.raises(RequestError) as caught:
        request(app_name="xt\x1b[2Jerm")
    assert caught.value.field == "app_name"


def test_spec_round_trips_through_its_dict() -> None:
    spec = request(bypass="app_relaxed", priority="high", burst_count=2, requester="agent-1")
    assert CaptureSpec.from_dict(spec.to_dict()) == spec
