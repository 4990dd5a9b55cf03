"""Validation of a capture request into a `CaptureSpec` (seed 000, "CaptureRequest fields").

Zero, the empty string and the proto's UNSPECIFIED values mean "use the default"; anything else
out of range is a `RequestError` naming the field, which the API maps to INVALID_ARGUMENT / 4xx.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

_E = TypeVar("_E", bound=enum.StrEnum)


class Bypass(enum.StrEnum):
    """How strictly the window that gains focus must match the requested one (see core.bypass)."""

    STRICT = "strict"
    WINDOW_RELAXED = "window_relaxed"
    APP_RELAXED = "app_relaxed"
    FOCUS_NEXT = "focus_next"


class Priority(enum.StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


DEFAULT_BYPASS = Bypass.STRICT
DEFAULT_PRIORITY = Priority.NORMAL
DEFAULT_BURST_COUNT = 3
MIN_BURST_COUNT = 2
MAX_BURST_COUNT = 3
DEFAULT_BURST_INTERVAL_MS = 300
MIN_BURST_INTERVAL_MS = 250
MAX_BURST_INTERVAL_MS = 400
DEFAULT_TTL_MS = 30_000
MIN_TTL_MS = 1_000
MAX_TTL_MS = 300_000
DEFAULT_REQUESTER = "kronii"
MAX_REQUESTER_LENGTH = 64
MAX_APP_NAME_LENGTH = 256
MAX_PROCESS_ID = 2**32 - 1
MAX_WINDOW_ID = 2**64 - 1
# The requester ends up in Redis keys, merge keys and audit rows: a small alphabet keeps it inert.
REQUESTER_PATTERN = re.compile(r"[A-Za-z0-9._:@-]{1,64}")

# The numbers of capture.proto's BypassPolicy and Priority enums, so the API layer can pass the
# wire value straight through. 0 is UNSPECIFIED there and means the default here.
BYPASS_BY_NUMBER: Mapping[int, Bypass] = MappingProxyType(
    {1: Bypass.STRICT, 2: Bypass.WINDOW_RELAXED, 3: Bypass.APP_RELAXED, 4: Bypass.FOCUS_NEXT}
)
PRIORITY_BY_NUMBER: Mapping[int, Priority] = MappingProxyType(
    {1: Priority.LOW, 2: Priority.NORMAL, 3: Priority.HIGH}
)
NUMBER_BY_BYPASS: Mapping[Bypass, int] = MappingProxyType({v: k for k, v in BYPASS_BY_NUMBER.items()})
NUMBER_BY_PRIORITY: Mapping[Priority, int] = MappingProxyType({v: k for k, v in PRIORITY_BY_NUMBER.items()})


class RequestError(ValueError):
    """A request field is invalid. `str(error)` is a sentence that names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class CaptureSpec:
    """A validated request: every field holds a concrete value, never a "use the default" marker.

    `app_start_time_ms` 0 means the caller does not know the start time; matching then relies on
    the pid (and window) alone.
    """

    process_id: int
    app_name: str
    app_start_time_ms: int
    window_id: int
    bypass: Bypass
    burst_count: int
    burst_interval_ms: int
    priority: Priority
    ttl_ms: int
    requester: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for the jobs table's `spec` jsonb and the Redis job hash)."""
        return {
            "process_id": self.process_id,
            "app_name": self.app_name,
            "app_start_time_ms": self.app_start_time_ms,
            "window_id": self.window_id,
            "bypass": self.bypass.value,
            "burst_count": self.burst_count,
            "burst_interval_ms": self.burst_interval_ms,
            "priority": self.priority.value,
            "ttl_ms": self.ttl_ms,
            "requester": self.requester,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaptureSpec:
        """The inverse of `to_dict`, validated again: stored data is input too."""
        return validate_request(
            process_id=data["process_id"],
            app_name=data["app_name"],
            app_start_time_ms=data["app_start_time_ms"],
            window_id=data["window_id"],
            bypass=data["bypass"],
            burst_count=data["burst_count"],
            burst_interval_ms=data["burst_interval_ms"],
            priority=data["priority"],
            ttl_ms=data["ttl_ms"],
            requester=data["requester"],
        )


def validate_request(
    *,
    process_id: int,
    app_name: str,
    app_start_time_ms: int,
    window_id: int,
    bypass: Bypass | str | int | None,
    burst_count: int,
    burst_interval_ms: int,
    priority: Priority | str | int | None,
    ttl_ms: int,
    requester: str,
) -> CaptureSpec:
    """Check every field and fill in defaults; raise `RequestError` on the first bad field.

    `bypass` and `priority` accept the core enum, its value ("window_relaxed"), the proto name
    ("WINDOW_RELAXED", any case) or the proto number; None, "", 0 and "*_UNSPECIFIED" mean the
    default (strict, normal).

    Which target fields a policy needs: strict needs process_id and window_id; window_relaxed
    needs process_id; app_relaxed needs app_name (its restart rule matches by name); focus_next
    needs none and ignores whatever is given.
    """
    policy = _parse_bypass(bypass)
    spec = CaptureSpec(
        process_id=_int_in_range("process_id", process_id, 0, MAX_PROCESS_ID),
        app_name=_app_name(app_name),
        app_start_time_ms=_int_in_range("app_start_time_ms", app_start_time_ms, 0, 2**63 - 1),
        window_id=_int_in_range("window_id", window_id, 0, MAX_WINDOW_ID),
        bypass=policy,
        burst_count=_with_default(
            "burst_count", burst_count, DEFAULT_BURST_COUNT, MIN_BURST_COUNT, MAX_BURST_COUNT
        ),
        burst_interval_ms=_with_default(
            "burst_interval_ms",
            burst_interval_ms,
            DEFAULT_BURST_INTERVAL_MS,
            MIN_BURST_INTERVAL_MS,
            MAX_BURST_INTERVAL_MS,
        ),
        priority=_parse_priority(priority),
        ttl_ms=_with_default("ttl_ms", ttl_ms, DEFAULT_TTL_MS, MIN_TTL_MS, MAX_TTL_MS),
        requester=_requester(requester),
    )
    _check_target(spec)
    return spec


def _check_target(spec: CaptureSpec) -> None:
    if spec.bypass in (Bypass.STRICT, Bypass.WINDOW_RELAXED) and spec.process_id == 0:
        raise RequestError("process_id", f"process_id is required with bypass {spec.bypass.value}.")
    if spec.bypass is Bypass.STRICT and spec.window_id == 0:
        raise RequestError("window_id", "window_id is required with bypass strict.")
    if spec.bypass is Bypass.APP_RELAXED and not spec.app_name:
        raise RequestError("app_name", "app_name is required with bypass app_relaxed.")


def _is_int(value: object) -> bool:
    # bool is an int subclass; True as a burst count is a caller bug, not 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _int_in_range(field: str, value: object, low: int, high: int) -> int:
    if not _is_int(value):
        raise RequestError(field, f"{field} must be an integer, got {type(value).__name__}.")
    assert isinstance(value, int)
    if not low <= value <= high:
        raise RequestError(field, f"{field} must be between {low} and {high}, got {value}.")
    return value


def _with_default(field: str, value: object, default: int, low: int, high: int) -> int:
    if not _is_int(value):
        raise RequestError(field, f"{field} must be an integer, got {type(value).__name__}.")
    assert isinstance(value, int)
    if value == 0:
        return default
    if not low <= value <= high:
        raise RequestError(
            field, f"{field} must be between {low} and {high} (or 0 for the default {default}), got {value}."
        )
    return value


def _app_name(value: object) -> str:
    if not isinstance(value, str):
        raise RequestError("app_name", f"app_name must be a string, got {type(value).__name__}.")
    name = value.strip()
    if len(name) > MAX_APP_NAME_LENGTH:
        raise RequestError("app_name", f"app_name must be at most {MAX_APP_NAME_LENGTH} characters.")
    if any(not ch.isprintable() for ch in name):
        raise RequestError("app_name", "app_name must not contain control characters.")
    return name


def _requester(value: object) -> str:
    if not isinstance(value, str):
        raise RequestError("requester", f"requester must be a string, got {type(value).__name__}.")
    if value == "":
        return DEFAULT_REQUESTER
    if REQUESTER_PATTERN.fullmatch(value) is None:
        raise RequestError(
            "requester",
            f"requester must be 1 to {MAX_REQUESTER_LENGTH} characters of letters, digits and . _ : @ -.",
        )
    return value


def _parse_enum(field: str, value: object, numbers: Mapping[int, _E], default: _E, members: type[_E]) -> _E:
    if value is None or value == "" or (_is_int(value) and value == 0):
        return default
    if isinstance(value, members):
        return value
    if _is_int(value):
        assert isinstance(value, int)
        if value in numbers:
            return numbers[value]
    elif isinstance(value, str):
        text = value.strip().lower()
        if text.endswith("unspecified"):
            return default
        try:
            return members(text)
        except ValueError:
            pass
    known = ", ".join(member.value for member in members)
    raise RequestError(field, f"{field} must be one of {known}, got {value!r}.")


def _parse_bypass(value: object) -> Bypass:
    return _parse_enum("bypass", value, BYPASS_BY_NUMBER, DEFAULT_BYPASS, Bypass)


def _parse_priority(value: object) -> Priority:
    return _parse_enum("priority", value, PRIORITY_BY_NUMBER, DEFAULT_PRIORITY, Priority)
