"""`run_json_protocol` on its own, with a scripted backend and clock: R2's one retry with a stricter
prompt, one time budget for all attempts, out-of-bounds replies retried like invalid ones, and a call
record with every outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from kronii.llm.protocol import (
    ChatMessage,
    LlmReply,
    ModelOutputError,
    ModelUnavailableError,
    RawCompletion,
    run_json_protocol,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Script:
    """A backend that answers with the next reply, each taking `secs` of a fake clock."""

    def __init__(self, *replies: RawCompletion | Exception, secs: float = 1.0) -> None:
        self.replies = list(replies)
        self.secs = secs
        self.now = 50.0
        self.asked: list[tuple[str, float]] = []  # (system prompt, seconds it was given)

    def clock(self) -> float:
        return self.now

    async def complete(self, messages: Sequence[ChatMessage], remaining: float) -> RawCompletion:
        self.asked.append((messages[0]["content"], remaining))
        self.now += self.secs
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def _no_sevens(data: dict[str, Any]) -> list[str]:
    return ["n must not be 7"] if data["n"] == 7 else []


async def _run(script: Script, timeout_secs: float = 10.0) -> LlmReply:
    return await run_json_protocol(
        role="planner",
        backend="scripted",
        model="m",
        system="You plan.",
        user="u",
        schema=SCHEMA,
        complete=script.complete,
        timeout_secs=timeout_secs,
        check=_no_sevens,
        cost=lambda tokens_in, tokens_out: tokens_in + 10 * tokens_out,
        clock=script.clock,
    )


async def test_a_valid_reply_is_accounted_with_its_latency_and_cost() -> None:
    reply = await _run(Script(RawCompletion('{"n": 1}', 30, 4), secs=1.5))
    assert reply.data == {"n": 1}
    call = reply.call
    assert (call.role, call.backend, call.model, call.outcome) == ("planner", "scripted", "m", "ok")
    assert (call.attempts, call.input_tokens, call.output_tokens, call.tokens_estimated) == (1, 30, 4, False)
    assert call.latency_ms == 1_500 and call.cost_estimate == 70


async def test_an_out_of_bounds_reply_is_retried_with_a_stricter_prompt_and_less_time() -> None:
    script = Script(RawCompletion('{"n": 7}', 1, 1), RawCompletion('{"n": 2}', 1, 1), secs=2.0)
    reply = await _run(script)
    assert reply.data == {"n": 2} and reply.call.attempts == 2
    (first, first_secs), (second, second_secs) = script.asked
    assert first == "You plan." and first_secs == 10.0
    assert "rejected: it was out of bounds: n must not be 7." in second and second_secs == 8.0


async def test_two_invalid_replies_stop_the_run_naming_both_reasons() -> None:
    script = Script(RawCompletion("{", truncated=True), RawCompletion('{"n": 7}', 3, 3))
    with pytest.raises(ModelOutputError) as raised:
        await _run(script)
    assert raised.value.reasons == ("cut off at the output token budget", "out of bounds: n must not be 7")
    assert str(raised.value) == (
        "the planner model gave no valid JSON in 2 attempts: "
        "cut off at the output token budget; out of bounds: n must not be 7"
    )
    assert raised.value.call is not None and raised.value.call.outcome == "invalid_output"
    assert raised.value.call.tokens_estimated  # the first reply came without usage


async def test_a_first_attempt_that_used_up_the_time_leaves_no_retry() -> None:
    script = Script(RawCompletion("not json", 5, 5), RawCompletion('{"n": 1}'), secs=10.0)
    with pytest.raises(
        ModelUnavailableError, match=r"ran out of its 10 s after 1 attempt\(s\): not valid JSON"
    ):
        await _run(script)
    assert len(script.asked) == 1  # the retry is never sent


async def test_time_running_out_is_recorded_as_an_error_with_the_attempts_made() -> None:
    script = Script(RawCompletion("not json", 5, 5), secs=12.0)
    with pytest.raises(ModelUnavailableError) as raised:
        await _run(script)
    call = raised.value.call
    assert call is not None
    assert (call.outcome, call.attempts, call.input_tokens, call.latency_ms) == ("error", 1, 5, 12_000)


async def test_an_unreachable_model_on_the_retry_keeps_the_first_attempts_cost() -> None:
    down = ModelUnavailableError("connection refused")
    script = Script(RawCompletion("[]", 8, 2), down)
    with pytest.raises(ModelUnavailableError) as raised:
        await _run(script)
    assert str(raised.value) == "connection refused" and raised.value.__cause__ is down
    call = raised.value.call
    assert call is not None and (call.outcome, call.attempts, call.input_tokens) == ("error", 1, 8)


async def test_an_invalid_schema_is_refused_before_anything_is_sent() -> None:
    script = Script(RawCompletion('{"n": 1}'))
    with pytest.raises(jsonschema.SchemaError):
        await run_json_protocol(
            role="planner",
            backend="scripted",
            model="m",
            system="s",
            user="u",
            schema={"type": 12},
            complete=script.complete,
            timeout_secs=1,
        )
    assert script.asked == []
