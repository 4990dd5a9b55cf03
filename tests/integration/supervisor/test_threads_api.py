"""Threads through a running supervisor on real PostgreSQL: HTTP, gRPC and `kronii thread`.
Posts are numbered in order under concurrency, stored redacted, durable before the answer; a
repeated dedupe key answers the first; cursors move forward only; bad input is a 4xx with the
reason (a CLI exit code with a sentence), never a 5xx."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

from tests.integration.supervisor.conftest import SECRET, Supervisor, token

KRONII = Path(sys.executable).parent / "kronii"


def person() -> str:
    return token("cli:tester")


def runtime_token(runtime_id: str, workspace: str) -> str:
    """A runtime's own token, as the supervisor gives the panes it starts."""
    return token(f"runtime:{runtime_id}", (workspace,), (f"runtime:{runtime_id}",))


def post(sup: Supervisor, body: dict[str, Any], token: str | None = None) -> tuple[int, dict[str, Any]]:
    with sup.client(token or person()) as http:
        response = http.post("/v1/threads/messages", json=body)
    return response.status_code, response.json()


def read(sup: Supervisor, body: dict[str, Any], token: str | None = None) -> tuple[int, dict[str, Any]]:
    with sup.client(token or person()) as http:
        response = http.post("/v1/threads/read", json=body)
    return response.status_code, response.json()


def kronii(sup: Supervisor, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(KRONII_SUPERVISOR_URL=sup.url, KRONII_SUPERVISOR_TOKEN_SECRET=SECRET)
    if token:
        env["KRONII_RUNTIME_TOKEN"] = token
    return subprocess.run([str(KRONII), "thread", *args], env=env, capture_output=True, text=True, timeout=60)


def ws() -> str:
    return f"th{uuid.uuid4().hex[:8]}"


def test_concurrent_posts_are_numbered_in_order_with_no_gap_and_no_repeat(supervisor: Supervisor) -> None:
    workspace = ws()
    body = {"workspace_id": workspace, "thread_id": "busy", "to": ["reviewer"]}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda n: post(supervisor, {**body, "body": f"m{n}"}), range(24)))
    assert {status for status, _ in answers} == {201}
    assert sorted(int(a["message"]["seq"]) for _, a in answers) == list(range(1, 25))
    _, thread = read(supervisor, {"workspace_id": workspace, "thread_id": "busy", "all": True, "peek": True})
    assert int(thread["thread"]["last_seq"]) == 24 and len(thread["messages"]) == 24


def test_a_repeated_dedupe_key_answers_the_first_message_and_posts_nothing(supervisor: Supervisor) -> None:
    workspace = ws()
    body = {"workspace_id": workspace, "thread_id": "t", "body": "once", "dedupe_key": "k-1"}
    first_status, first = post(supervisor, body)
    again_status, again = post(supervisor, {**body, "body": "twice"})
    assert (first_status, again_status) == (201, 200)
    assert again["duplicate"] is True and again["message"]["body"] == "once"
    assert again["message"]["seq"] == first["message"]["seq"] == "1"


def test_a_message_is_stored_redacted(supervisor: Supervisor) -> None:
    workspace = ws()
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    status, answer = post(supervisor, {"workspace_id": workspace, "thread_id": "t",
                                       "body": f"the build failed: token {secret} was refused"})  # fmt: skip
    assert status == 201 and secret not in answer["message"]["body"]
    with psycopg.connect(libpq_url(supervisor.database)) as conn:
        rows = conn.execute(
            "SELECT body FROM supervisor_thread_messages WHERE workspace_id = %s", (workspace,)
        ).fetchall()
    assert rows and all(secret not in body for (body,) in rows)
    assert "the build failed" in rows[0][0]


def test_reading_moves_the_readers_cursor_forward_only_and_peek_leaves_it(supervisor: Supervisor) -> None:
    workspace = ws()
    for n in range(3):
        post(supervisor, {"workspace_id": workspace, "thread_id": "t", "body": f"m{n}", "to": ["person"]})
    _, peeked = read(supervisor, {"workspace_id": workspace, "thread_id": "t", "peek": True})
    _, first = read(supervisor, {"workspace_id": workspace, "thread_id": "t", "limit": 2})
    _, second = read(supervisor, {"workspace_id": workspace, "thread_id": "t"})
    _, older = read(supervisor, {"workspace_id": workspace, "thread_id": "t", "after": 1})
    _, last = read(supervisor, {"workspace_id": workspace, "thread_id": "t"})
    assert [m["body"] for m in peeked["messages"]] == ["m0", "m1", "m2"]
    assert (first["cursor"], second["cursor"]) == ("2", "3")
    assert [m["body"] for m in second["messages"]] == ["m2"]
    assert older["cursor"] == "3" and last["messages"] == []


def test_bad_input_is_a_4xx_with_the_reason(supervisor: Supervisor) -> None:
    workspace = ws()
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"workspace_id": workspace, "thread_id": "t", "body": "x", "kind": "gossip"}, 400, "kind 'gossip'"),
        ({"workspace_id": workspace, "thread_id": "t", "body": "x", "kind": "outcome"}, 400, "kronii's own"),
        ({"workspace_id": workspace, "thread_id": "t", "body": "   "}, 400, "empty"),
        ({"workspace_id": workspace, "thread_id": "t", "body": "x" * 16_001}, 400, "at most 16000"),
        ({"workspace_id": workspace, "thread_id": "a b", "body": "x"}, 400, "thread_id"),
        (
            {"workspace_id": workspace, "thread_id": "t", "body": "x", "to": ["no one!"]},
            400,
            "to is required",
        ),
    ]
    for body, status, reason in cases:
        got, answer = post(supervisor, body)
        assert got == status and reason in str(answer.get("detail")), (body, answer)
    got, answer = read(supervisor, {"workspace_id": workspace, "thread_id": "never"})
    assert got == 404 and "no thread 'never'" in answer["detail"]
    got, answer = read(supervisor, {"workspace_id": workspace, "thread_id": "t", "wait_ms": 500_000})
    assert got == 400 and "wait must be" in answer["detail"]


def test_an_agents_own_token_posts_as_its_agent_and_only_in_its_workspace(supervisor: Supervisor) -> None:
    workspace = ws()
    runtime = supervisor.spawn("poster", kind="generic", workspace=workspace,
                               command=[sys.executable, "-q", "-i"])["runtime"]  # fmt: skip
    token = runtime_token(runtime["runtime_id"], workspace)
    status, answer = post(supervisor, {"workspace_id": workspace, "thread_id": "t", "body": "hi"}, token)
    assert status == 201 and answer["message"]["author"] == "poster"
    status, answer = post(supervisor, {"workspace_id": "elsewhere", "thread_id": "t", "body": "hi"}, token)
    assert status == 403 and "not 'elsewhere'" in answer["detail"]
    with supervisor.client(token) as http:
        listed = http.get("/v1/threads").json()["threads"]
        elsewhere = http.get("/v1/threads", params={"workspace_id": "elsewhere"})
    assert [t["workspace_id"] for t in listed] == [workspace] and elsewhere.status_code == 403


def test_grpc_posts_and_reads_with_the_same_semantics(supervisor: Supervisor) -> None:
    workspace = ws()
    metadata = (("authorization", f"Bearer {person()}"),)
    with grpc.insecure_channel(f"127.0.0.1:{supervisor.grpc_port}") as channel:
        stub = pb_grpc.SupervisorServiceStub(channel)
        posted = stub.PostMessage(pb.PostMessageRequest(workspace_id=workspace, thread_id="g", body="over grpc",
                                                        to=["person"]), metadata=metadata)  # fmt: skip
        got = stub.ReadThread(pb.ReadThreadRequest(workspace_id=workspace, thread_id="g"), metadata=metadata)
        with pytest.raises(grpc.RpcError) as missing:
            stub.ReadThread(pb.ReadThreadRequest(workspace_id=workspace, thread_id="none"), metadata=metadata)
        assert missing.value.code() is grpc.StatusCode.NOT_FOUND
    assert posted.message.seq == 1 and [m.body for m in got.messages] == ["over grpc"]


def test_the_cli_posts_reads_waits_lists_and_unblocks_with_its_exit_codes(supervisor: Supervisor) -> None:
    workspace = ws()
    done = kronii(supervisor, "post", "cli-t", "please review", "--workspace", workspace, "--to", "person",
                  "--kind", "result")  # fmt: skip
    assert done.returncode == 0 and "posted #1 to cli-t" in done.stdout, done.stderr
    done = kronii(supervisor, "read", "cli-t", "--workspace", workspace)
    assert (
        done.returncode == 0
        and "#1 person -> person [result]" in done.stdout
        and "please review" in done.stdout
    )
    done = kronii(supervisor, "read", "cli-t", "--workspace", workspace)
    assert done.returncode == 0 and "nothing new on cli-t" in done.stdout
    done = kronii(supervisor, "wait", "cli-t", "--workspace", workspace, "--timeout", "0.5")
    assert done.returncode == 1 and "nothing addressed to you on cli-t" in done.stderr
    done = kronii(supervisor, "read", "nope", "--workspace", workspace)
    assert done.returncode == 3 and "no thread 'nope'" in done.stderr
    done = kronii(supervisor, "list", "--workspace", workspace)
    assert done.returncode == 0 and "cli-t" in done.stdout and "open" in done.stdout
    done = kronii(supervisor, "unblock", "cli-t", "--workspace", workspace)
    assert done.returncode == 0 and "cli-t was not blocked" in done.stdout


def test_wait_returns_when_a_message_for_the_reader_arrives(supervisor: Supervisor) -> None:
    workspace = ws()
    runtime = supervisor.spawn("waiter", kind="generic", workspace=workspace,
                               command=[sys.executable, "-q", "-i"])["runtime"]  # fmt: skip
    token = runtime_token(runtime["runtime_id"], workspace)
    post(supervisor, {"workspace_id": workspace, "thread_id": "w", "body": "start", "to": ["waiter"]})
    kronii(supervisor, "read", "w", "--workspace", workspace, token=token)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(kronii, supervisor, "wait", "w", "--workspace", workspace, "--timeout", "30",
                              token=token)  # fmt: skip
        time.sleep(0.5)
        # The person's own word to someone else does not end the agent's wait.
        post(supervisor, {"workspace_id": workspace, "thread_id": "w", "body": "aside", "to": ["other"]})
        started = time.monotonic()
        post(supervisor, {"workspace_id": workspace, "thread_id": "w", "body": "your turn", "to": ["waiter"]})
        done = waiting.result(30)
    assert done.returncode == 0 and "your turn" in done.stdout and "person -> waiter [message]" in done.stdout
    assert time.monotonic() - started < 10
