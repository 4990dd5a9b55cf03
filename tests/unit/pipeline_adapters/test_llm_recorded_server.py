"""The model backends against a real OpenAI-compatible HTTP server in the test (tests/llm_server.py)
that streams recorded replies, slow and cut-off ones included: a call past its time is cancelled
at the server, each role asks for its own budget, out-of-bounds answers are invalid, the format a
server refused is remembered, and whatever the model does the rules' answer is the floor."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kronii.llm.openai import FormatMemory, OpenAIBackend
from kronii.llm.protocol import ModelUnavailableError
from kronii.pipeline.adapters.model_roles import ModelRoleBackend
from kronii.pipeline.adapters.recording import read_recording
from kronii.pipeline.cli.replay import replay_events
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.roles import rules
from kronii.pipeline.core.roles.bounds import output_budget
from kronii.pipeline.core.roles.rules import RulesBackend
from kronii.pipeline.core.roles.values import PlanHistory, Role, RoleContext
from kronii.pipeline.core.router import Family
from kronii.pipeline.core.states import TriggerKind
from kronii.pipeline.core.window_context import extract_window_context

from tests.llm_server import LlmServer, Reply

ROOT = Path(__file__).resolve().parents[3]
RECORDING = ROOT / "bench" / "data" / "activity_hour.jsonl"
NOW = 1_700_000_000_000
PLANNER_SCHEMA = {
    "type": "object",
    "properties": {"notify": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["notify", "reason"],
}
# Replies as the packaged Gemma 3 270M wrote them through llama-cpp-python's server.
GEMMA_FRAGMENTS = (
    '{"fragments": [{"kind": "file", "value": "main.py", "confidence": 0.9, "source": "window"}]}'
)
GEMMA_NONSENSE_FRAGMENTS = (
    '{"fragments": [{"kind": "application", "value": "application", "confidence": 0, "source": "window"}]}'
)
RAMBLING = '{"notify": true, "reason": "' + "the user is working on the file and " * 200


def ide_context() -> RoleContext:
    budget = budget_context("base", [PluginContent("vscode", "3 open tasks mention main.py", 5)], 1_000)
    window = extract_window_context("code", "main.py - kronii - Visual Studio Code")
    return RoleContext(TriggerKind.FOCUS_CHANGED, budget, NOW, window)


def llm(server: LlmServer, **options: object) -> OpenAIBackend:
    options.setdefault("formats", FormatMemory())
    return OpenAIBackend(server.url, "gemma-3-270m", **options)  # type: ignore[arg-type]


async def test_a_call_past_its_time_is_cancelled_at_the_server_and_the_next_is_not_queued() -> None:
    slow = Reply(RAMBLING, pace_s=0.02, chunk=2)  # about 3,500 chunks: 70 s if nobody stopped it
    async with LlmServer({"*": [slow, Reply('{"notify": false, "reason": "quiet"}')]}) as server:
        backend = llm(server)
        started = time.monotonic()
        with pytest.raises(
            ModelUnavailableError, match=r"did not answer within 0\.5 s \(the call was cancelled\)"
        ):
            await backend.complete_json(
                role="planner", system="s", user="u", schema=PLANNER_SCHEMA, timeout_secs=0.5
            )
        assert time.monotonic() - started < 2
        await asyncio.sleep(0.2)  # the server notices the closed connection at its next chunk
        first = server.served[0]
        assert first.hung_up and not first.finished
        assert first.chunks_sent < first.chunks_total / 10
        reply = await backend.complete_json(role="planner", system="s", user="u", schema=PLANNER_SCHEMA)
        assert reply.data == {"notify": False, "reason": "quiet"}
        assert server.served[1].started >= first.ended  # not queued behind a generation nobody reads
        await backend.aclose()


async def test_the_stream_closes_at_the_end_of_the_json_object() -> None:
    chatty = Reply('{"notify": true, "reason": "ok"}' + "\n" * 2_000 + " and more", pace_s=0.001)
    async with LlmServer({"*": [chatty]}) as server:
        backend = llm(server)
        reply = await backend.complete_json(role="planner", system="s", user="u", schema=PLANNER_SCHEMA)
        await backend.aclose()
        assert reply.data == {"notify": True, "reason": "ok"} and reply.call.attempts == 1
        await asyncio.sleep(0.1)
        assert server.served[0].hung_up and server.served[0].chunks_sent < 100


async def test_a_reply_cut_off_at_the_budget_twice_leaves_the_rules_answer() -> None:
    cut = Reply('{"fragments": [{"kind": "file", "value": "main', finish_reason="length")
    async with LlmServer({"extractor": [cut]}) as server:
        backend = ModelRoleBackend(llm(server))
        called = await backend.extract(ide_context(), Family.EXTRACT)
    assert called.value == rules.extract(ide_context(), Family.EXTRACT)
    assert backend.last_call is not None and backend.last_call.attempts == 2
    assert backend.last_call.fallback.startswith("invalid_output:")
    assert "cut off at the output token budget" in backend.last_call.fallback


async def test_each_role_asks_for_its_own_output_budget() -> None:
    replies = {
        "extractor": [Reply(GEMMA_FRAGMENTS)],
        "synthesizer": [Reply('{"candidates": [], "conflicts": [], "cost_label": "low"}')],
        "planner": [Reply(json.dumps({"notify": True, "next_wakeup_ms": NOW + 600_000,
                                      "min_cooldown_ms": 600_000, "trigger_filters": [], "reason": "new"}))],
        "notifier": [Reply('{"notification": null}')],
    }  # fmt: skip
    async with LlmServer(replies) as server:
        backend = ModelRoleBackend(llm(server))
        fragments = (await backend.extract(ide_context(), Family.EXTRACT)).value
        synthesis = (await backend.synthesize(fragments)).value
        plan = (await backend.plan(synthesis, PlanHistory(NOW))).value
        await backend.notify(plan, synthesis)
    asked = {served.role: served.body["max_tokens"] for served in server.served}
    assert asked == {role.value: output_budget(role) for role in Role}
    assert all(served.body["stream"] is True for served in server.served)


async def test_valid_json_out_of_bounds_is_retried_then_the_rules_answer_stands() -> None:
    async with LlmServer({"extractor": [Reply(GEMMA_NONSENSE_FRAGMENTS)]}) as server:
        backend = ModelRoleBackend(llm(server))
        called = await backend.extract(ide_context(), Family.EXTRACT)
    second_prompt = server.served[1].body["messages"][0]["content"]
    assert "out of bounds" in second_prompt and "repeats its kind" in second_prompt
    assert called.value == rules.extract(ide_context(), Family.EXTRACT)
    assert backend.last_call is not None and backend.last_call.outcome == "invalid_output"


async def test_a_planner_that_stays_silent_cannot_silence_the_rules() -> None:
    silent = {"notify": False, "next_wakeup_ms": NOW + 600_000, "min_cooldown_ms": 600_000,
              "trigger_filters": [], "reason": "the user is busy"}  # fmt: skip
    async with LlmServer({"planner": [Reply(json.dumps(silent))]}) as server:
        backend = ModelRoleBackend(llm(server))
        synthesis = rules.synthesize(rules.extract(ide_context(), Family.EXTRACT))
        plan = (await backend.plan(synthesis, PlanHistory(NOW))).value
    assert plan.notify and plan == rules.plan(synthesis, PlanHistory(NOW))
    assert backend.last_call is not None and backend.last_call.fallback.startswith("overruled:")


async def test_a_format_refused_once_is_not_asked_again_at_that_endpoint() -> None:
    memory = FormatMemory()
    refusing = Reply('{"notify": true, "reason": "ok"}', refuse_format="json_schema")
    async with LlmServer({"*": [refusing]}) as server:
        for _ in range(3):  # three backends built in turn, as `replay --call` and the service do
            backend = llm(server, formats=memory)
            await backend.complete_json(role="planner", system="s", user="u", schema=PLANNER_SCHEMA)
            await backend.aclose()
    assert server.refused_formats == ["json_schema"]
    assert [served.body["response_format"]["type"] for served in server.served] == ["json_object"] * 3


async def test_a_replay_against_a_model_that_always_times_out_notifies_what_the_rules_do() -> None:
    events = list(read_recording(str(RECORDING)))
    expected = await replay_events(events, RulesBackend())
    stuck = Reply(RAMBLING, pace_s=0.05)
    async with LlmServer({"*": [stuck]}) as server:
        backend = ModelRoleBackend(llm(server), timeout_secs=0.1)
        report = await replay_events(events, backend)
    assert [n.title for n in report.notified] == [n.title for n in expected.notified]
    assert len(expected.notified) >= 3
    roles = report.calls_by_role()
    assert all(row["fell_back"] == row["calls"] for row in roles.values())
    notes = [note for run in report.runs for note in run.notes]
    assert any(note.startswith("extractor: rules' answer kept (timeout:") for note in notes)
    await asyncio.sleep(0.3)
    assert all(served.hung_up for served in server.served)


def test_replay_call_shows_each_call_and_finishes_with_its_report() -> None:
    """`kronii replay --backend openai --call` as a person runs it, against the recorded server."""

    async def run() -> tuple[subprocess.CompletedProcess[str], int]:
        async with LlmServer({"*": [Reply("{not json", pace_s=0.001)]}) as server:
            env = {
                **os.environ,
                "KRONII_PIPELINE_LLM_BASE_URL": server.url,
                "KRONII_PIPELINE_LLM_MODEL": "gemma-3-270m",
                "KRONII_PIPELINE_LLM_TIMEOUT_SECS": "5",
            }
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kronii.launcher.cli.main", "replay", str(RECORDING),
                "--backend", "openai", "--call",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            )  # fmt: skip
            out, err = await asyncio.wait_for(process.communicate(), 120)
            result = subprocess.CompletedProcess([], process.returncode or 0, out.decode(), err.decode())
            return result, len(server.served)

    result, served = asyncio.run(run())
    assert result.returncode == 0, result.stderr
    progress = [line for line in result.stderr.splitlines() if line.strip().startswith("call")]
    assert len(progress) == 36 and served == 72  # every role call, two attempts each
    assert "extractor   fell back" in progress[0] and "invalid_output" in progress[0]
    assert "notified: 3" in result.stdout
    assert "rules used 11" in result.stdout
