"""Seed 001 rule R2 for the OpenAI-compatible backend: the LLM must return valid JSON; otherwise one
retry with a stricter prompt, then the run stops. The server is an httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from kronii.llm.openai import FormatMemory, OpenAIBackend
from kronii.llm.protocol import ModelOutputError, ModelUnavailableError, UnredactedInputError

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"notify": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["notify", "reason"],
    "additionalProperties": False,
}
VALID = json.dumps({"notify": True, "reason": "tests failed in the focused pane"})


class FakeServer:
    """Answers chat completions with the next of `replies`; records every request body."""

    def __init__(
        self, replies: list[str], *, usage: bool = True, reject_formats: tuple[str, ...] = ()
    ) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.usage = usage
        self.reject_formats = reject_formats

    def handler(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        response_format = body.get("response_format", {})
        kind = response_format.get("type", "none") + ("_schema" * ("schema" in response_format))
        if kind in self.reject_formats:
            return httpx.Response(400, json={"error": {"message": f"unsupported response_format {kind}"}})
        content = self.replies.pop(0)
        payload: dict[str, Any] = {
            "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
        }
        if self.usage:
            payload["usage"] = {"prompt_tokens": 100, "completion_tokens": 20}
        return httpx.Response(200, json=payload)


def backend(server: FakeServer, **options: Any) -> OpenAIBackend:
    options.setdefault("formats", FormatMemory())  # each test meets the server for the first time
    return OpenAIBackend(
        "http://llm.test/v1", "test-model", transport=httpx.MockTransport(server.handler), **options
    )


async def ask(llm: OpenAIBackend, user: str = "Focused pane: pytest, 2 failed.") -> Any:
    return await llm.complete_json(role="planner", system="You plan.", user=user, schema=SCHEMA)


async def test_r2_valid_json_the_first_time_is_one_attempt() -> None:
    server = FakeServer([VALID])
    reply = await ask(backend(server, price_per_1k_input=1.0, price_per_1k_output=2.0))
    assert reply.data == {"notify": True, "reason": "tests failed in the focused pane"}
    assert reply.call.attempts == 1
    assert (reply.call.input_tokens, reply.call.output_tokens) == (100, 20)
    assert reply.call.cost_estimate == pytest.approx(0.1 + 0.04)
    assert reply.call.role == "planner" and reply.call.backend == "openai" and reply.call.outcome == "ok"
    assert len(server.requests) == 1
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_r2_invalid_then_valid_retries_once_with_a_stricter_prompt() -> None:
    server = FakeServer(["Sure! Here is the JSON: {notify: yes}", VALID])
    reply = await ask(backend(server))
    assert reply.data["notify"] is True
    assert reply.call.attempts == 2
    assert (reply.call.input_tokens, reply.call.output_tokens) == (200, 40)
    first, second = (request["messages"][0]["content"] for request in server.requests)
    assert first == "You plan."
    assert second.startswith("You plan.") and "previous reply was rejected" in second
    assert "not valid JSON" in second and '"required": ["notify", "reason"]' in second
    # The user message is the same redacted input both times.
    assert server.requests[0]["messages"][1] == server.requests[1]["messages"][1]


async def test_r2_invalid_twice_stops_with_both_attempts_recorded() -> None:
    server = FakeServer(["not json", "still {not json"])
    with pytest.raises(ModelOutputError) as raised:
        await ask(backend(server))
    assert len(server.requests) == 2  # no third attempt
    assert raised.value.call is not None
    assert raised.value.call.attempts == 2
    assert raised.value.call.outcome == "invalid_output"
    assert raised.value.call.input_tokens == 200
    assert len(raised.value.reasons) == 2


async def test_r2_a_schema_mismatch_counts_as_invalid() -> None:
    server = FakeServer([json.dumps({"notify": "yes", "reason": "x"}), json.dumps({"notify": True})])
    with pytest.raises(ModelOutputError) as raised:
        await ask(backend(server))
    assert raised.value.call is not None and raised.value.call.attempts == 2
    assert "does not match the schema at notify" in raised.value.reasons[0]
    assert "'reason' is a required property" in raised.value.reasons[1]


async def test_a_json_array_is_not_an_acceptable_reply() -> None:
    server = FakeServer(["[1, 2]", VALID])
    reply = await ask(backend(server))
    assert reply.call.attempts == 2


@pytest.mark.parametrize(
    "secret",
    [
        "AKIAJ4XW7QZ2MB5RT6NP",
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    ],
)
async def test_a_secret_in_the_input_is_refused_before_any_request(secret: str) -> None:
    server = FakeServer([VALID])
    with pytest.raises(UnredactedInputError, match="refusing") as raised:
        await ask(backend(server), user=f"the pane shows {secret}")
    assert server.requests == []
    assert secret not in str(raised.value)


async def test_redacted_placeholders_and_personal_data_pass_the_guard() -> None:
    server = FakeServer([VALID])
    await ask(backend(server), user="token [GITHUB_TOKEN_1] pasted by [EMAIL_1] in ~/project")
    assert len(server.requests) == 1


async def test_a_server_without_json_schema_gets_json_object_without_spending_an_attempt() -> None:
    server = FakeServer([VALID, VALID], reject_formats=("json_schema",))
    llm = backend(server)
    reply = await ask(llm)
    assert reply.call.attempts == 1
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]
    assert server.requests[1]["response_format"]["schema"] == SCHEMA
    await ask(llm)  # remembered: the next call goes straight to the accepted format
    assert server.requests[2]["response_format"]["type"] == "json_object"


async def test_tokens_are_estimated_when_the_server_reports_no_usage() -> None:
    server = FakeServer([VALID], usage=False)
    reply = await ask(backend(server))
    assert reply.call.tokens_estimated
    assert reply.call.output_tokens == -(-len(VALID) // 4)
    assert reply.call.input_tokens > 0


async def test_the_output_token_budget_and_model_are_sent() -> None:
    server = FakeServer([VALID, VALID])
    llm = backend(server, max_output_tokens=300)
    await llm.complete_json(role="notifier", system="s", user="u", schema=SCHEMA, max_output_tokens=77)
    await ask(llm)
    assert [r["max_tokens"] for r in server.requests] == [77, 300]
    assert server.requests[0]["model"] == "test-model"


async def test_a_reply_cut_off_at_the_budget_is_invalid() -> None:
    def truncated(request: httpx.Request) -> httpx.Response:
        choice = {"message": {"content": '{"notify": true, "rea'}, "finish_reason": "length"}
        return httpx.Response(200, json={"choices": [choice]})

    llm = OpenAIBackend("http://llm.test", "m", transport=httpx.MockTransport(truncated))
    with pytest.raises(ModelOutputError, match="cut off"):
        await ask(llm)


def failing(error: Callable[[httpx.Request], httpx.Response]) -> OpenAIBackend:
    return OpenAIBackend("http://llm.test", "m", transport=httpx.MockTransport(error))


async def test_a_timeout_is_reported_with_the_call_and_not_retried() -> None:
    calls: list[int] = []

    def slow(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        raise httpx.ReadTimeout("timed out", request=request)

    with pytest.raises(ModelUnavailableError, match="within") as raised:
        await ask(failing(slow))
    assert calls == [1]
    assert raised.value.call is not None and raised.value.call.outcome == "error"


async def test_a_server_error_is_model_unavailable() -> None:
    with pytest.raises(ModelUnavailableError, match="HTTP 503"):
        await ask(failing(lambda request: httpx.Response(503, text="overloaded")))


async def test_the_api_key_is_sent_as_a_bearer_token_and_base_urls_are_normalised() -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        choice = {"message": {"content": VALID}, "finish_reason": "stop"}
        return httpx.Response(200, json={"choices": [choice]})

    for base in ("http://llm.test", "http://llm.test/", "http://llm.test/v1/"):
        llm = OpenAIBackend(base, "m", api_key="k-123", transport=httpx.MockTransport(record))
        await ask(llm)
    assert {str(request.url) for request in seen} == {"http://llm.test/v1/chat/completions"}
    assert seen[0].headers["authorization"] == "Bearer k-123"


async def test_large_length_bounds_are_left_out_of_what_the_server_gets_but_still_checked_here() -> None:
    # llama.cpp turns a length bound into one grammar rule per character: 2000 kills its server,
    # a short one keeps a small model from rambling.
    properties = {**SCHEMA["properties"], "reason": {"type": "string", "maxLength": 2000, "minLength": 12}}
    bounded = {**SCHEMA, "properties": {**properties, "title": {"type": "string", "maxLength": 40}}}
    server = FakeServer([json.dumps({"notify": True, "reason": "short"}), VALID])
    reply = await backend(server).complete_json(role="planner", system="s", user="u", schema=bounded)
    sent = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["reason"] == {"type": "string", "minLength": 12}
    assert sent["properties"]["title"] == {"type": "string", "maxLength": 40}
    assert reply.call.attempts == 2  # the first reply's reason was shorter than 12 characters
