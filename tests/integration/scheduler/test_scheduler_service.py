"""The scheduler as a process: a plan over NATS or HTTP becomes one Tick on NATS at its due time,
admission answers over NATS request/reply and HTTP, GET /v1/schedule shows what is pending, and a
bad request is a 400 naming the field."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
import psycopg
import pytest
from google.protobuf.json_format import MessageToDict
from kronii.foundation.urls import libpq_url
from kronii.scheduler.v1 import scheduler_pb2 as pb
from kronii.scheduler.v1 import scheduler_pb2_grpc as pb_grpc
from kronii.stores import subjects

from tests.infra import InfraUrls
from tests.integration.scheduler.conftest import Scheduler
from tests.integration.scheduler.ticks import listening


def _app(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def _pending_for(scheduler: Scheduler, app: str) -> list[dict[str, object]]:
    return [item for item in scheduler.get_schedule()["wakeups"] if item["app"] == app]


async def test_plan_on_nats_emits_one_tick_on_nats_at_its_due_time(
    scheduler: Scheduler, infra: InfraUrls
) -> None:
    app = _app("editor")
    async with listening(infra.nats) as ticks:
        sent_at = time.time()
        plan = pb.Plan(run_id="run-nats", app=app, wakeup_in_ms=1000, reason="check the build")
        await ticks.bus.publish(subjects.SCHEDULER_PLAN, plan)
        arrived, tick = await ticks.wait_for_app(app, timeout=5)
        assert 0.95 <= arrived - sent_at <= 1.8, f"the Tick arrived {arrived - sent_at:.2f} s after the plan"
        assert tick.kind == pb.PLANNED and tick.run_id == "run-nats" and tick.reason == "check the build"
        due = tick.due_at.seconds + tick.due_at.nanos / 1e9
        fired = tick.fired_at.seconds + tick.fired_at.nanos / 1e9
        assert 0 <= fired - due < 0.5
        await asyncio.sleep(1.0)
        assert len(ticks.for_wakeup(tick.wakeup_id)) == 1, "a due wake-up fires once"
    assert _pending_for(scheduler, app) == []
    # Counters start at 0 for every kind: the planned one must have counted this Tick.
    exported = scheduler.metrics()
    assert 'kronii_scheduler_ticks_emitted_total{kind="planned"} 1.0' in exported
    # KroniiSchedulerTicksStopped reads when the last Tick went out, whether or not a scrape saw it.
    last_tick = next(
        float(line.split()[-1])
        for line in exported.splitlines()
        if line.startswith("kronii_scheduler_last_tick_timestamp_seconds ")
    )
    assert sent_at < last_tick <= time.time()


async def test_a_new_plan_for_the_same_app_replaces_its_pending_wakeup(
    scheduler: Scheduler, infra: InfraUrls
) -> None:
    app = _app("chat")
    first = scheduler.plan(app=app, wakeup_in_ms=800)
    second = scheduler.plan(app=app, wakeup_in_ms=1500)
    assert [item["wakeup_id"] for item in _pending_for(scheduler, app)] == [second["wakeup_id"]]
    async with listening(infra.nats) as ticks:
        await ticks.wait_for(second["wakeup_id"], timeout=5)
        assert ticks.for_wakeup(first["wakeup_id"]) == []


def test_get_schedule_shows_the_pending_wakeup_cooldown_and_filters(scheduler: Scheduler) -> None:
    app = _app("browser")
    planned = scheduler.plan(
        run_id="run-view",
        app=app,
        wakeup_in_ms=120_000,
        min_cooldown_ms=60_000,
        trigger_filters=["tick", f"app:{app}"],
        reason="come back later",
    )
    view = scheduler.get_schedule()
    (pending,) = _pending_for(scheduler, app)
    assert pending["wakeup_id"] == planned["wakeup_id"] and pending["slot"] == f"app:{app}"
    assert pending["kind"] == "PLANNED" and pending["run_id"] == "run-view"
    assert 110_000 < int(str(pending["due_in_ms"])) <= 120_000
    cooldown = view["cooldown"]
    assert cooldown["active"] is True and cooldown["app"] == app and cooldown["run_id"] == "run-view"
    assert 50_000 < int(cooldown["remaining_ms"]) <= 60_000
    assert {item["filter"] for item in view["filters"]} >= {"tick", f"app:{app}"}
    assert view["global_ceiling_per_hour"] == 1000 and view["app_ceiling_per_hour"] == 3
    assert any(item["slot"] == "safety_net" for item in view["wakeups"]), "the safety net is always pending"
    scheduler.plan(app=app)  # no wake-up, no cooldown: the next tests start without a cooldown


async def test_admit_over_nats_refuses_in_cooldown_and_a_justified_high_priority_trigger_preempts(
    scheduler: Scheduler, infra: InfraUrls
) -> None:
    scheduler.plan(run_id="run-cool", app="code", min_cooldown_ms=30_000)
    async with listening(infra.nats) as nats:
        refused = await nats.admit(pb.AdmitRequest(app="firefox", trigger_kind="focus_changed"))
        assert not refused.allowed and refused.reason == "cooldown"
        assert 25_000 < refused.retry_after_ms <= 30_000
        unjustified = await nats.admit(
            pb.AdmitRequest(app="firefox", trigger_kind="focus_changed", priority=pb.HIGH)
        )
        assert not unjustified.allowed and "justification" in unjustified.detail
        preempt = await nats.admit(
            pb.AdmitRequest(
                app="firefox", trigger_kind="focus_changed", priority=pb.HIGH, justification="meeting starts"
            )
        )
        assert preempt.allowed and preempt.preempted_cooldown and preempt.reason == "preempted_cooldown"
        after = await nats.admit(pb.AdmitRequest(app="firefox", trigger_kind="activity_pulse"))
        assert after.allowed, "a preemption ends the cooldown"
        invalid = await nats.admit(pb.AdmitRequest(app="firefox", trigger_kind="window_moved"))
        assert not invalid.allowed and invalid.reason == "invalid" and "trigger_kind" in invalid.detail
    assert scheduler.get_schedule()["cooldown"]["active"] is False
    assert 'kronii_scheduler_preemptions_total{trigger_kind="focus_changed"} 1.0' in scheduler.metrics()


def test_per_app_ceiling_over_http_refuses_the_fourth_run_in_an_hour(scheduler: Scheduler) -> None:
    scheduler.plan(app="other")  # no cooldown
    app = _app("busy")
    outcomes = [scheduler.admit(app=app, trigger_kind="activity_pulse") for _ in range(4)]
    assert [item["allowed"] for item in outcomes] == [True, True, True, False]
    assert outcomes[3]["reason"] == "app_ceiling"
    assert 3_590_000 < int(outcomes[3]["retry_after_ms"]) <= 3_600_000
    dry = scheduler.admit(app=_app("fresh"), trigger_kind="activity_pulse", dry_run=True)
    assert dry["allowed"] is True
    counters = {item["scope"]: item for item in scheduler.get_schedule()["app_runs"]}
    assert counters[app]["runs_last_hour"] == 3 and counters[app]["ceiling_per_hour"] == 3
    assert not any(scope.startswith("fresh-") for scope in counters), "a dry run is not counted"


def test_trigger_filter_from_a_plan_refuses_that_kind_over_http(scheduler: Scheduler) -> None:
    app = _app("mail")
    scheduler.plan(app=app, wakeup_in_ms=60_000, trigger_filters=["PluginEvent"])
    refused = scheduler.admit(app=app, trigger_kind="plugin_event", priority="high", justification="x")
    assert refused["allowed"] is False and refused["reason"] == "filtered"
    assert 50_000 < int(refused["retry_after_ms"]) <= 60_000
    assert scheduler.admit(app=app, trigger_kind="lock_end")["allowed"] is True


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/v1/plans", {"min_cooldown_ms": "soon"}, "min_cooldown_ms"),
        ("/v1/plans", {"trigger_filters": ["title_changed"]}, "trigger_filters"),
        ("/v1/plans", {"next_wakeup": "2001-01-01T00:00:00Z"}, "next_wakeup"),
        ("/v1/plans", {"wakeup_in_ms": 5, "next_wakeup": "2030-01-01T00:00:00Z"}, "next_wakeup"),
        ("/v1/plans", ["not", "an", "object"], "JSON object"),
        ("/v1/admit", {"app": "code"}, "trigger_kind"),
        ("/v1/admit", {"trigger_kind": "focus_changed", "priority": "urgent"}, "priority"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(
    scheduler: Scheduler, path: str, body: object, expected: str
) -> None:
    response = scheduler.post(path, body)
    assert response.status_code == 400, response.text
    assert expected in response.json()["detail"]


async def test_safety_net_tick_fires_when_no_tick_fired_for_its_interval(
    scheduler: Scheduler, infra: InfraUrls
) -> None:
    async with listening(infra.nats) as ticks:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline and len(ticks.of_kind(pb.SAFETY_NET)) < 2:
            await asyncio.sleep(0.05)
        safety = ticks.of_kind(pb.SAFETY_NET)
    assert len(safety) >= 2, "the safety net fires again and again"
    first, second = safety[0][1], safety[1][1]
    assert first.wakeup_id != second.wakeup_id
    assert second.due_at.seconds - first.fired_at.seconds in (1, 2, 3)


def test_grpc_get_schedule_and_invalid_argument(scheduler: Scheduler) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{scheduler.grpc_port}") as channel:
        stub = pb_grpc.SchedulerServiceStub(channel)
        planned = stub.SubmitPlan(pb.Plan(app="grpc-app", wakeup_in_ms=600_000), timeout=5)
        view = stub.GetSchedule(pb.GetScheduleRequest(), timeout=5)
        assert planned.wakeup_id in {item.wakeup_id for item in view.wakeups}
        with pytest.raises(grpc.RpcError) as caught:
            stub.Admit(pb.AdmitRequest(trigger_kind="nonsense"), timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "trigger_kind" in str(caught.value.details())
    assert MessageToDict(view)["globalCeilingPerHour"] == 1000


def test_plans_are_audited(scheduler: Scheduler, migrated_database: str) -> None:
    app = _app("audited")
    scheduler.plan(run_id="run-audit", app=app, wakeup_in_ms=600_000)
    deadline = time.monotonic() + 5
    rows: list[tuple[str, str]] = []
    while time.monotonic() < deadline and not rows:
        with psycopg.connect(libpq_url(migrated_database)) as conn:
            rows = conn.execute(
                "SELECT actor, outcome FROM audit_log WHERE service = 'scheduler' AND action = 'schedule.plan'"
                " AND subject = %s",
                (app,),
            ).fetchall()
        time.sleep(0.05)
    assert rows == [("run-audit", "applied")]


def test_a_plan_for_a_prompt_window_sets_no_cooldown_and_is_audited_as_ignored(
    scheduler: Scheduler, migrated_database: str
) -> None:
    scheduler.plan(app="other")  # start without a cooldown
    answer = scheduler.plan(
        run_id="run-prompt", app="Gcr-prompter", min_cooldown_ms=1_200_000, wakeup_in_ms=600_000
    )
    assert not answer.get("wakeup_id") and not answer.get("cooldown_until")
    view = scheduler.get_schedule()
    assert view["cooldown"]["active"] is False, view["cooldown"]
    assert not _pending_for(scheduler, "Gcr-prompter")
    assert scheduler.admit(app="XTerm", trigger_kind="focus_changed")["allowed"]
    deadline = time.monotonic() + 5
    rows: list[tuple[str, str]] = []
    while time.monotonic() < deadline and not rows:
        with psycopg.connect(libpq_url(migrated_database)) as conn:
            rows = conn.execute(
                "SELECT actor, outcome FROM audit_log WHERE service = 'scheduler' AND action = 'schedule.plan'"
                " AND subject = 'Gcr-prompter'",
            ).fetchall()
        time.sleep(0.05)
    assert rows == [("run-prompt", "ignored")]
