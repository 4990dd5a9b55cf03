"""The orchestration transition table of seed 000 as data, row for row, plus one row per branch
of the seed's "Additional guards". `machine.step` interprets it; nothing else encodes these
transitions.

Guards of rows sharing a source state and a trigger are mutually exclusive (a unit test checks
this over random facts), so the order of `TABLE` only mirrors the seed, it decides nothing.
`seed_guard`/`seed_actions` keep the seed's own words next to the enums that encode them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kronii.pipeline.core.states import ROUND_TRIGGERS, RunState, TriggerKind


class Guard(StrEnum):
    NONE = "none"  # seed: "—"
    # seed: "Not in global cooldown, not locked".
    ROUND_ALLOWED = "round_allowed"
    # seed: "—". Row 2 adds "only resume on LockEnd or long Tick" and rows 10/18 a "short backoff", so a
    # Tick resumes only once the deferral's backoff (or, while locked, the long tick) has passed.
    DEFERRAL_OVER = "deferral_over"
    # seed: "Router minimal fields ready", with additional guard 2: the run rate limits allow it.
    ROUTER_READY_WITHIN_RATE_LIMITS = "router_ready_within_rate_limits"
    # Additional guard 2: "Global and per-app rate limits checked before entering Routing".
    ROUTER_READY_RATE_LIMITED = "router_ready_rate_limited"
    # seed: "Router chooses BaseOnly".
    ROUTE_BASE_ONLY = "route_base_only"
    # seed: "Router chooses PluginLite/Full and needs screenshot" (and the capture rate limits allow it).
    ROUTE_PLUGINS_WITH_SCREENSHOT = "route_plugins_with_screenshot"
    # Additional guard 2: "... and before issuing CaptureRequest": a screenshot the limits refuse.
    ROUTE_PLUGINS_SCREENSHOT_RATE_LIMITED = "route_plugins_screenshot_rate_limited"
    # seed: "Router chooses PluginLite/Full and no screenshot".
    ROUTE_PLUGINS_NO_SCREENSHOT = "route_plugins_no_screenshot"
    # seed row 7's "then return to Routing or proceed to Redacting per policy": plugin context pulled.
    ROUTE_PLUGINS_GATHERED = "route_plugins_gathered"
    # seed: "Router decides Defer".
    ROUTE_DEFER = "route_defer"
    # seed: "CaptureStatus = persisted" / "Within ttl_ms".
    CAPTURE_PERSISTED_WITHIN_TTL = "capture_persisted_within_ttl"
    # seed: "CaptureStatus = expired/rejected/failed OR timeout"; a persisted result past its ttl too.
    CAPTURE_UNUSABLE = "capture_unusable"
    # Additional guard 1: "a new high-priority trigger ... can cancel ... the current capture job".
    HIGH_PRIORITY_CANCELS_CAPTURE = "high_priority_cancels_capture"
    # Additional guard 1: "... or downgrade the current capture job depending on Planner policy".
    HIGH_PRIORITY_DOWNGRADES_CAPTURE = "high_priority_downgrades_capture"
    # seed: "Risk = red".
    RISK_RED = "risk_red"
    # seed: "Risk = amber/green".
    RISK_AMBER_OR_GREEN = "risk_amber_or_green"
    # seed: "All extractors done or timed out".
    EXTRACTORS_SETTLED = "extractors_settled"
    # seed: "Low confidence/low value".
    PLAN_SILENT = "plan_silent"
    # seed: "High confidence/high value".
    PLAN_NOTIFY = "plan_notify"
    # seed: "Output completed".
    OUTPUT_COMPLETED = "output_completed"
    # seed: "Reaches min interval or receives high-priority event".
    COOLDOWN_OVER_OR_HIGH_PRIORITY = "cooldown_over_or_high_priority"


class Action(StrEnum):
    """What the service does when a row fires. Comments quote the seed."""

    FETCH_SNAPSHOT = "fetch_snapshot"  # "Fetch snapshot"
    OPEN_BATCH = "open_batch"  # "open new batch"
    COALESCE_NEAR_EVENTS = "coalesce_near_events"  # "coalesce near events"
    RECORD_LOCK_REASON = "record_lock_reason"  # "Record lock reason"
    HOLD_PLUGIN_PULLS = "hold_plugin_pulls"  # "only resume on LockEnd or long Tick; no plugin pulls"
    CONTINUE_INTAKE = "continue_intake"  # "Continue intake"
    DROP_HIGH_FREQUENCY_BACKLOG = "drop_high_frequency_backlog"  # "do not backfill high-frequency events"
    SUMMARIZE_CONTEXT_META = "summarize_context_meta"  # "Summarize Base and plugin meta (installed/enabled)"
    RECORD_RUN = "record_run"  # count the run in the rate-limit ledger (additional guard 2)
    RECORD_RATE_LIMITED = "record_rate_limited"  # audit why a run or capture was refused (guard 2)
    SKIP_PLUGIN_PULLS = "skip_plugin_pulls"  # "Skip plugin pulls"
    REQUEST_CAPTURE = "request_capture"  # "Create CaptureRequest{...}; enqueue"
    STORE_CAPTURE_DEADLINE = "store_capture_deadline"  # "store job_id and deadline"
    RECORD_CAPTURE = "record_capture"  # count the capture in the capture rate-limit ledger (guard 2)
    SKIP_CAPTURE = "skip_capture"  # go on without a screenshot (guard 2)
    PULL_PLUGIN_CONTEXT = "pull_plugin_context"  # "Pull other plugin summaries/full"
    ATTACH_SCREENSHOT_ID = "attach_screenshot_id"  # "Attach primary_screenshot_id (redacted) to context"
    LOG_CAPTURE_FAILURE = "log_capture_failure"  # "Log reason"
    DEGRADE_CONTEXT = "degrade_context"  # "degrade to BaseOnly/other plugin data"
    CANCEL_CAPTURE = "cancel_capture"  # additional guard 1: "cancel ... the current capture job"
    DOWNGRADE_CAPTURE = "downgrade_capture"  # additional guard 1: "... or downgrade" it
    AUDIT_REDACTION = "audit_redaction"  # "continue unified redaction audit" / "audit record"
    ABORT_ROUND = "abort_round"  # "Abort this round"
    SET_SHORT_BACKOFF = "set_short_backoff"  # "short backoff"
    RECORD_DEFER_REASON = "record_defer_reason"  # "Reason: focus thrash, locked, low value, or privacy"
    BUDGET_CONTEXT = "budget_context"  # "Budget context (Base first, then plugin content by priority, ...)"
    START_EXTRACTORS = "start_extractors"  # "start extractors"
    MERGE_FRAGMENTS = "merge_fragments"  # "Merge fragments" (run the Synthesizer)
    RESOLVE_CONFLICTS = "resolve_conflicts"  # "resolve conflicts"
    LABEL_CONFIDENCE_AND_COST = "label_confidence_and_cost"  # "assign confidence/cost labels"
    PRODUCE_CANDIDATES = "produce_candidates"  # "Produce candidate actions with rationale and context hash"
    RUN_PLANNER = "run_planner"  # Planning: "decide whether to notify and when to wake next"
    SET_LONG_COOLDOWN = "set_long_cooldown"  # "Set longer cooldown"
    RECORD_SILENTLY = "record_silently"  # "no user-facing output; record silently"
    EMIT_NOTIFICATION = "emit_notification"  # "Emit notification/suggestion; include source summary ..."
    AUDIT_ROUND = "audit_round"  # "Audit: plugins used, redaction, LLM cost, next schedule params"
    END_COOLDOWN = "end_cooldown"  # "End cooldown; accept new round"


@dataclass(frozen=True, slots=True)
class Row:
    """One transition. `seed_row` is the row's number in the seed's table (1..18, table order);
    `additional_guard` is 1 or 2 for the rows that implement the seed's "Additional guards"."""

    name: str
    source: RunState
    triggers: frozenset[TriggerKind]
    guard: Guard
    target: RunState
    actions: tuple[Action, ...]
    seed_guard: str
    seed_actions: str
    seed_row: int | None = None
    additional_guard: int | None = None


_S = RunState
_K = TriggerKind
_INTERNAL = frozenset({_K.INTERNAL})
# The triggers that can preempt a capture: anything from the desktop or a plugin except the lock
# signals and the tick, which carry no new focus.
_PREEMPTING = ROUND_TRIGGERS - {_K.TICK}

TABLE: tuple[Row, ...] = (
    Row(
        name="row_01_idle_round_trigger_not_cooling_not_locked_goes_collecting",
        seed_row=1,
        source=_S.IDLE,
        triggers=ROUND_TRIGGERS,
        guard=Guard.ROUND_ALLOWED,
        target=_S.COLLECTING,
        actions=(Action.FETCH_SNAPSHOT, Action.OPEN_BATCH, Action.COALESCE_NEAR_EVENTS),
        seed_guard="Not in global cooldown, not locked",
        seed_actions="Fetch snapshot; open new batch; coalesce near events.",
    ),
    Row(
        name="row_02_idle_lock_start_goes_deferred",
        seed_row=2,
        source=_S.IDLE,
        triggers=frozenset({_K.LOCK_START}),
        guard=Guard.NONE,
        target=_S.DEFERRED,
        actions=(Action.RECORD_LOCK_REASON, Action.HOLD_PLUGIN_PULLS),
        seed_guard="—",
        seed_actions="Record lock reason; only resume on LockEnd or long Tick; no plugin pulls.",
    ),
    Row(
        name="row_03_deferred_lock_end_or_tick_goes_collecting",
        seed_row=3,
        source=_S.DEFERRED,
        triggers=frozenset({_K.LOCK_END, _K.TICK}),
        guard=Guard.DEFERRAL_OVER,
        target=_S.COLLECTING,
        actions=(Action.CONTINUE_INTAKE, Action.DROP_HIGH_FREQUENCY_BACKLOG, Action.FETCH_SNAPSHOT),
        seed_guard="—",
        seed_actions="Continue intake (do not backfill high-frequency events).",
    ),
    Row(
        name="row_04_collecting_router_fields_ready_goes_routing",
        seed_row=4,
        source=_S.COLLECTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTER_READY_WITHIN_RATE_LIMITS,
        target=_S.ROUTING,
        actions=(Action.SUMMARIZE_CONTEXT_META, Action.RECORD_RUN),
        seed_guard="Router minimal fields ready",
        seed_actions="Summarize Base and plugin meta (installed/enabled).",
    ),
    Row(
        name="guard_rate_limit_before_routing_goes_deferred",
        additional_guard=2,
        source=_S.COLLECTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTER_READY_RATE_LIMITED,
        target=_S.DEFERRED,
        actions=(Action.RECORD_RATE_LIMITED, Action.SET_SHORT_BACKOFF),
        seed_guard="Global and per-app rate limits checked before entering Routing",
        seed_actions="(refused: defer with a short backoff)",
    ),
    Row(
        name="row_05_routing_base_only_goes_redacting",
        seed_row=5,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_BASE_ONLY,
        target=_S.REDACTING,
        actions=(Action.SKIP_PLUGIN_PULLS,),
        seed_guard="Router chooses BaseOnly",
        seed_actions="Skip plugin pulls.",
    ),
    Row(
        name="row_06_routing_plugins_with_screenshot_goes_awaiting_capture",
        seed_row=6,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_PLUGINS_WITH_SCREENSHOT,
        target=_S.AWAITING_CAPTURE,
        actions=(Action.REQUEST_CAPTURE, Action.STORE_CAPTURE_DEADLINE, Action.RECORD_CAPTURE),
        seed_guard="Router chooses PluginLite/Full and needs screenshot",
        seed_actions=(
            "Create CaptureRequest{pid, app, start, win, bypass, burst, ttl, priority}; enqueue; "
            "store job_id and deadline."
        ),
    ),
    Row(
        name="guard_rate_limit_before_capture_request_skips_capture",
        additional_guard=2,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_PLUGINS_SCREENSHOT_RATE_LIMITED,
        target=_S.COLLECTING,
        actions=(Action.RECORD_RATE_LIMITED, Action.SKIP_CAPTURE, Action.PULL_PLUGIN_CONTEXT),
        seed_guard="Global and per-app rate limits checked ... before issuing CaptureRequest",
        seed_actions="(refused: no CaptureRequest; pull the other plugin context instead)",
    ),
    Row(
        name="row_07_routing_plugins_no_screenshot_goes_collecting",
        seed_row=7,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_PLUGINS_NO_SCREENSHOT,
        target=_S.COLLECTING,
        actions=(Action.PULL_PLUGIN_CONTEXT,),
        seed_guard="Router chooses PluginLite/Full and no screenshot",
        seed_actions="Pull other plugin summaries/full; then return to Routing or proceed to Redacting per policy.",
    ),
    Row(
        name="row_07b_routing_plugins_gathered_goes_redacting",
        seed_row=7,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_PLUGINS_GATHERED,
        target=_S.REDACTING,
        actions=(),
        seed_guard="(row 7 continued) plugin context already pulled",
        seed_actions="then ... proceed to Redacting per policy.",
    ),
    Row(
        name="row_08_awaiting_capture_persisted_within_ttl_goes_redacting",
        seed_row=8,
        source=_S.AWAITING_CAPTURE,
        triggers=frozenset({_K.CAPTURE_STATUS}),
        guard=Guard.CAPTURE_PERSISTED_WITHIN_TTL,
        target=_S.REDACTING,
        actions=(Action.ATTACH_SCREENSHOT_ID, Action.AUDIT_REDACTION),
        seed_guard="CaptureStatus = persisted; Within ttl_ms",
        seed_actions="Attach primary_screenshot_id (redacted) to context; continue unified redaction audit.",
    ),
    Row(
        name="row_09_awaiting_capture_failed_or_timeout_goes_redacting",
        seed_row=9,
        source=_S.AWAITING_CAPTURE,
        triggers=frozenset({_K.CAPTURE_STATUS, _K.TIMEOUT}),
        guard=Guard.CAPTURE_UNUSABLE,
        target=_S.REDACTING,
        actions=(Action.LOG_CAPTURE_FAILURE, Action.DEGRADE_CONTEXT),
        seed_guard="CaptureStatus = expired/rejected/failed OR timeout; —",
        seed_actions="Log reason; degrade to BaseOnly/other plugin data.",
    ),
    Row(
        name="guard_high_priority_trigger_cancels_capture",
        additional_guard=1,
        source=_S.AWAITING_CAPTURE,
        triggers=_PREEMPTING,
        guard=Guard.HIGH_PRIORITY_CANCELS_CAPTURE,
        target=_S.COLLECTING,
        actions=(Action.CANCEL_CAPTURE, Action.FETCH_SNAPSHOT, Action.OPEN_BATCH),
        seed_guard="During AwaitingCapture, a new high-priority trigger ... can cancel ... the current capture job",
        seed_actions="(cancel the job; start over from the new focus)",
    ),
    Row(
        name="guard_high_priority_trigger_downgrades_capture",
        additional_guard=1,
        source=_S.AWAITING_CAPTURE,
        triggers=_PREEMPTING,
        guard=Guard.HIGH_PRIORITY_DOWNGRADES_CAPTURE,
        target=_S.AWAITING_CAPTURE,
        actions=(Action.DOWNGRADE_CAPTURE,),
        seed_guard="... or downgrade the current capture job depending on Planner policy",
        seed_actions="(lower the job's priority; keep waiting until its deadline)",
    ),
    Row(
        name="row_10_redacting_risk_red_goes_deferred",
        seed_row=10,
        source=_S.REDACTING,
        triggers=_INTERNAL,
        guard=Guard.RISK_RED,
        target=_S.DEFERRED,
        actions=(Action.ABORT_ROUND, Action.SET_SHORT_BACKOFF, Action.AUDIT_REDACTION),
        seed_guard="Risk = red",
        seed_actions="Abort this round; short backoff; audit record.",
    ),
    Row(
        name="row_11_redacting_risk_amber_or_green_goes_extracting",
        seed_row=11,
        source=_S.REDACTING,
        triggers=_INTERNAL,
        guard=Guard.RISK_AMBER_OR_GREEN,
        target=_S.EXTRACTING,
        actions=(Action.AUDIT_REDACTION, Action.BUDGET_CONTEXT, Action.START_EXTRACTORS),
        seed_guard="Risk = amber/green",
        seed_actions=(
            "Budget context (Base first, then plugin content by priority, include screenshot ID reference); "
            "start extractors."
        ),
    ),
    Row(
        name="row_12_extracting_extractors_settled_goes_synthesizing",
        seed_row=12,
        source=_S.EXTRACTING,
        triggers=frozenset({_K.INTERNAL, _K.TIMEOUT}),
        guard=Guard.EXTRACTORS_SETTLED,
        target=_S.SYNTHESIZING,
        actions=(Action.MERGE_FRAGMENTS, Action.RESOLVE_CONFLICTS, Action.LABEL_CONFIDENCE_AND_COST),
        seed_guard="All extractors done or timed out",
        seed_actions="Merge fragments; resolve conflicts; assign confidence/cost labels.",
    ),
    Row(
        name="row_13_synthesizing_goes_planning",
        seed_row=13,
        source=_S.SYNTHESIZING,
        triggers=_INTERNAL,
        guard=Guard.NONE,
        target=_S.PLANNING,
        actions=(Action.PRODUCE_CANDIDATES, Action.RUN_PLANNER),
        seed_guard="—",
        seed_actions="Produce candidate actions with rationale and context hash for deduplication.",
    ),
    Row(
        name="row_14_planning_low_value_goes_cooling",
        seed_row=14,
        source=_S.PLANNING,
        triggers=_INTERNAL,
        guard=Guard.PLAN_SILENT,
        target=_S.COOLING,
        actions=(Action.SET_LONG_COOLDOWN, Action.RECORD_SILENTLY),
        seed_guard="Low confidence/low value",
        seed_actions="Set longer cooldown; no user-facing output; record silently.",
    ),
    Row(
        name="row_15_planning_high_value_goes_acting",
        seed_row=15,
        source=_S.PLANNING,
        triggers=_INTERNAL,
        guard=Guard.PLAN_NOTIFY,
        target=_S.ACTING,
        actions=(Action.EMIT_NOTIFICATION,),
        seed_guard="High confidence/high value",
        seed_actions="Emit notification/suggestion; include source summary and snooze/disable entry points.",
    ),
    Row(
        name="row_16_acting_output_completed_goes_cooling",
        seed_row=16,
        source=_S.ACTING,
        triggers=_INTERNAL,
        guard=Guard.OUTPUT_COMPLETED,
        target=_S.COOLING,
        actions=(Action.AUDIT_ROUND,),
        seed_guard="Output completed",
        seed_actions="Audit: plugins used, redaction, LLM cost, next schedule params.",
    ),
    Row(
        name="row_17_cooling_min_interval_or_high_priority_goes_idle",
        seed_row=17,
        source=_S.COOLING,
        triggers=ROUND_TRIGGERS,
        guard=Guard.COOLDOWN_OVER_OR_HIGH_PRIORITY,
        target=_S.IDLE,
        actions=(Action.END_COOLDOWN,),
        seed_guard="Reaches min interval or receives high-priority event",
        seed_actions="End cooldown; accept new round.",
    ),
    Row(
        name="row_18_routing_defer_goes_deferred",
        seed_row=18,
        source=_S.ROUTING,
        triggers=_INTERNAL,
        guard=Guard.ROUTE_DEFER,
        target=_S.DEFERRED,
        actions=(Action.RECORD_DEFER_REASON, Action.SET_SHORT_BACKOFF),
        seed_guard="Router decides Defer",
        seed_actions="Reason: focus thrash, locked, low value, or privacy; set short backoff and exit.",
    ),
)
