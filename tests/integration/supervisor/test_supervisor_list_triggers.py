"""GET /v1/triggers (issue 33: the console's Agents page): the recent triggers with their true
outcomes, read from the supervisor's rows in PostgreSQL, the deferred queue as `result=deferred`, and
only the workspaces the caller's token allows. A real supervisor process and a `python3 -i` agent in
a real tmux pane: the REPL busy with one line defers the next trigger (AGENT_BUSY)."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import grpc
import pytest
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

from tests.integration.supervisor.conftest import Supervisor, eventually, token, wait_ready_pane


def _listed(supervisor: Supervisor, bearer: str | None = None, **params: Any) -> list[dict[str, Any]]:
    with supervisor.client(bearer) as http:
        response = http.get("/v1/triggers", params=params)
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json().get("triggers", [])
    return listed


def test_the_recent_triggers_list_their_true_outcomes_and_the_deferred_queue(supervisor: Supervisor) -> None:
    agent = f"lister-{uuid.uuid4().hex[:6]}"
    runtime = supervisor.spawn(agent, kind="python", command=[sys.executable, "-i", "-q"])["runtime"]
    wait_ready_pane(supervisor, runtime["runtime_id"], ">>>")

    first = supervisor.trigger(agent, "import time; time.sleep(4)")
    assert first["result"] == "delivered", first
    waiting = supervisor.trigger(agent, 'print("after")')
    assert waiting["result"] == "deferred" and waiting["error_code"] == "AGENT_BUSY", waiting

    queue = _listed(supervisor, agent_id=agent, result="deferred")
    assert [t["trigger_id"] for t in queue] == [waiting["trigger_id"]]
    assert queue[0]["detail"] and queue[0]["deferred_until"] and queue[0]["updated_at"], queue

    eventually(
        lambda: supervisor.get_trigger(waiting["trigger_id"])["result"] == "delivered", 20, "the delivery"
    )
    recent = eventually(
        lambda: (
            (found := _listed(supervisor, agent_id=agent)) and found[0]["result"] == "delivered" and found
        ),
        10,
        "the delivered row",
    )
    assert [t["trigger_id"] for t in recent] == [waiting["trigger_id"], first["trigger_id"]]
    assert all(t["result"] == "delivered" and t["runtime_id"] == runtime["runtime_id"] for t in recent)
    assert recent[0]["updated_at"] >= recent[1]["updated_at"]
    assert _listed(supervisor, agent_id=agent, result="deferred") == []


def test_a_token_for_another_workspace_lists_none_of_these_triggers(supervisor: Supervisor) -> None:
    agent = f"hidden-{uuid.uuid4().hex[:6]}"
    supervisor.spawn(agent, kind="python", command=[sys.executable, "-i", "-q"])
    supervisor.trigger(agent, "1 + 1")
    assert _listed(supervisor, agent_id=agent), "the trigger was not listed for a token of every workspace"
    assert _listed(supervisor, token(workspaces=("elsewhere",)), agent_id=agent) == []


def test_a_bad_result_or_limit_is_refused_with_a_reason(supervisor: Supervisor) -> None:
    with supervisor.client() as http:
        bad_result = http.get("/v1/triggers", params={"result": "sent"})
        bad_limit = http.get("/v1/triggers", params={"limit": 501})
        no_read = http.get("/v1/triggers", headers={"authorization": f"Bearer {token(scopes=('trigger',))}"})
    assert bad_result.status_code == 400 and "result must be one of" in bad_result.json()["detail"]
    assert 400 <= bad_limit.status_code < 500, bad_limit.text
    assert no_read.status_code == 403 and "'read'" in no_read.json()["detail"]


def test_grpc_lists_the_same_triggers_as_http(supervisor: Supervisor) -> None:
    agent = f"grpc-{uuid.uuid4().hex[:6]}"
    supervisor.spawn(agent, kind="python", command=[sys.executable, "-i", "-q"])
    done = supervisor.trigger(agent, "2 + 2")
    over_http = _listed(supervisor, agent_id=agent)
    with grpc.insecure_channel(f"127.0.0.1:{supervisor.grpc_port}") as channel:
        stub = pb_grpc.SupervisorServiceStub(channel)
        metadata = (("authorization", f"Bearer {token()}"),)
        listed = stub.ListTriggers(pb.ListTriggersRequest(agent_id=agent), metadata=metadata, timeout=10)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ListTriggers(pb.ListTriggersRequest(result="sent"), metadata=metadata, timeout=10)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert (
        [t.trigger_id for t in listed.triggers]
        == [t["trigger_id"] for t in over_http]
        == [done["trigger_id"]]
    )
    assert listed.triggers[0].result == over_http[0]["result"] and listed.triggers[0].HasField("updated_at")
