"""The scheduler's vocabulary: plans, wake-ups, cooldowns, admission requests and decisions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from kronii.foundation.errors import InvalidArgument

__all__ = [
    "APP_FILTER_PREFIX",
    "GLOBAL_SLOT",
    "HOUR_SECS",
    "MAX_NAME_LENGTH",
    "SAFETY_NET_SLOT",
    "TRIGGER_KINDS",
    "Admission",
    "AdmissionView",
    "AdmitInput",
    "AppliedPlan",
    "Cooldown",
    "InvalidRequest",
    "Limits",
    "PlanInput",
    "Priority",
    "TickKind",
    "WakeUp",
    "app_slot",
    "normalize_kind",
]

HOUR_SECS = 3600.0
GLOBAL_SLOT = "global"
SAFETY_NET_SLOT = "safety_net"
APP_FILTER_PREFIX = "app:"
MAX_NAME_LENGTH = 200

# The orchestration triggers of seed 000 ("Triggers"), in snake case, as the pipeline names them.
TRIGGER_KINDS = frozenset(
    {
        "state_changed",
        "focus_changed",
        "title_changed",
        "activity_pulse",
        "lock_start",
        "lock_end",
        "plugin_event",
        "tick",
        # A person or an agent asking for a round (the pipeline's `manual` trigger).
        "manual",
    }
)

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def normalize_kind(kind: str) -> str:
    """`FocusChanged`, `focus-changed` and `focus_changed` are one kind: `focus_changed`."""
    return _CAMEL_BOUNDARY.sub("_", kind.strip()).replace("-", "_").lower()


def app_slot(app: str) -> str:
    """One pending planned wake-up per app; a plan without an app uses the global slot."""
    return f"{APP_FILTER_PREFIX}{app}" if app else GLOBAL_SLOT


class Priority(StrEnum):
    NORMAL = "normal"
    HIGH = "high"


class TickKind(StrEnum):
    PLANNED = "planned"
    SAFETY_NET = "safety_net"


class InvalidRequest(InvalidArgument, ValueError):
    """A plan or admission request the scheduler cannot accept; `field` names the culprit. The API edge
    renders it like every InvalidArgument (400, INVALID_ARGUMENT)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}", field=field)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    global_runs_per_hour: int = 30
    app_runs_per_hour: int = 10
    safety_net_interval_secs: float = 300.0
    max_cooldown_secs: float = 86400.0
    max_wakeup_horizon_secs: float = 7 * 86400.0


@dataclass(frozen=True)
class PlanInput:
    """A Planner's decision as received; `apply_plan` validates it."""

    run_id: str = ""
    app: str = ""
    wakeup_at: float | None = None
    wakeup_in_secs: float | None = None
    min_cooldown_secs: float = 0.0
    trigger_filters: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class WakeUp:
    wakeup_id: str
    slot: str
    due_at: float
    kind: TickKind
    app: str = ""
    run_id: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Cooldown:
    until: float
    app: str = ""
    run_id: str = ""
    reason: str = ""


@dataclass(frozen=True)
class AppliedPlan:
    """What a plan changes: the slot's wake-up (None: the slot is left alone), the cooldown (None:
    no cooldown from now on) and filters to merge (filter -> until). ``ignored`` non-empty: the plan
    changes nothing at all (not even the cooldown), and says why."""

    wakeup: WakeUp | None
    cooldown: Cooldown | None
    filters: Mapping[str, float] = field(default_factory=dict)
    ignored: str = ""


@dataclass(frozen=True)
class AdmitInput:
    app: str
    trigger_kind: str
    priority: Priority = Priority.NORMAL
    justification: str = ""
    dry_run: bool = False


@dataclass(frozen=True)
class AdmissionView:
    """The state admission depends on: the cooldown, live filters and recent run times."""

    cooldown: Cooldown | None = None
    filters: Mapping[str, float] = field(default_factory=dict)
    global_runs: Sequence[float] = ()
    app_runs: Sequence[float] = ()


@dataclass(frozen=True)
class Admission:
    allowed: bool
    reason: str
    retry_after_secs: float = 0.0
    preempted_cooldown: bool = False
    detail: str = ""
    # Effects the caller carries out.
    counts_run: bool = False
    ends_cooldown: bool = False
