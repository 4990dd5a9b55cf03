"""The supervisor as a process: triggers over HTTP and gRPC into live panes, dedupe, refusal of
shells and of callers without a token, the fallback chain, collisions, guardrails and metrics."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import httpx
import jwt
import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

from tests.agents.harness import FAKE_CODEX, AttachedClient, CodexBin
from tests.integration.supervisor.conftest import Supervisor, token, wait_ready_pane


def test_trigger_delivers_to_a_live_codex_pane_with_the_exact_bytes(supervisor: Supervisor) -> None:
    spawned = supervisor.spawn("exec-agent", session_id="s-1")
    runtime = spawned["runtime"]
    assert spawned["attach_command"] == f"tmux -S {supervisor.socket} attach -t agents_ws1"
    wait_ready_pane(supervisor, runtime["runtime_id"])
    before = len(supervisor.codex.submits())
    outcome = supervisor.trigger("exec-agent", "review PR 12, then report")
    assert outcome["result"] == "delivered", outcome
    assert outcome["delivery_backend"] == "tmux" and outcome["runtime_id"] == runtime["runtime_id"]
    assert outcome["delivered_at"] and outcome["acked_by"] == "output"
    entry = supervisor.codex.submits()[before]
    assert entry["prompt"] == "review PR 12, then report"
    assert CodexBin.raw(entry) == b"review PR 12, then report\r"


def _agent(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


def _live(supervisor: Supervisor, agent: str, **spawn: Any) -> dict[str, Any]:
    runtime: dict[str, Any] = supervisor.spawn(agent, **spawn)["runtime"]
    marker = ">>>" if spawn.get("kind") == "python" else "\u203a"
    wait_ready_pane(supervisor, runtime["runtime_id"], marker)
    return runtime


def _submits_for(supervisor: Supervisor, prompt: str) -> list[dict[str, Any]]:
    return [entry for entry in supervisor.codex.submits() if entry["prompt"] == prompt]


def _eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _attempt_details(supervisor: Supervisor, trigger_id: str) -> list[dict[str, Any]]:
    with psycopg.connect(libpq_url(supervisor.database)) as conn:
        rows = conn.execute(
            "SELECT step, outcome, detail FROM supervisor_trigger_attempts WHERE trigger_id = %s ORDER BY id",
            (trigger_id,),
        ).fetchall()
    return [{"step": step, "outcome": outcome, **detail} for step, outcome, detail in rows]


def test_the_same_trigger_id_twice_gives_one_delivery_and_the_first_outcome(supervisor: Supervisor) -> None:
    agent = _agent("dedupe")
    _live(supervisor, agent, session_id="s-d")
    body = {"trigger_id": f"dup-{uuid.uuid4().hex[:8]}", "agent_id": agent, "workspace_id": "ws1",
            "thread_id": "th-dup", "prompt": "only once please"}  # fmt: skip
    with supervisor.client() as http:
        first = http.post("/v1/triggers", json=body).json()
        second = http.post("/v1/triggers", json=body).json()
    assert first["result"] == "delivered" and first["duplicate"] is False
    assert second["result"] == "delivered" and second["duplicate"] is True
    assert second["delivered_at"] == first["delivered_at"]
    assert len(_submits_for(supervisor, "only once please")) == 1


def test_multiline_prompt_with_control_characters_arrives_clean_and_submitted(supervisor: Supervisor) -> None:
    agent = _agent("multi")
    _live(supervisor, agent)
    raw = "Fix the \x1b[31mbuild\x1b[0m:\r\n  step one\x07\n  step two\x00\n"
    outcome = supervisor.trigger(agent, raw)
    assert outcome["result"] == "delivered", outcome
    (entry,) = _submits_for(supervisor, "Fix the build:\n  step one\n  step two")
    assert CodexBin.raw(entry) == b"\x1b[200~Fix the build:\n  step one\n  step two\x1b[201~\r"


def test_typed_not_submitted_is_detected_and_recovered_once(supervisor: Supervisor) -> None:
    agent = _agent("hasty")
    _live(supervisor, agent, kind="hasty")
    outcome = supervisor.trigger(agent, "this Enter lands in the paste window")
    assert outcome["result"] == "delivered", outcome
    assert outcome["typed_not_submitted"] is True and outcome["attempts"] == 1
    (entry,) = _submits_for(supervisor, "this Enter lands in the paste window")
    assert CodexBin.raw(entry) == b"this Enter lands in the paste window\r\r", "typed once, submitted twice"
    steps = [row["step"] for row in _attempt_details(supervisor, outcome["trigger_id"])]
    assert steps.count("deliver") == 1 and steps.count("resubmit") == 1


def test_plain_python_repl_is_triggered_through_its_pane(supervisor: Supervisor) -> None:
    agent = _agent("py")
    runtime = _live(supervisor, agent, kind="python", command=[sys.executable, "-i", "-q"])
    outcome = supervisor.trigger(agent, "print('kronii', 6 * 7)")
    assert outcome["result"] == "delivered", outcome
    with supervisor.client() as http:
        lines = http.get(f"/v1/runtimes/{runtime['runtime_id']}/logs").json()["lines"]
    assert "kronii 42" in lines


def test_a_shell_in_the_pane_is_refused_and_never_typed_into(supervisor: Supervisor) -> None:
    agent = _agent("shell")
    runtime = supervisor.spawn(agent, kind="generic", command=["bash", "--norc", "--noprofile", "-i"])[
        "runtime"
    ]
    time.sleep(0.3)
    outcome = supervisor.trigger(agent, "rm -rf ~/important")
    assert outcome["result"] == "failed" and outcome["error_code"] == "PANE_NOT_AGENT"
    assert outcome["attempts"] == 0
    with supervisor.client() as http:
        lines = http.get(f"/v1/runtimes/{runtime['runtime_id']}/logs").json()["lines"]
    assert not any("important" in line for line in lines)


def test_a_caller_without_a_token_or_outside_its_workspace_is_refused(supervisor: Supervisor) -> None:
    agent = _agent("guarded")
    _live(supervisor, agent)
    body = {"trigger_id": "t-noauth", "agent_id": agent, "workspace_id": "ws1", "prompt": "hello there"}
    plain = httpx.post(f"{supervisor.url}/v1/triggers", json=body)
    assert plain.status_code == 401 and "service token" in plain.json()["detail"]
    # Every claim it needs, signed with a key that is not the supervisor's.
    claims = {"sub": "forger", "scopes": ["trigger"], "workspaces": ["*"], "exp": time.time() + 600}
    forged_token = jwt.encode(claims, "not the supervisor's key, 32 bytes+", algorithm="HS256")
    forged = httpx.post(
        f"{supervisor.url}/v1/triggers", json=body, headers={"authorization": f"Bearer {forged_token}"}
    )
    assert forged.status_code == 401 and "signature does not match" in forged.json()["detail"]
    with supervisor.client(token(workspaces=("other",))) as http:
        elsewhere = http.post("/v1/triggers", json=body)
    assert elsewhere.status_code == 403 and "ws1" in elsewhere.json()["detail"]
    with supervisor.client(token(scopes=("read",))) as http:
        reader = http.post("/v1/triggers", json=body)
    assert reader.status_code == 403 and "trigger" in reader.json()["detail"]
    assert _submits_for(supervisor, "hello there") == []


def test_bad_requests_get_a_4xx_with_the_reason(supervisor: Supervisor) -> None:
    with supervisor.client() as http:
        missing = http.post("/v1/triggers", json={"agent_id": "a", "workspace_id": "ws1", "prompt": "x"})
        assert missing.status_code == 400 and "trigger_id is required" in missing.json()["detail"]
        unknown = http.post("/v1/triggers", json={"trigger_id": "t", "bogus": 1})
        assert unknown.status_code == 400 and "bogus" in unknown.json()["detail"]
        empty = http.post(
            "/v1/triggers",
            json={"trigger_id": "t-e", "agent_id": "a", "workspace_id": "ws1", "prompt": "\x1b[0m"},
        )
        assert empty.status_code == 400 and "empty" in empty.json()["detail"]
        force = http.post("/v1/triggers", json={"trigger_id": "t-f", "agent_id": "a", "workspace_id": "ws1",
                                                "prompt": "x", "force_override": True, "reason": "because"})  # fmt: skip
        assert force.status_code == 400 and "human_override:" in force.json()["detail"]
        assert http.get("/v1/runtimes/rt-nope").status_code == 404


def test_grpc_has_the_same_semantics_as_http(supervisor: Supervisor) -> None:
    agent = _agent("grpc")
    _live(supervisor, agent)
    with grpc.insecure_channel(f"127.0.0.1:{supervisor.grpc_port}") as channel:
        stub = pb_grpc.SupervisorServiceStub(channel)
        request = pb.TriggerRuntimeRequest(trigger_id=f"g-{uuid.uuid4().hex[:8]}", agent_id=agent,
                                           workspace_id="ws1", thread_id="th-g", prompt="hello over grpc")  # fmt: skip
        metadata = (("authorization", f"Bearer {token()}"),)
        outcome = stub.TriggerRuntime(request, metadata=metadata, timeout=30)
        assert outcome.result == "delivered" and outcome.delivery_backend == "tmux"
        again = stub.TriggerRuntime(request, metadata=metadata, timeout=30)
        assert again.duplicate and again.result == "delivered"
        with pytest.raises(grpc.RpcError) as refused:
            stub.TriggerRuntime(request, timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as invalid:
            stub.TriggerRuntime(pb.TriggerRuntimeRequest(agent_id=agent), metadata=metadata, timeout=10)
        assert invalid.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "trigger_id" in (invalid.value.details() or "")
        listed = stub.ListRuntimes(pb.ListRuntimesRequest(agent_id=agent), metadata=metadata, timeout=10)
        assert [r.agent_id for r in listed.runtimes] == [agent]
    assert len(_submits_for(supervisor, "hello over grpc")) == 1
    with supervisor.client() as http:
        via_http = http.get(f"/v1/triggers/{request.trigger_id}").json()
    assert via_http["result"] == outcome.result and via_http["runtime_id"] == outcome.runtime_id


# ---- section 9.2: the fallback chain -------------------------------------------------------------------


def _offline(supervisor: Supervisor, runtime_id: str) -> None:
    with supervisor.client() as http:
        http.post(f"/v1/runtimes/{runtime_id}/deregister", json={"reason": "test: agent gone"})


def test_offline_runtime_falls_back_to_resume_with_the_session_and_prompt_as_arguments(
    supervisor: Supervisor,
) -> None:
    agent = _agent("resume")
    runtime = _live(supervisor, agent, session_id="sess-42")
    _offline(supervisor, runtime["runtime_id"])
    before = len(supervisor.launches())
    outcome = supervisor.trigger(agent, "pick up where you left off; it's $HOME")
    assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "resume", outcome
    assert outcome["fallback_used"] == "resume" and outcome["error_code"] == "RUNTIME_OFFLINE"
    assert outcome["fallback_chain"] == ["resume"]
    launches = supervisor.launches()[before:]
    assert [entry["argv"] for entry in launches] == [
        ["exec", "resume", "sess-42", "pick up where you left off; it's $HOME"]
    ]


def test_resume_failing_twice_leads_to_spawn(supervisor: Supervisor) -> None:
    agent = _agent("respawn")
    runtime = _live(supervisor, agent, session_id="sess-7")
    _offline(supervisor, runtime["runtime_id"])
    exit_file = supervisor.folder / "resume_exit"
    exit_file.write_text("3")
    before = len(supervisor.launches())
    try:
        outcome = supervisor.trigger(agent, "start afresh")
    finally:
        exit_file.unlink()
    assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "spawn", outcome
    assert outcome["fallback_chain"] == ["resume:failed", "resume:failed", "spawn"]
    kinds = [(entry["kind"], entry["argv"]) for entry in supervisor.launches()[before:]]
    assert kinds == [("resume", ["exec", "resume", "sess-7", "start afresh"])] * 2 + [
        ("spawn", ["start afresh"])
    ]
    assert outcome["runtime_id"] != runtime["runtime_id"]
    with supervisor.client() as http:
        new = http.get(f"/v1/runtimes/{outcome['runtime_id']}").json()
    assert new["agent_id"] == agent and new["status"] != "offline"
    _eventually(
        lambda: len(_submits_for(supervisor, "start afresh")) == 1, 5, "the spawned agent's first prompt"
    )


def _wait_offline(supervisor: Supervisor, runtime_id: str) -> None:
    with supervisor.client() as http:
        _eventually(lambda: http.get(f"/v1/runtimes/{runtime_id}").json()["status"] == "offline", 5,
                    "the reconcile to see the crash")  # fmt: skip


def test_a_crash_loop_spawns_directly_without_resume(supervisor: Supervisor) -> None:
    agent = _agent("crashy")
    for _ in range(3):
        crashed = supervisor.spawn(
            agent, session_id="sess-c", command=[sys.executable, "-c", "import time; time.sleep(0.2)"]
        )
        _wait_offline(supervisor, crashed["runtime"]["runtime_id"])
    before = len(supervisor.launches())
    outcome = supervisor.trigger(agent, "fresh start after crashes")
    assert outcome["result"] == "delivered" and outcome["delivery_backend"] == "spawn", outcome
    assert outcome["fallback_chain"] == ["spawn"]
    assert [entry["kind"] for entry in supervisor.launches()[before:]] == ["spawn"]


def test_no_ack_within_the_timeout_retries_twice_then_resumes_and_reports_timeout(
    supervisor: Supervisor,
) -> None:
    agent = _agent("frozen")
    frozen = ["env", "FAKE_CODEX_FROZEN=1", sys.executable, str(FAKE_CODEX)]
    _live(supervisor, agent, session_id="sess-f", command=frozen)
    before = len(supervisor.launches())
    outcome = supervisor.trigger(agent, "are you there", ack_timeout_ms=300)
    assert outcome["result"] == "timeout" and outcome["error_code"] == "ACK_TIMEOUT", outcome
    assert outcome["attempts"] == 3 and outcome["delivery_backend"] == "resume"
    assert outcome["fallback_chain"] == ["tmux:ack_timeout"] * 3 + ["resume"]
    assert [entry["argv"][:3] for entry in supervisor.launches()[before:]] == [["exec", "resume", "sess-f"]]
    assert (
        "trigger_timeout_total 1.0" in supervisor.metrics() or "trigger_timeout_total" in supervisor.metrics()
    )


def test_an_explicit_ack_over_http_acknowledges_a_silent_delivery(supervisor: Supervisor) -> None:
    agent = _agent("acker")
    frozen = ["env", "FAKE_CODEX_FROZEN=1", sys.executable, str(FAKE_CODEX)]
    runtime = _live(supervisor, agent, session_id="sess-a", command=frozen)
    result: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: result.update(supervisor.trigger(agent, "ack me", ack_timeout_ms=5000))
    )
    worker.start()
    time.sleep(0.6)
    with supervisor.client() as http:
        ack = http.post("/v1/acks", json={"runtime_id": runtime["runtime_id"]}).json()
    worker.join(10)
    assert ack["accepted"] is True
    assert result["result"] == "delivered" and result["acked_by"] == "ack", result


def test_an_ack_on_nats_acknowledges_a_silent_delivery_and_the_outcome_is_published(
    supervisor: Supervisor,
) -> None:
    agent = _agent("natsack")
    frozen = ["env", "FAKE_CODEX_FROZEN=1", sys.executable, str(FAKE_CODEX)]
    runtime = _live(supervisor, agent, session_id="sess-n", command=frozen)
    outcomes: list[pb.TriggerOutcome] = []

    async def scenario() -> dict[str, Any]:
        bus = Bus("test")
        await bus.connect(supervisor.nats)

        async def on_outcome(_subject: str, message: pb.TriggerOutcome) -> None:
            outcomes.append(message)

        await bus.subscribe(subjects.SUPERVISOR_OUTCOME, on_outcome)
        await bus.client.flush()
        pending = asyncio.create_task(
            asyncio.to_thread(supervisor.trigger, agent, "ack me on the bus", ack_timeout_ms=5000)
        )
        await asyncio.sleep(0.6)
        await bus.publish(subjects.SUPERVISOR_ACK, pb.AckTriggerRequest(runtime_id=runtime["runtime_id"]))
        result = await pending
        for _ in range(100):
            if any(o.trigger_id == result["trigger_id"] for o in outcomes):
                break
            await asyncio.sleep(0.02)
        await bus.close()
        return result

    result = asyncio.run(scenario())
    assert result["result"] == "delivered" and result["acked_by"] == "ack", result
    published = [o for o in outcomes if o.trigger_id == result["trigger_id"]]
    assert published and published[0].result == "delivered" and published[0].acked_by == "ack"


# ---- sections 12 and 13.2: collision ---------------------------------------------------------------------


def test_a_person_typing_defers_the_trigger_until_the_quiet_window_passes(supervisor: Supervisor) -> None:
    agent = _agent("collide")
    runtime = _live(supervisor, agent, workspace="wsc", role="quiet")
    person = AttachedClient(supervisor.socket, "agents_wsc", window="quiet")
    try:
        time.sleep(0.3)
        person.type("hmm\x03")  # typing, then clearing the draft: recent activity, no draft
        outcome = supervisor.trigger(agent, "deliver after the quiet window", workspace="wsc")
        assert outcome["result"] == "deferred" and outcome["error_code"] == "OPERATOR_BUSY", outcome
        assert outcome["deferred_until"]
        with supervisor.client() as http:
            assert http.get(f"/v1/runtimes/{runtime['runtime_id']}").json()["operator_busy"] is True
        _eventually(lambda: supervisor.get_trigger(outcome["trigger_id"])["result"] == "delivered", 8,
                    "delivery after the quiet window")  # fmt: skip
    finally:
        person.close()
    assert len(_submits_for(supervisor, "deliver after the quiet window")) == 1
    with supervisor.client() as http:
        assert http.get(f"/v1/runtimes/{runtime['runtime_id']}").json()["operator_busy"] is False


def test_a_draft_left_past_the_max_defer_falls_back_to_resume_with_a_collision_event(
    supervisor: Supervisor,
) -> None:
    agent = _agent("draft")
    _live(supervisor, agent, workspace="wsd", role="drafty", session_id="sess-d")
    person = AttachedClient(supervisor.socket, "agents_wsd", window="drafty")
    try:
        time.sleep(0.3)
        person.type("half a sentence")
        before = len(supervisor.launches())
        outcome = supervisor.trigger(agent, "never typed over a person", workspace="wsd")
        assert outcome["result"] == "deferred", outcome
        _eventually(lambda: supervisor.get_trigger(outcome["trigger_id"])["result"] != "deferred", 10,
                    "the max defer window")  # fmt: skip
    finally:
        person.close()
    final = supervisor.get_trigger(outcome["trigger_id"])
    assert final["result"] == "delivered" and final["delivery_backend"] == "resume", final
    assert final["error_code"] == "COLLISION_MAX_DEFER"
    assert [e["argv"][:3] for e in supervisor.launches()[before:]] == [["exec", "resume", "sess-d"]]
    assert _submits_for(supervisor, "never typed over a person") == []
    assert "kronii_supervisor_collisions_total 1.0" in supervisor.metrics()


def test_force_override_passes_a_person_typing_but_never_their_draft(supervisor: Supervisor) -> None:
    agent = _agent("forcedraft")
    _live(supervisor, agent, workspace="wsg", role="forced")
    person = AttachedClient(supervisor.socket, "agents_wsg", window="forced")
    try:
        time.sleep(0.3)
        person.type("my own half line")
        time.sleep(0.2)
        outcome = supervisor.trigger(agent, "operator says go", workspace="wsg", force_override=True,
                                     reason="human_override: release blocker")  # fmt: skip
        assert outcome["result"] == "deferred" and outcome["error_code"] == "OPERATOR_BUSY", outcome
        assert "unsent text" in outcome["detail"]
        time.sleep(0.5)
        assert _submits_for(supervisor, "operator says go") == []
        person.type("\r")
        _eventually(
            lambda: len(_submits_for(supervisor, "my own half line")) == 1, 5, "the person's own submit"
        )
    finally:
        person.close()
    assert all("operator says go" not in entry["prompt"] for entry in supervisor.codex.submits())


def test_force_override_types_over_a_person_typing_and_writes_the_audit_fields(
    supervisor: Supervisor,
) -> None:
    agent = _agent("force")
    _live(supervisor, agent, workspace="wsf", role="forced")
    person = AttachedClient(supervisor.socket, "agents_wsf", window="forced")
    try:
        time.sleep(0.3)
        person.type("draft\r")  # the person sent their own line just now: their keys are recent
        time.sleep(0.2)
        outcome = supervisor.trigger(agent, "operator says go", workspace="wsf", force_override=True,
                                     reason="human_override: release blocker")  # fmt: skip
    finally:
        person.close()
    assert outcome["result"] == "delivered", outcome
    details = _attempt_details(supervisor, outcome["trigger_id"])
    admit = next(row for row in details if row["step"] == "admit")
    assert {k: admit[k] for k in ("force_override_requested", "force_override_applied", "override_intent",
                                  "override_reason_prefix", "collision_gate")} == {
        "force_override_requested": True, "force_override_applied": True, "override_intent": "human_override",
        "override_reason_prefix": "human_override:", "collision_gate": "bypassed",
    }  # fmt: skip
    _eventually(lambda: _audit_row(supervisor, outcome["trigger_id"]) is not None, 5, "the audit row")
    audit = _audit_row(supervisor, outcome["trigger_id"])
    assert (
        audit is not None
        and audit["force_override_applied"] is True
        and audit["reason"].startswith("human_override:")
    )


def _audit_row(supervisor: Supervisor, trigger_id: str) -> dict[str, Any] | None:
    with psycopg.connect(libpq_url(supervisor.database)) as conn:
        row = conn.execute(
            "SELECT actor, detail FROM audit_log WHERE action = 'supervisor.trigger' AND subject = %s",
            (trigger_id,),
        ).fetchone()
    return None if row is None else {"actor": row[0], **row[1]}


# ---- section 14: guardrails -------------------------------------------------------------------------------


def test_the_eleventh_attempt_in_a_minute_on_a_thread_is_deferred_trigger_rate_limited(
    supervisor: Supervisor,
) -> None:
    agent = _agent("rate")
    _live(supervisor, agent, kind="python", command=[sys.executable, "-i", "-q"])
    results = [supervisor.trigger(agent, f"x_{i} = {i}", thread="th-rate")["result"] for i in range(10)]
    assert results == ["delivered"] * 10
    limited = supervisor.trigger(agent, "x_10 = 10", thread="th-rate")
    assert limited["result"] == "deferred" and limited["error_code"] == "TRIGGER_RATE_LIMITED"
    other_thread = supervisor.trigger(agent, "y = 1", thread="th-other")
    assert other_thread["result"] == "delivered"


def test_the_same_prompt_again_without_progress_is_suppressed_until_a_heartbeat(
    supervisor: Supervisor,
) -> None:
    agent = _agent("loop")
    runtime = _live(supervisor, agent)
    assert supervisor.trigger(agent, "same again", thread="th-loop")["result"] == "delivered"
    looped = supervisor.trigger(agent, "same again", thread="th-loop")
    assert looped["result"] == "failed" and looped["error_code"] == "TRIGGER_LOOP_SUPPRESSED"
    with supervisor.client() as http:
        beat = http.post(f"/v1/runtimes/{runtime['runtime_id']}/heartbeat", json={"status": "active"})
    assert beat.status_code == 200 and beat.json()["status"] == "active"
    assert supervisor.trigger(agent, "same again", thread="th-loop")["result"] == "delivered"


def test_the_same_unresolved_finding_three_times_auto_blocks_the_thread(supervisor: Supervisor) -> None:
    agent = _agent("finding")
    _live(supervisor, agent)
    first = [
        supervisor.trigger(agent, f"fix F-1, try {i}", thread="th-f", finding_key="F-1")["result"]
        for i in range(2)
    ]
    assert first == ["delivered", "delivered"]
    blocked = supervisor.trigger(agent, "fix F-1, try 3", thread="th-f", finding_key="F-1")
    assert blocked["result"] == "failed" and blocked["error_code"] == "THREAD_AUTO_BLOCKED"
    later = supervisor.trigger(agent, "something else", thread="th-f")
    assert later["error_code"] == "THREAD_AUTO_BLOCKED", "a blocked thread stays blocked"
    with supervisor.client() as http:
        cleared = http.post(
            "/v1/threads/unblock", json={"agent_id": agent, "thread_id": "th-f", "reason": "fixed"}
        )
    assert cleared.json()["was_blocked"] is True
    assert supervisor.trigger(agent, "back to work", thread="th-f")["result"] == "delivered"


def test_a_paused_runtime_defers_and_a_deferred_trigger_can_be_force_injected(supervisor: Supervisor) -> None:
    agent = _agent("paused")
    runtime = _live(supervisor, agent)
    with supervisor.client() as http:
        assert http.post(f"/v1/runtimes/{runtime['runtime_id']}/pause", json={"reason": "lunch"}).json()[
            "paused"
        ]
    outcome = supervisor.trigger(agent, "wait for me")
    assert outcome["result"] == "deferred" and outcome["error_code"] == "RUNTIME_PAUSED"
    with supervisor.client() as http:
        refused = http.post(f"/v1/triggers/{outcome['trigger_id']}/force", json={"reason": "please"})
        assert refused.status_code == 400
        forced = http.post(
            f"/v1/triggers/{outcome['trigger_id']}/force", json={"reason": "coordinator_override: now"}
        )
    assert forced.status_code == 200 and forced.json()["result"] == "delivered", forced.text
    assert len(_submits_for(supervisor, "wait for me")) == 1


# ---- the registry -------------------------------------------------------------------------------------------


def test_reconcile_marks_a_runtime_whose_process_died_offline(supervisor: Supervisor) -> None:
    agent = _agent("dies")
    runtime = _live(supervisor, agent)
    os.kill(runtime["pid"], signal.SIGKILL)
    with supervisor.client() as http:
        _eventually(lambda: http.get(f"/v1/runtimes/{runtime['runtime_id']}").json()["status"] == "offline", 5,
                    "the reconcile")  # fmt: skip
        body = http.get(f"/v1/runtimes/{runtime['runtime_id']}").json()
        listed = http.get("/v1/runtimes", params={"agent_id": agent}).json()["runtimes"]
    assert "gone" in body["offline_reason"]
    assert listed == [], "offline runtimes are listed only on request"


def test_register_an_existing_pane_and_heartbeat_it(supervisor: Supervisor) -> None:
    agent = _agent("reg")
    spawned = _live(supervisor, agent)
    with supervisor.client() as http:
        registered = http.post("/v1/runtimes", json={"agent_id": f"{agent}-2", "workspace_id": "ws1",
                                                      "session_id": "s", "pty_backend": "tmux",
                                                      "pty_target": spawned["pty_target"], "kind": "codex"})  # fmt: skip
        assert registered.status_code == 201, registered.text
        body = registered.json()
        assert body["status"] == "idle" and body["runtime"]["pid"] == spawned["pid"]
        beat = http.post(f"/v1/runtimes/{body['runtime_id']}/heartbeat", json={"status": "busy"})
        assert beat.status_code == 400 and "active" in beat.json()["detail"]
        bad = http.post("/v1/runtimes", json={"agent_id": "a", "workspace_id": "ws1", "pty_backend": "conpty",
                                               "pty_target": "x"})  # fmt: skip
        assert bad.status_code == 400 and "conpty" in bad.json()["detail"]


def test_metrics_carry_the_seeds_names_and_move(supervisor: Supervisor) -> None:
    text = supervisor.metrics()
    for name in ("trigger_requests_total", "trigger_delivered_total", "trigger_timeout_total",
                 "trigger_fallback_resume_total", "trigger_latency_ms_bucket"):  # fmt: skip
        assert name in text, name
    requests = _sample(text, "trigger_requests_total")
    agent = _agent("metrics")
    _live(supervisor, agent)
    supervisor.trigger(agent, "count me")
    after = supervisor.metrics()
    assert _sample(after, "trigger_requests_total") == requests + 1
    assert _sample(after, 'trigger_delivered_total{backend="tmux"}') >= 1
    assert _sample(after, "trigger_latency_ms_count") >= 1


def _sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0
