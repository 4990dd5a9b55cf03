"""A title storm stays a bounded number of runs with no model call, and a secret planted in a
window title never reaches a model, a notification, a log line or a NATS payload."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis
from kronii.activity.v1 import activity_pb2 as apb
from kronii.launcher.infra import free_port
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.stores import subjects
from kronii.stores.bus import Bus
from nats.aio.msg import Msg

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import (
    SseReader,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.mesh import wait_until

AWS_KEY = "AKIAZ3M7QX2LWPV4RT6N"
GITHUB_TOKEN = "ghp_Zx8Kq2Lm4Np6Rs8Tv0Wy2Ab4Cd6Ef8Gh0Ij2K"


# The slow suite's (14 s): tests/unit/pipeline/test_pipeline_intake.py's storm test proves the same
# 1,000 changes in 10 s yield one deferred batch and no model call, in process.
@pytest.mark.slow
def test_a_storm_of_1000_title_changes_in_10s_makes_at_most_one_run_and_no_model_call(
    infra: InfraUrls, tmp_path: Path
) -> None:
    """Bound: 1 run. The title-churn filter lets the first 3 changes of the window through (all
    within 30 ms, so one coalesced batch) and drops the other 997 while the storm lasts; that batch
    is released marked high-frequency, the Router answers Defer (seed: "TitleChanged
    high-frequency: Router may Defer"), and Deferred only resumes on LockEnd or a Tick after the
    60 s backoff, which the 10 s storm never reaches. A Defer route calls no model."""
    database = pipeline_database(infra, "storm")
    with start_pipeline(pipeline_env(infra, database, tmp_path)) as pipeline:

        async def storm() -> None:
            bus = Bus("test-storm")
            await bus.connect(infra.nats)
            started = time.monotonic()
            for i in range(1000):
                focus = apb.Focus(app_name="code", wm_class="Code", window_id=77, title=f"build {i}% - Code")
                await bus.publish(subjects.TITLE_CHANGED, apb.TitleChanged(focus=focus))
                await asyncio.sleep(max(0.0, started + (i + 1) * 0.01 - time.monotonic()))
            await bus.client.flush()
            await bus.close()

        asyncio.run(storm())
        wait_until(lambda: pipeline.get("/v1/state")["pending_batches"] == 0, 10, "intake to drain")
        time.sleep(2.0)
        state = pipeline.get("/v1/state")
        runs = pipeline.runs()
        assert 1 <= len(runs) <= 1, runs
        assert runs[0]["decision"] == "deferred:title_churn"
        assert [v["state"] for v in runs[0]["states"]] == ["idle", "collecting", "routing", "deferred"]
        assert sum(len(run["model_calls"]) for run in runs) == 0
        assert state["dropped_title_churn"] >= 990


class _RecordingModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers each role with a valid canned reply and
    keeps every request body."""

    bodies: list[str] = []
    REPLIES = {
        "You extract": {
            "fragments": [{"kind": "file", "value": "deploy.py", "confidence": 0.9, "source": "window"}]
        },
        "You merge": {
            "candidates": [
                {
                    "action": "related_tasks",
                    "title": "Tasks about deploy.py",
                    "rationale": "it is open",
                    "confidence": 0.9,
                }
            ],
            "conflicts": [],
            "cost_label": "low",
        },
        "You decide": {
            "notify": True,
            "next_wakeup_ms": 0,
            "min_cooldown_ms": 500,
            "trigger_filters": [],
            "reason": "new file",
        },
        "You write": {
            "notification": {
                "title": "Tasks about deploy.py",
                "body": "deploy.py is open",
                "source_summary": "window title",
                "actions": [{"kind": "snooze", "label": "Snooze"}, {"kind": "disable", "label": "Disable"}],
            }
        },
    }

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        type(self).bodies.append(body)
        system = json.loads(body)["messages"][0]["content"]
        reply = next(value for prefix, value in self.REPLIES.items() if system.startswith(prefix))
        answer = {
            "choices": [
                {"message": {"role": "assistant", "content": json.dumps(reply)}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def model_server() -> Iterator[str]:
    _RecordingModel.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _RecordingModel)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_a_secret_in_a_window_title_never_leaves_redacted(
    infra: InfraUrls, tmp_path: Path, model_server: str
) -> None:
    database = pipeline_database(infra, "secrets")
    env = pipeline_env(
        infra,
        database,
        tmp_path,
        KRONII_PIPELINE_LLM_BACKEND="openai",
        KRONII_PIPELINE_LLM_BASE_URL=model_server,
        KRONII_PIPELINE_LLM_MODEL="recorder",
        KRONII_PIPELINE_LLM_RESPONSE_FORMAT="json_object",
    )
    nats_payloads: list[bytes] = []
    client = redis.Redis.from_url(infra.redis)
    with start_pipeline(env) as pipeline:
        sse = SseReader(pipeline.url).start()

        async def run() -> None:
            bus = Bus("test-leak")
            await bus.connect(infra.nats)

            async def everything(msg: Msg) -> None:
                nats_payloads.append(msg.subject.encode() + b" " + msg.data)

            await bus.client.subscribe(">", cb=everything)
            # Through the HTTP door, and in the sensor's snapshot in Redis (as an unredacting sensor would).
            response = pipeline.trigger(
                kind="focus_changed",
                source="test",
                app_id="code",
                high_priority=True,
                attributes={
                    "wm_class": "Code",
                    "title": f"deploy.py - {AWS_KEY} - kronii - Visual Studio Code",
                },
            )
            assert response.status_code == 202
            for _ in range(100):
                if any(r["decision"] == "notify" for r in pipeline.finished_runs()):
                    break
                await asyncio.sleep(0.1)
            focus = apb.Focus(
                app_name="code",
                wm_class="Code",
                window_id=9,
                title=f"{GITHUB_TOKEN} - kronii - Visual Studio Code",
            )
            client.set(SENSOR_SNAPSHOT_KEY, apb.Snapshot(focus=focus).SerializeToString())
            await asyncio.sleep(1.0)  # past the first run's cooldown
            tick = pipeline.trigger(kind="manual", source="test", high_priority=True)
            assert tick.status_code == 202
            for _ in range(100):
                if len(pipeline.finished_runs()) >= 2:
                    break
                await asyncio.sleep(0.1)
            await bus.client.flush()
            await asyncio.sleep(0.5)
            await bus.close()

        try:
            asyncio.run(run())
        finally:
            client.delete(SENSOR_SNAPSHOT_KEY)
        runs = pipeline.finished_runs()
        wait_until(lambda: bool(sse.events), 10, "a notification on the SSE stream")
        api = json.dumps([pipeline.get(f"/v1/runs/{r['run_id']}") for r in runs])
        notifications = json.dumps(pipeline.get("/v1/controls")) + json.dumps(sse.events)
    logs = pipeline.proc.output

    assert len(runs) >= 2 and any(r["decision"] == "notify" for r in runs), runs
    assert {r["redaction_level"] for r in runs} == {"amber"}
    assert _RecordingModel.bodies, "the model was never called: the test would prove nothing"
    assert any("AWS_ACCESS_KEY_ID" in body for body in _RecordingModel.bodies)
    assert any("GITHUB_TOKEN" in body for body in _RecordingModel.bodies)
    assert any(b"kronii.notify." in payload for payload in nats_payloads)
    for secret in (AWS_KEY, GITHUB_TOKEN, GITHUB_TOKEN[4:]):
        assert not any(secret in body for body in _RecordingModel.bodies), "model input"
        assert not any(secret.encode() in payload for payload in nats_payloads), "NATS"
        assert secret not in logs, "service output"
        assert secret not in "\n".join(sse.raw) and secret not in notifications, "notifications"
        assert secret not in api, "runs API"
