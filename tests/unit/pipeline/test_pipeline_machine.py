"""The orchestration table of seed 000: one test per row (named after it), one per additional
guard, the table's coverage and the exclusivity of its guards. Time comes from an injected clock."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

import pytest
from kronii.pipeline.core.deferral import LONG_TICK_MS, SHORT_BACKOFF_MS, DeferReason, defer, deferral_over
from kronii.pipeline.core.extraction import ExtractorRound
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.limits import RateLedger, RateLimits, check
from kronii.pipeline.core.machine import Facts, NoTransition, Step, matching_rows, step
from kronii.pipeline.core.router import BaseSnapshot, Capability, PluginInfo, RouterHistory, route
from kronii.pipeline.core.states import (
    ROUND_TRIGGERS,
    CapturePreemption,
    CaptureStatus,
    PolicyKind,
    Priority,
    RunState,
    Trigger,
    TriggerKind,
)
from kronii.pipeline.core.table import TABLE, Action, Row
from kronii.redaction import Level

S = RunState
K = TriggerKind
T0 = 1_700_000_000_000
LIMITS = RateLimits(global_max=2, global_window_ms=60_000, per_app_max=1, per_app_window_ms=60_000)
CAPTURE = PluginInfo("screencapture", True, True, frozenset({Capability.SNAPSHOT}), 0.2, 1)
ZOOM = PluginInfo("zoom", True, True, frozenset({Capability.SUMMARIZE, Capability.EVENTS}), 0.3, 5)
VSCODE = PluginInfo("vscode", True, True, frozenset({Capability.SNAPSHOT}), 0.1, 9)


class Clock:
    def __init__(self, now_ms: int = T0) -> None:
        self.now_ms = now_ms

    def advance(self, ms: int) -> int:
        self.now_ms += ms
        return self.now_ms


@pytest.fixture
def clock() -> Clock:
    return Clock()


def internal(clock: Clock) -> Trigger:
    return Trigger(K.INTERNAL, clock.now_ms)


def fired(result: Step | NoTransition, row_name: str) -> Step:
    assert isinstance(result, Step), result
    assert result.row.name == row_name
    assert result.target is result.row.target
    return result


def focus(at_ms: int, wm_class: str, title: str, priority: Priority = Priority.NORMAL) -> Trigger:
    return Trigger(
        K.FOCUS_CHANGED, at_ms, app=wm_class, wm_class=wm_class, window_id=7, title=title, priority=priority
    )


def decide(trigger: Trigger, base: BaseSnapshot, plugins: tuple[PluginInfo, ...]) -> Facts:
    """The Routing facts the real Router gives for `trigger`."""
    batch = Batch(first=trigger, last=trigger, count=1, opened_at_ms=trigger.at_ms)
    decision = route(batch, base, plugins, RouterHistory(), trigger.at_ms)
    return Facts(route=decision.kind, needs_screenshot=decision.needs_screenshot)


# ---- rows -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(ROUND_TRIGGERS))
def test_row_01_idle_round_trigger_not_cooling_not_locked_goes_collecting(
    kind: TriggerKind, clock: Clock
) -> None:
    result = fired(step(S.IDLE, Trigger(kind, clock.now_ms), Facts()), TABLE[0].name)
    assert result.target is S.COLLECTING
    assert result.actions == (Action.FETCH_SNAPSHOT, Action.OPEN_BATCH, Action.COALESCE_NEAR_EVENTS)


@pytest.mark.parametrize(
    "facts", [Facts(in_global_cooldown=True), Facts(locked=True)], ids=["cooldown", "locked"]
)
def test_row_01_guard_blocks_round_in_global_cooldown_or_locked(facts: Facts, clock: Clock) -> None:
    result = step(S.IDLE, Trigger(K.FOCUS_CHANGED, clock.now_ms), facts)
    assert isinstance(result, NoTransition)
    assert result.state is S.IDLE
    assert "global cooldown or locked" in result.reason


def test_row_02_idle_lock_start_goes_deferred(clock: Clock) -> None:
    result = fired(
        step(S.IDLE, Trigger(K.LOCK_START, clock.now_ms), Facts()), "row_02_idle_lock_start_goes_deferred"
    )
    assert result.target is S.DEFERRED
    assert Action.RECORD_LOCK_REASON in result.actions and Action.HOLD_PLUGIN_PULLS in result.actions


def test_row_03_deferred_lock_end_or_tick_goes_collecting(clock: Clock) -> None:
    name = "row_03_deferred_lock_end_or_tick_goes_collecting"
    lock = defer(DeferReason.LOCKED, clock.now_ms)
    # LockEnd resumes at once.
    assert (
        fired(step(S.DEFERRED, Trigger(K.LOCK_END, clock.advance(1_000)), Facts()), name).target
        is S.COLLECTING
    )
    # While locked, a tick only resumes once it is a long tick.
    early = Facts(deferral_over=deferral_over(lock, clock.advance(60_000), locked=True))
    assert isinstance(step(S.DEFERRED, Trigger(K.TICK, clock.now_ms), early), NoTransition)
    late = Facts(deferral_over=deferral_over(lock, T0 + LONG_TICK_MS, locked=True))
    result = fired(step(S.DEFERRED, Trigger(K.TICK, T0 + LONG_TICK_MS), late), name)
    assert Action.DROP_HIGH_FREQUENCY_BACKLOG in result.actions


def test_row_03_tick_resumes_a_backoff_deferral_only_after_the_short_backoff(clock: Clock) -> None:
    red = defer(DeferReason.RISK_RED, clock.now_ms)
    before = Facts(deferral_over=deferral_over(red, clock.advance(SHORT_BACKOFF_MS - 1), locked=False))
    blocked = step(S.DEFERRED, Trigger(K.TICK, clock.now_ms), before)
    assert isinstance(blocked, NoTransition) and "backoff" in blocked.reason
    after = Facts(deferral_over=deferral_over(red, clock.advance(1), locked=False))
    assert isinstance(step(S.DEFERRED, Trigger(K.TICK, clock.now_ms), after), Step)


def test_row_04_collecting_router_fields_ready_goes_routing(clock: Clock) -> None:
    verdict = check(RateLedger(), "code", clock.now_ms, LIMITS)
    facts = Facts(router_fields_ready=True, routing_allowed=verdict.allowed)
    result = fired(
        step(S.COLLECTING, internal(clock), facts), "row_04_collecting_router_fields_ready_goes_routing"
    )
    assert result.target is S.ROUTING
    assert result.actions == (Action.SUMMARIZE_CONTEXT_META, Action.RECORD_RUN)
    assert isinstance(step(S.COLLECTING, internal(clock), Facts(router_fields_ready=False)), NoTransition)


def test_row_05_routing_base_only_goes_redacting(clock: Clock) -> None:
    pulse = Trigger(K.ACTIVITY_PULSE, clock.now_ms, app="code")
    facts = decide(
        pulse, BaseSnapshot(clock.now_ms, wm_class="code", title="main.py - kronii - Visual Studio Code"), ()
    )
    assert facts.route is PolicyKind.BASE_ONLY
    result = fired(step(S.ROUTING, internal(clock), facts), "row_05_routing_base_only_goes_redacting")
    assert result.target is S.REDACTING and result.actions == (Action.SKIP_PLUGIN_PULLS,)


def test_row_06_routing_plugins_with_screenshot_goes_awaiting_capture(clock: Clock) -> None:
    trigger = focus(clock.now_ms, "zoom", "Zoom Meeting")
    facts = decide(
        trigger,
        BaseSnapshot(clock.now_ms, app="zoom", wm_class="zoom", title="Zoom Meeting"),
        (ZOOM, CAPTURE),
    )
    assert facts.needs_screenshot and facts.route is PolicyKind.PLUGIN_LITE
    result = fired(
        step(S.ROUTING, internal(clock), facts),
        "row_06_routing_plugins_with_screenshot_goes_awaiting_capture",
    )
    assert result.target is S.AWAITING_CAPTURE
    assert Action.REQUEST_CAPTURE in result.actions and Action.STORE_CAPTURE_DEADLINE in result.actions


def test_row_07_routing_plugins_no_screenshot_goes_collecting(clock: Clock) -> None:
    title = "main.py - kronii - Visual Studio Code"
    facts = decide(
        focus(clock.now_ms, "code", title),
        BaseSnapshot(clock.now_ms, app="vscode", wm_class="code", title=title),
        (VSCODE, CAPTURE),
    )
    assert facts.route is PolicyKind.PLUGIN_FULL and not facts.needs_screenshot
    result = fired(
        step(S.ROUTING, internal(clock), facts), "row_07_routing_plugins_no_screenshot_goes_collecting"
    )
    assert result.target is S.COLLECTING and result.actions == (Action.PULL_PLUGIN_CONTEXT,)


def test_row_07b_routing_plugins_gathered_goes_redacting(clock: Clock) -> None:
    facts = Facts(route=PolicyKind.PLUGIN_LITE, plugin_context_gathered=True)
    result = fired(step(S.ROUTING, internal(clock), facts), "row_07b_routing_plugins_gathered_goes_redacting")
    assert result.target is S.REDACTING
    # Back from Collecting the plugin route would otherwise pull again forever.
    assert not any(a is Action.PULL_PLUGIN_CONTEXT for a in result.actions)


def test_row_08_awaiting_capture_persisted_within_ttl_goes_redacting(clock: Clock) -> None:
    status = Trigger(
        K.CAPTURE_STATUS, clock.advance(2_000), capture_status=CaptureStatus.PERSISTED, capture_job_id="j1"
    )
    result = fired(
        step(S.AWAITING_CAPTURE, status, Facts(capture_within_ttl=True)),
        "row_08_awaiting_capture_persisted_within_ttl_goes_redacting",
    )
    assert result.target is S.REDACTING and Action.ATTACH_SCREENSHOT_ID in result.actions


@pytest.mark.parametrize(
    "trigger",
    [
        Trigger(K.CAPTURE_STATUS, T0, capture_status=CaptureStatus.EXPIRED),
        Trigger(K.CAPTURE_STATUS, T0, capture_status=CaptureStatus.REJECTED),
        Trigger(K.CAPTURE_STATUS, T0, capture_status=CaptureStatus.FAILED),
        Trigger(K.TIMEOUT, T0),
        Trigger(K.CAPTURE_STATUS, T0, capture_status=CaptureStatus.PERSISTED),  # past its ttl
    ],
    ids=["expired", "rejected", "failed", "timeout", "persisted_after_ttl"],
)
def test_row_09_awaiting_capture_failed_or_timeout_goes_redacting(trigger: Trigger) -> None:
    result = fired(
        step(S.AWAITING_CAPTURE, trigger, Facts(capture_within_ttl=False)),
        "row_09_awaiting_capture_failed_or_timeout_goes_redacting",
    )
    assert result.target is S.REDACTING
    assert result.actions == (Action.LOG_CAPTURE_FAILURE, Action.DEGRADE_CONTEXT)
    assert Action.ATTACH_SCREENSHOT_ID not in result.actions


def test_row_09_capture_in_progress_keeps_waiting(clock: Clock) -> None:
    status = Trigger(K.CAPTURE_STATUS, clock.now_ms, capture_status=CaptureStatus.CAPTURING)
    result = step(S.AWAITING_CAPTURE, status, Facts(capture_within_ttl=True))
    assert isinstance(result, NoTransition) and result.reason == "capture still in progress"


def test_row_10_redacting_risk_red_goes_deferred(clock: Clock) -> None:
    result = fired(
        step(S.REDACTING, internal(clock), Facts(risk=Level.RED)), "row_10_redacting_risk_red_goes_deferred"
    )
    assert result.target is S.DEFERRED
    assert result.actions == (Action.ABORT_ROUND, Action.SET_SHORT_BACKOFF, Action.AUDIT_REDACTION)


@pytest.mark.parametrize("level", [Level.AMBER, Level.GREEN])
def test_row_11_redacting_risk_amber_or_green_goes_extracting(level: Level, clock: Clock) -> None:
    result = fired(
        step(S.REDACTING, internal(clock), Facts(risk=level)),
        "row_11_redacting_risk_amber_or_green_goes_extracting",
    )
    assert result.target is S.EXTRACTING
    assert Action.BUDGET_CONTEXT in result.actions and Action.START_EXTRACTORS in result.actions
    assert isinstance(step(S.REDACTING, internal(clock), Facts(risk=None)), NoTransition)


def test_row_12_extracting_extractors_settled_goes_synthesizing(clock: Clock) -> None:
    name = "row_12_extracting_extractors_settled_goes_synthesizing"
    extractors = ExtractorRound.start(["window", "plugins"], clock.now_ms, timeout_ms=5_000)
    extractors.finish("window", ok=True, now_ms=clock.advance(100))
    pending = Facts(extractors_settled=extractors.settled(clock.now_ms))
    assert isinstance(step(S.EXTRACTING, internal(clock), pending), NoTransition)
    # The slow extractor times out: the round moves on without it.
    settled = Facts(extractors_settled=extractors.settled(clock.advance(5_000)))
    assert fired(step(S.EXTRACTING, internal(clock), settled), name).target is S.SYNTHESIZING
    assert fired(step(S.EXTRACTING, Trigger(K.TIMEOUT, clock.now_ms), pending), name).target is S.SYNTHESIZING


def test_row_13_synthesizing_goes_planning(clock: Clock) -> None:
    result = fired(step(S.SYNTHESIZING, internal(clock), Facts()), "row_13_synthesizing_goes_planning")
    assert result.target is S.PLANNING and Action.PRODUCE_CANDIDATES in result.actions


def test_row_14_planning_low_value_goes_cooling(clock: Clock) -> None:
    result = fired(
        step(S.PLANNING, internal(clock), Facts(planner_notifies=False)),
        "row_14_planning_low_value_goes_cooling",
    )
    assert result.target is S.COOLING
    assert result.actions == (Action.SET_LONG_COOLDOWN, Action.RECORD_SILENTLY)
    assert isinstance(step(S.PLANNING, internal(clock), Facts(planner_notifies=None)), NoTransition)


def test_row_15_planning_high_value_goes_acting(clock: Clock) -> None:
    result = fired(
        step(S.PLANNING, internal(clock), Facts(planner_notifies=True)),
        "row_15_planning_high_value_goes_acting",
    )
    assert result.target is S.ACTING and result.actions == (Action.EMIT_NOTIFICATION,)


def test_row_16_acting_output_completed_goes_cooling(clock: Clock) -> None:
    name = "row_16_acting_output_completed_goes_cooling"
    assert isinstance(step(S.ACTING, internal(clock), Facts(output_done=False)), NoTransition)
    result = fired(step(S.ACTING, internal(clock), Facts(output_done=True)), name)
    assert result.target is S.COOLING and result.actions == (Action.AUDIT_ROUND,)


def test_row_17_cooling_min_interval_or_high_priority_goes_idle(clock: Clock) -> None:
    name = "row_17_cooling_min_interval_or_high_priority_goes_idle"
    min_interval_ms, cooling_since = 600_000, clock.now_ms
    early = Facts(cooldown_reached=clock.advance(60_000) - cooling_since >= min_interval_ms)
    assert isinstance(step(S.COOLING, Trigger(K.TICK, clock.now_ms), early), NoTransition)
    # A normal trigger does not end the cooldown, a high-priority one does.
    assert isinstance(step(S.COOLING, focus(clock.now_ms, "code", "a.py"), early), NoTransition)
    urgent = focus(clock.now_ms, "code", "a.py", Priority.HIGH)
    assert fired(step(S.COOLING, urgent, early), name).target is S.IDLE
    reached = Facts(cooldown_reached=clock.advance(min_interval_ms) - cooling_since >= min_interval_ms)
    result = fired(step(S.COOLING, Trigger(K.TICK, clock.now_ms), reached), name)
    assert result.actions == (Action.END_COOLDOWN,)


def test_row_18_routing_defer_goes_deferred(clock: Clock) -> None:
    trigger = Trigger(K.ACTIVITY_PULSE, clock.now_ms)
    facts = decide(trigger, BaseSnapshot(clock.now_ms, locked=True), ())
    assert facts.route is PolicyKind.DEFER
    result = fired(step(S.ROUTING, internal(clock), facts), "row_18_routing_defer_goes_deferred")
    assert result.target is S.DEFERRED
    assert result.actions == (Action.RECORD_DEFER_REASON, Action.SET_SHORT_BACKOFF)


# ---- additional guards ------------------------------------------------------------------------


def test_guard_high_priority_trigger_cancels_capture(clock: Clock) -> None:
    urgent = focus(clock.advance(500), "firefox", "Docs - Mozilla Firefox", Priority.HIGH)
    facts = Facts(capture_preemption=CapturePreemption.CANCEL)
    result = fired(step(S.AWAITING_CAPTURE, urgent, facts), "guard_high_priority_trigger_cancels_capture")
    assert result.target is S.COLLECTING and result.actions[0] is Action.CANCEL_CAPTURE
    # The same focus change at normal priority lets the capture run.
    normal = replace(urgent, priority=Priority.NORMAL)
    assert isinstance(step(S.AWAITING_CAPTURE, normal, facts), NoTransition)


def test_guard_high_priority_trigger_downgrades_capture(clock: Clock) -> None:
    urgent = focus(clock.advance(500), "firefox", "Docs - Mozilla Firefox", Priority.HIGH)
    facts = Facts(capture_preemption=CapturePreemption.DOWNGRADE)
    result = fired(step(S.AWAITING_CAPTURE, urgent, facts), "guard_high_priority_trigger_downgrades_capture")
    assert result.target is S.AWAITING_CAPTURE and result.actions == (Action.DOWNGRADE_CAPTURE,)


def test_guard_rate_limit_before_routing_goes_deferred(clock: Clock) -> None:
    ledger = RateLedger()
    for _ in range(LIMITS.global_max):
        ledger = ledger.record("other", clock.advance(1_000), LIMITS)
    verdict = check(ledger, "code", clock.now_ms, LIMITS)
    assert not verdict.allowed
    facts = Facts(router_fields_ready=True, routing_allowed=verdict.allowed)
    result = fired(
        step(S.COLLECTING, internal(clock), facts), "guard_rate_limit_before_routing_goes_deferred"
    )
    assert result.target is S.DEFERRED and Action.RECORD_RATE_LIMITED in result.actions
    # Once the window slides past, routing is allowed again.
    later = check(ledger, "code", clock.advance(LIMITS.global_window_ms), LIMITS)
    assert later.allowed


def test_guard_rate_limit_before_capture_request_skips_capture(clock: Clock) -> None:
    captures = RateLedger().record("zoom", clock.now_ms, LIMITS)
    verdict = check(captures, "zoom", clock.advance(1_000), LIMITS)
    facts = Facts(route=PolicyKind.PLUGIN_LITE, needs_screenshot=True, capture_allowed=verdict.allowed)
    result = fired(
        step(S.ROUTING, internal(clock), facts), "guard_rate_limit_before_capture_request_skips_capture"
    )
    assert result.target is S.COLLECTING
    assert Action.REQUEST_CAPTURE not in result.actions and Action.SKIP_CAPTURE in result.actions
    # After the other plugin context is pulled, the round goes on to Redacting (no loop).
    gathered = replace(facts, plugin_context_gathered=True)
    assert fired(
        step(S.ROUTING, internal(clock), gathered), "row_07b_routing_plugins_gathered_goes_redacting"
    )


# ---- the table as a whole ---------------------------------------------------------------------


def test_unaccepted_trigger_is_an_explicit_no_transition() -> None:
    result = step(S.SYNTHESIZING, Trigger(K.FOCUS_CHANGED, T0), Facts())
    assert result == NoTransition(
        S.SYNTHESIZING, K.FOCUS_CHANGED, "synthesizing does not accept focus_changed"
    )


def test_table_covers_every_seed_row_and_additional_guard_each_tested_and_reachable() -> None:
    assert sorted({row.seed_row for row in TABLE if row.seed_row is not None}) == list(range(1, 19))
    seed_rows = [row.seed_row for row in TABLE if row.seed_row is not None]
    assert seed_rows == sorted(seed_rows), "rows are in the seed's order"
    assert {row.additional_guard for row in TABLE if row.additional_guard is not None} == {1, 2}
    tests = [name for name in vars(sys.modules[__name__]) if name.startswith("test_")]
    untested = [row.name for row in TABLE if not any(t.startswith(f"test_{row.name}") for t in tests)]
    assert untested == []
    reachable, frontier = {S.IDLE}, [S.IDLE]
    while frontier:
        source = frontier.pop()
        for row in TABLE:
            if row.source is source and row.target not in reachable:
                reachable.add(row.target)
                frontier.append(row.target)
    assert reachable == set(RunState)
    assert {row.source for row in TABLE} == set(RunState), "every state has a way out"


def _random_facts(rng: random.Random) -> Facts:
    def flag() -> bool:
        return rng.random() < 0.5

    return Facts(
        in_global_cooldown=flag(),
        locked=flag(),
        deferral_over=flag(),
        router_fields_ready=flag(),
        routing_allowed=flag(),
        route=rng.choice([None, *PolicyKind]),
        needs_screenshot=flag(),
        capture_allowed=flag(),
        plugin_context_gathered=flag(),
        capture_within_ttl=flag(),
        capture_preemption=rng.choice(list(CapturePreemption)),
        risk=rng.choice([None, *Level]),
        extractors_settled=flag(),
        planner_notifies=rng.choice([None, True, False]),
        output_done=flag(),
        cooldown_reached=flag(),
    )


def test_guards_sharing_a_state_and_trigger_are_mutually_exclusive() -> None:
    rng = random.Random(0)
    for _ in range(3_000):
        trigger = Trigger(
            rng.choice(list(TriggerKind)),
            T0,
            priority=rng.choice(list(Priority)),
            capture_status=rng.choice([None, *CaptureStatus]),
        )
        for state in RunState:
            rows: tuple[Row, ...] = matching_rows(state, trigger, _random_facts(rng))
            assert len(rows) <= 1, [row.name for row in rows]
