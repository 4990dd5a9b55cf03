"""The scheduling rules of seed 000 ("Scheduling and rate control"):

- a plan sets its slot's pending wake-up (one per app, one global), a cooldown until
  now + min_cooldown (the latest plan wins), and trigger filters that last until the wake-up;
- admission walks ADMISSION_RULES: filters, the global ceiling, the per-app ceiling, the cooldown;
- only the cooldown is preemptable, and only by a justified high-priority trigger (`is_justified`);
- after any Tick the safety-net wake-up moves to fired_at + the safety-net interval;
- a plan about a prompt window (gnome-keyring's prompter, a polkit agent, pinentry, kronii's own:
  kronii.desktop.prompt_windows) changes nothing: a prompt is not an app to cool down or wake up for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kronii.desktop.prompt_windows import prompter_for_app
from kronii.scheduler.core.model import (
    APP_FILTER_PREFIX,
    HOUR_SECS,
    MAX_NAME_LENGTH,
    SAFETY_NET_SLOT,
    TRIGGER_KINDS,
    Admission,
    AdmissionView,
    AdmitInput,
    AppliedPlan,
    Cooldown,
    InvalidRequest,
    Limits,
    PlanInput,
    Priority,
    TickKind,
    WakeUp,
    app_slot,
    normalize_kind,
)

__all__ = [
    "ADMISSION_RULES",
    "PREEMPTING_KINDS",
    "active_filters",
    "apply_plan",
    "check_admit_input",
    "decide_admission",
    "is_justified",
    "runs_in_window",
    "safety_net_after",
]

# A wake-up asked for further back than this is a mistake (a zero timestamp), not clock skew.
_PAST_TOLERANCE_SECS = HOUR_SECS


def _check_name(field: str, value: str) -> str:
    value = value.strip()
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidRequest(field, f"longer than {MAX_NAME_LENGTH} characters")
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise InvalidRequest(field, "contains control characters")
    return value


def _check_filter(raw: str) -> str:
    text = raw.strip()
    if text.startswith(APP_FILTER_PREFIX):
        app = _check_name("trigger_filters", text[len(APP_FILTER_PREFIX) :])
        if not app:
            raise InvalidRequest("trigger_filters", "'app:' needs an app name after the colon")
        return APP_FILTER_PREFIX + app
    kind = normalize_kind(text)
    if kind not in TRIGGER_KINDS:
        known = ", ".join(sorted(TRIGGER_KINDS))
        raise InvalidRequest(
            "trigger_filters", f"unknown trigger kind {raw!r}; use one of {known} or app:<name>"
        )
    return kind


def _due(plan: PlanInput, now: float, limits: Limits) -> float | None:
    """When the plan's wake-up is due (None: the plan asks for none); raises InvalidRequest."""
    if plan.wakeup_at is not None and plan.wakeup_in_secs is not None:
        raise InvalidRequest("next_wakeup", "set next_wakeup or wakeup_in_ms, not both")
    horizon = now + limits.max_wakeup_horizon_secs
    if plan.wakeup_at is not None:
        if plan.wakeup_at < now - _PAST_TOLERANCE_SECS:
            raise InvalidRequest("next_wakeup", "is more than an hour in the past")
        if plan.wakeup_at > horizon:
            raise InvalidRequest("next_wakeup", f"is more than {limits.max_wakeup_horizon_secs:g} s ahead")
        return max(plan.wakeup_at, now)  # a little in the past (clock skew): fire at once
    if plan.wakeup_in_secs is not None:
        if plan.wakeup_in_secs < 0 or plan.wakeup_in_secs > limits.max_wakeup_horizon_secs:
            raise InvalidRequest("wakeup_in_ms", f"must be 0..{int(limits.max_wakeup_horizon_secs * 1000)}")
        return now + plan.wakeup_in_secs
    return None


def apply_plan(plan: PlanInput, now: float, limits: Limits, wakeup_id: str) -> AppliedPlan:
    """Validate a plan and say what it changes; raises InvalidRequest naming the field."""
    run_id = _check_name("run_id", plan.run_id)
    app = _check_name("app", plan.app)
    reason = plan.reason.strip()[:500]
    if plan.min_cooldown_secs < 0 or plan.min_cooldown_secs > limits.max_cooldown_secs:
        raise InvalidRequest("min_cooldown_ms", f"must be 0..{int(limits.max_cooldown_secs * 1000)}")
    due = _due(plan, now, limits)
    wakeup = (
        WakeUp(wakeup_id, app_slot(app), due, TickKind.PLANNED, app=app, run_id=run_id, reason=reason)
        if due is not None
        else None
    )
    cooldown = (
        Cooldown(now + plan.min_cooldown_secs, app=app, run_id=run_id, reason=reason)
        if plan.min_cooldown_secs > 0
        else None
    )
    filters = [_check_filter(item) for item in plan.trigger_filters if item.strip()]
    # Filters last until the wake-up; without one, until the cooldown ends; never forever.
    filters_until = due if due is not None else (cooldown.until if cooldown is not None else None)
    if filters and filters_until is None:
        raise InvalidRequest(
            "trigger_filters", "need a wake-up or a min_cooldown_ms: filters last until the wake-up"
        )
    if prompt := prompter_for_app(app):
        return AppliedPlan(None, None, {}, ignored=f"{app} is a {prompt} prompt window, not an app")
    return AppliedPlan(
        wakeup=wakeup,
        cooldown=cooldown,
        filters={item: filters_until for item in filters if filters_until is not None},
    )


def check_admit_input(request: AdmitInput) -> AdmitInput:
    """Normalize and validate an admission request; raises InvalidRequest naming the field."""
    kind = normalize_kind(request.trigger_kind)
    if not kind:
        raise InvalidRequest("trigger_kind", "is required")
    if kind not in TRIGGER_KINDS:
        known = ", ".join(sorted(TRIGGER_KINDS))
        raise InvalidRequest("trigger_kind", f"unknown trigger kind {request.trigger_kind!r}; known: {known}")
    return AdmitInput(
        app=_check_name("app", request.app),
        trigger_kind=kind,
        priority=request.priority,
        justification=request.justification.strip()[:1000],
        dry_run=request.dry_run,
    )


# ---- admission -------------------------------------------------------------------------------


def active_filters(filters: Mapping[str, float], now: float) -> dict[str, float]:
    return {item: until for item, until in filters.items() if until > now}


def runs_in_window(runs: Sequence[float], now: float) -> list[float]:
    """Run times within the sliding hour ending now, oldest first."""
    return sorted(at for at in runs if now - HOUR_SECS < at <= now)


def _ceiling_until(runs: Sequence[float], ceiling: int, now: float) -> float | None:
    recent = runs_in_window(runs, now)
    if len(recent) < ceiling:
        return None
    # Admission reopens when enough of the oldest runs have left the window to go below the ceiling.
    return recent[len(recent) - ceiling] + HOUR_SECS


def _filtered(request: AdmitInput, view: AdmissionView, now: float, limits: Limits) -> float | None:
    live = active_filters(view.filters, now)
    matching = [live.get(request.trigger_kind)]
    if request.app:
        matching.append(live.get(APP_FILTER_PREFIX + request.app))
    ends = [until for until in matching if until is not None]
    return max(ends) if ends else None


def _global_ceiling(request: AdmitInput, view: AdmissionView, now: float, limits: Limits) -> float | None:
    return _ceiling_until(view.global_runs, limits.global_runs_per_hour, now)


def _app_ceiling(request: AdmitInput, view: AdmissionView, now: float, limits: Limits) -> float | None:
    return _ceiling_until(view.app_runs, limits.app_runs_per_hour, now) if request.app else None


def _cooling(request: AdmitInput, view: AdmissionView, now: float, limits: Limits) -> float | None:
    cooldown = view.cooldown
    return cooldown.until if cooldown is not None and cooldown.until > now else None


@dataclass(frozen=True)
class AdmissionRule:
    reason: str
    # Only a justified high-priority trigger passes a preemptable rule.
    preemptable: bool
    # When this rule stops refusing the request, or None when it does not refuse it now.
    refuses_until: Callable[[AdmitInput, AdmissionView, float, Limits], float | None]
    sentence: str


# In order: the first rule that refuses names the reason.
ADMISSION_RULES: tuple[AdmissionRule, ...] = (
    AdmissionRule("filtered", False, _filtered, "the Planner filtered this trigger until its wake-up"),
    AdmissionRule("global_ceiling", False, _global_ceiling, "the global ceiling of runs per hour is reached"),
    AdmissionRule("app_ceiling", False, _app_ceiling, "this app's ceiling of runs per hour is reached"),
    AdmissionRule("cooldown", True, _cooling, "the scheduler is cooling down after the last run"),
)

# Trigger kinds that may preempt a cooldown, and the extra condition each needs. A high-priority
# focus change to the app that caused the cooldown is the storm the cooldown is there to stop.
PREEMPTING_KINDS: Mapping[str, Callable[[AdmitInput, Cooldown], bool]] = {
    "lock_end": lambda request, cooldown: True,
    "plugin_event": lambda request, cooldown: True,
    "focus_changed": lambda request, cooldown: bool(request.app) and request.app != cooldown.app,
}


def _why_unjustified(request: AdmitInput, cooldown: Cooldown) -> str:
    """Empty when the request is justified; otherwise why it is not."""
    if request.priority is not Priority.HIGH:
        return "only a high-priority trigger may preempt it"
    if not request.justification:
        return "a high-priority trigger needs a justification to preempt it"
    condition = PREEMPTING_KINDS.get(request.trigger_kind)
    if condition is None:
        kinds = ", ".join(sorted(PREEMPTING_KINDS))
        return f"{request.trigger_kind} does not preempt a cooldown (only {kinds})"
    if not condition(request, cooldown):
        return "focus_changed preempts only when the focus moves to a different app"
    return ""


def is_justified(request: AdmitInput, cooldown: Cooldown) -> bool:
    """High priority, a non-empty justification, and a preempting kind whose condition holds."""
    return not _why_unjustified(request, cooldown)


def decide_admission(request: AdmitInput, view: AdmissionView, now: float, limits: Limits) -> Admission:
    refusals = [
        (rule, until)
        for rule in ADMISSION_RULES
        if (until := rule.refuses_until(request, view, now, limits)) is not None
    ]
    cooling = any(rule.reason == "cooldown" for rule, _ in refusals)
    justified = cooling and view.cooldown is not None and is_justified(request, view.cooldown)
    standing = [(rule, until) for rule, until in refusals if not (rule.preemptable and justified)]
    if standing:
        first = standing[0][0]
        retry_after = max(until for _, until in standing) - now
        detail = first.sentence
        if first.reason == "cooldown" and view.cooldown is not None:
            detail = f"{detail}; {_why_unjustified(request, view.cooldown)}"
        return Admission(False, first.reason, retry_after_secs=retry_after, detail=detail)
    if justified:
        return Admission(
            True,
            "preempted_cooldown",
            preempted_cooldown=True,
            detail=f"a high-priority {request.trigger_kind} preempted the cooldown: {request.justification}",
            counts_run=not request.dry_run,
            ends_cooldown=not request.dry_run,
        )
    return Admission(True, "admitted", detail="admitted", counts_run=not request.dry_run)


# ---- the safety net --------------------------------------------------------------------------


def safety_net_after(fired_at: float, limits: Limits, wakeup_id: str) -> WakeUp:
    """The safety net fires only when no Tick fired for a whole interval."""
    return WakeUp(
        wakeup_id,
        SAFETY_NET_SLOT,
        fired_at + limits.safety_net_interval_secs,
        TickKind.SAFETY_NET,
        reason="safety net",
    )
