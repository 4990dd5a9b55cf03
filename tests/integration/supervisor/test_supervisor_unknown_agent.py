"""A trigger for an agent that was never registered is refused as not found, with a sentence, over
HTTP (404), gRPC (NOT_FOUND) and the command line (exit 3), before anything is queued: no outcome is
stored under its trigger_id and no record is written. (Issue 26: `--agent nosuch` answered `failed
(RUNTIME_OFFLINE) the agent's process or pane is gone`, exit 1.)"""

from __future__ import annotations

import uuid

import grpc
import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

from tests.integration.supervisor.conftest import Supervisor, token
from tests.integration.supervisor.test_supervisor_cli import kronii


def _stored_rows(supervisor: Supervisor, trigger_id: str) -> int:
    with psycopg.connect(libpq_url(supervisor.database)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM supervisor_triggers WHERE trigger_id = %s", (trigger_id,)
        ).fetchone()
    return int(row[0]) if row else 0


def test_a_trigger_for_an_unknown_agent_is_not_found_and_nothing_is_queued(supervisor: Supervisor) -> None:
    trigger_id = f"t-{uuid.uuid4().hex[:10]}"
    body = {"trigger_id": trigger_id, "agent_id": "nosuch", "workspace_id": "ws1", "prompt": "hello"}
    with supervisor.client() as http:
        refused = http.post("/v1/triggers", json=body)
        assert refused.status_code == 404, refused.text
        assert refused.json()["detail"].startswith("no such agent: nosuch"), refused.json()
        # Nothing was queued or stored under the trigger_id: it is unknown, and a retry is refused again.
        assert http.get(f"/v1/triggers/{trigger_id}").status_code == 404
        assert http.post("/v1/triggers", json=body).status_code == 404
    assert _stored_rows(supervisor, trigger_id) == 0
    assert "kronii_supervisor_queue_depth 0.0" in supervisor.metrics()

    with grpc.insecure_channel(f"127.0.0.1:{supervisor.grpc_port}") as channel:
        stub = pb_grpc.SupervisorServiceStub(channel)
        request = pb.TriggerRuntimeRequest(
            trigger_id=trigger_id, agent_id="nosuch", workspace_id="ws1", prompt="x"
        )
        with pytest.raises(grpc.RpcError) as missing:
            stub.TriggerRuntime(request, metadata=(("authorization", f"Bearer {token()}"),), timeout=10)
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND
    assert "no such agent: nosuch" in (missing.value.details() or "")

    done = kronii(supervisor, "agents", "trigger", "--workspace", "ws1", "--agent", "nosuch", "hello")
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert "no such agent: nosuch" in done.stderr and done.stdout == ""
