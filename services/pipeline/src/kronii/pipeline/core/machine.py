"""`step`: interprets `TABLE` for one trigger. Pure: the caller computes the `Facts` the guards
read (from its clock, ledgers, router decision, redaction result ...) and performs the actions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kronii.pipeline.core.states import (
    CAPTURE_FAILURES,
    PLUGIN_POLICIES,
    CapturePreemption,
    CaptureStatus,
    PolicyKind,
    RunState,
    Trigger,
    TriggerKind,
)
from kronii.pipeline.core.table import TABLE, Action, Guard, Row
from kronii.redaction import Level


@dataclass(frozen=True, slots=True)
class Facts:
    """Everything a guard looks at, as of the trigger. Defaults describe a quiet, unlocked desktop
    with nothing decided yet, so a test names only the facts its row depends on."""

    in_global_cooldown: bool = False
    locked: bool = False
    # Deferred: the backoff (or, while locked, the long tick) has passed; see `deferral.deferral_over`.
    deferral_over: bool = False
    # Collecting: the Router's minimal fields (base snapshot, plugin meta) are in.
    router_fields_ready: bool = False
    # Additional guard 2: the run ledger allows one more run (global and per app).
    routing_allowed: bool = True
    # Routing: the Router's decision for this round, once made.
    route: PolicyKind | None = None
    needs_screenshot: bool = False
    # Additional guard 2: the capture ledger allows one more CaptureRequest (global and per app).
    capture_allowed: bool = True
    # Routing: the plugin context the route asked for has been pulled already this round.
    plugin_context_gathered: bool = False
    # AwaitingCapture: the persisted result arrived before the request's ttl_ms ran out.
    capture_within_ttl: bool = False
    # AwaitingCapture: what the Planner's policy does with the job on a high-priority trigger.
    capture_preemption: CapturePreemption = CapturePreemption.CANCEL
    # Redacting: the level of the redacted Base+Plugin context.
    risk: Level | None = None
    # Extracting: every extractor returned or passed its timeout.
    extractors_settled: bool = False
    # Planning: the Planner's verdict (True: notify, False: stay silent), once made.
    planner_notifies: bool | None = None
    # Acting: the notification (or silent record) was delivered.
    output_done: bool = False
    # Cooling: the cooldown's min interval has passed.
    cooldown_reached: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """A row fired: move to `target` and perform `actions` in order."""

    source: RunState
    target: RunState
    actions: tuple[Action, ...]
    row: Row


@dataclass(frozen=True, slots=True)
class NoTransition:
    """No row accepts the trigger in this state: the state stays, the trigger is ignored."""

    state: RunState
    trigger: TriggerKind
    reason: str


def _capture_unusable(trigger: Trigger, facts: Facts) -> bool:
    if trigger.kind is TriggerKind.TIMEOUT:
        return True
    if trigger.capture_status in CAPTURE_FAILURES:
        return True
    # A result that arrives after its ttl describes a screen the user may have left: unusable too.
    return trigger.capture_status is CaptureStatus.PERSISTED and not facts.capture_within_ttl


def _plugins(facts: Facts) -> bool:
    return facts.route in PLUGIN_POLICIES


_GuardCheck = Callable[[Trigger, Facts], bool]

_GUARDS: Mapping[Guard, tuple[_GuardCheck, str]] = MappingProxyType(
    {
        Guard.NONE: (lambda _t, _f: True, ""),
        Guard.ROUND_ALLOWED: (
            lambda _t, f: not f.in_global_cooldown and not f.locked,
            "in global cooldown or locked",
        ),
        Guard.DEFERRAL_OVER: (
            lambda t, f: t.kind is TriggerKind.LOCK_END or f.deferral_over,
            "deferral backoff not over",
        ),
        Guard.ROUTER_READY_WITHIN_RATE_LIMITS: (
            lambda _t, f: f.router_fields_ready and f.routing_allowed,
            "router minimal fields not ready",
        ),
        Guard.ROUTER_READY_RATE_LIMITED: (
            lambda _t, f: f.router_fields_ready and not f.routing_allowed,
            "router minimal fields not ready",
        ),
        Guard.ROUTE_BASE_ONLY: (lambda _t, f: f.route is PolicyKind.BASE_ONLY, "no route decision"),
        Guard.ROUTE_PLUGINS_WITH_SCREENSHOT: (
            lambda _t, f: (
                _plugins(f) and f.needs_screenshot and f.capture_allowed and not f.plugin_context_gathered
            ),
            "no route decision",
        ),
        Guard.ROUTE_PLUGINS_SCREENSHOT_RATE_LIMITED: (
            lambda _t, f: (
                _plugins(f) and f.needs_screenshot and not f.capture_allowed and not f.plugin_context_gathered
            ),
            "no route decision",
        ),
        Guard.ROUTE_PLUGINS_NO_SCREENSHOT: (
            lambda _t, f: _plugins(f) and not f.needs_screenshot and not f.plugin_context_gathered,
            "no route decision",
        ),
        Guard.ROUTE_PLUGINS_GATHERED: (
            lambda _t, f: _plugins(f) and f.plugin_context_gathered,
            "no route decision",
        ),
        Guard.ROUTE_DEFER: (lambda _t, f: f.route is PolicyKind.DEFER, "no route decision"),
        Guard.CAPTURE_PERSISTED_WITHIN_TTL: (
            lambda t, f: t.capture_status is CaptureStatus.PERSISTED and f.capture_within_ttl,
            "capture still in progress",
        ),
        Guard.CAPTURE_UNUSABLE: (_capture_unusable, "capture still in progress"),
        Guard.HIGH_PRIORITY_CANCELS_CAPTURE: (
            lambda t, f: t.high_priority and f.capture_preemption is CapturePreemption.CANCEL,
            "not high priority: the capture keeps running",
        ),
        Guard.HIGH_PRIORITY_DOWNGRADES_CAPTURE: (
            lambda t, f: t.high_priority and f.capture_preemption is CapturePreemption.DOWNGRADE,
            "not high priority: the capture keeps running",
        ),
        Guard.RISK_RED: (lambda _t, f: f.risk is Level.RED, "no redaction result"),
        Guard.RISK_AMBER_OR_GREEN: (
            lambda _t, f: f.risk in (Level.AMBER, Level.GREEN),
            "no redaction result",
        ),
        Guard.EXTRACTORS_SETTLED: (
            lambda t, f: f.extractors_settled or t.kind is TriggerKind.TIMEOUT,
            "extractors still running",
        ),
        Guard.PLAN_SILENT: (lambda _t, f: f.planner_notifies is False, "no planner verdict"),
        Guard.PLAN_NOTIFY: (lambda _t, f: f.planner_notifies is True, "no planner verdict"),
        Guard.OUTPUT_COMPLETED: (lambda _t, f: f.output_done, "output not completed"),
        Guard.COOLDOWN_OVER_OR_HIGH_PRIORITY: (
            lambda t, f: t.high_priority or (t.kind is TriggerKind.TICK and f.cooldown_reached),
            "cooling: min interval not reached and not high priority",
        ),
    }
)


def guard_holds(guard: Guard, trigger: Trigger, facts: Facts) -> bool:
    return _GUARDS[guard][0](trigger, facts)


def matching_rows(state: RunState, trigger: Trigger, facts: Facts) -> tuple[Row, ...]:
    """Every row that would fire. The table's guards keep this at most one (tested)."""
    return tuple(
        row
        for row in TABLE
        if row.source is state and trigger.kind in row.triggers and guard_holds(row.guard, trigger, facts)
    )


def step(state: RunState, trigger: Trigger, facts: Facts) -> Step | NoTransition:
    """The transition `trigger` causes in `state` given `facts`, or why there is none.

    A high-priority trigger that ends a cooldown (row 17) only returns the machine to Idle; the
    caller steps again with the same trigger to open the round (row 1), so every move is one row.
    """
    candidates = [row for row in TABLE if row.source is state and trigger.kind in row.triggers]
    if not candidates:
        return NoTransition(state, trigger.kind, f"{state} does not accept {trigger.kind}")
    for row in candidates:
        if guard_holds(row.guard, trigger, facts):
            return Step(source=state, target=row.target, actions=row.actions, row=row)
    reasons = sorted({_GUARDS[row.guard][1] for row in candidates})
    return NoTransition(state, trigger.kind, "; ".join(reasons))
