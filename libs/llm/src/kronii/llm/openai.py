"""Any OpenAI-compatible chat completions endpoint (OpenAI, vLLM, llama.cpp's servers, Ollama).

The role's JSON schema goes out as `response_format` json_schema; a server that rejects that
(400/422, or an error naming response_format) is asked with json_object plus the schema
(llama-cpp-python turns that into a grammar), then plain json_object, then nothing but the prompt.
The first format an endpoint accepts is remembered for the process (`FORMATS`), so a server that
refused json_schema once is not asked for it on every call.

Replies are streamed: a call that runs out of time closes its connection, which stops a
streaming server generating (a cancelled call never queues the next one behind it), and the
stream is closed as soon as the reply's JSON object is complete."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from kronii.llm.protocol import (
    ChatMessage,
    Check,
    InputGuard,
    JsonObjectEnd,
    LlmReply,
    ModelUnavailableError,
    RawCompletion,
    run_json_protocol,
)

__all__ = ["FORMATS", "RESPONSE_FORMATS", "FormatMemory", "OpenAIBackend", "grammar_friendly"]

RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")


# Length bounds become one grammar rule per allowed character in llama.cpp (a 2000-character
# bound is a rule llama.cpp refuses, and its server dies on it); bounds up to this size are kept,
# so a grammar-constrained model stops where the schema says. The reply is still validated
# against the full schema here.
_GRAMMAR_MAX_BOUND = 256
_LENGTH_BOUNDS = frozenset({"maxLength", "minLength", "maxItems", "minItems"})


def grammar_friendly(schema: Any) -> Any:
    """`schema` without `$schema` and the length bounds too large for grammar-constrained decoding."""
    if isinstance(schema, Mapping):
        return {
            k: grammar_friendly(v)
            for k, v in schema.items()
            if k != "$schema" and not (k in _LENGTH_BOUNDS and isinstance(v, int) and v > _GRAMMAR_MAX_BOUND)
        }
    if isinstance(schema, list):
        return [grammar_friendly(item) for item in schema]
    return schema


def _response_format(kind: str, role: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    schema = grammar_friendly(schema)
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": role, "schema": dict(schema)}}
    if kind == "json_object_schema":
        return {"type": "json_object", "schema": dict(schema)}
    if kind == "json_object":
        return {"type": "json_object"}
    return None


def _rejects_format(status: int, text: str) -> bool:
    # 400/422 is the usual answer; llama-cpp-python's server answers its validation error with a
    # 500 that names the field.
    if status in (400, 422):
        return True
    return status >= 500 and "response_format" in text


def _chat_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    base = base.removesuffix("/v1")
    return f"{base}/v1/chat/completions"


class FormatMemory:
    """Per endpoint, the response formats still worth trying, best first (the process's memory)."""

    def __init__(self) -> None:
        self._refused: dict[str, int] = {}

    def current(self, endpoint: str, choices: tuple[str, ...]) -> str:
        return choices[min(self._refused.get(endpoint, 0), len(choices) - 1)]

    def refuse(self, endpoint: str, choices: tuple[str, ...]) -> bool:
        """The endpoint refused the current format: move down; False when none is left."""
        step = self._refused.get(endpoint, 0)
        if step + 1 >= len(choices):
            return False
        self._refused[endpoint] = step + 1
        return True

    def forget(self) -> None:
        self._refused.clear()


FORMATS = FormatMemory()


class _FormatRefused(Exception):
    pass


class OpenAIBackend:
    """`complete_json` over POST /v1/chat/completions with httpx, streamed.

    Prices are per 1000 tokens and only feed the run's cost estimate. `transport` is for tests."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_secs: float = 30.0,
        max_output_tokens: int = 512,
        *,
        temperature: float = 0.0,
        response_format: str = "auto",
        price_per_1k_input: float = 0.0,
        price_per_1k_output: float = 0.0,
        guard: InputGuard | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        formats: FormatMemory | None = None,
    ) -> None:
        if response_format != "auto" and response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"response_format must be 'auto' or one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}"
            )
        if timeout_secs <= 0 or max_output_tokens <= 0:
            raise ValueError("timeout_secs and max_output_tokens must be positive")
        self.model = model
        self._url = _chat_url(base_url)
        self._endpoint = f"{self._url} {model}"
        self._timeout_secs = timeout_secs
        self._max_output_tokens = max_output_tokens
        self._temperature = temperature
        self._choices: tuple[str, ...] = RESPONSE_FORMATS if response_format == "auto" else (response_format,)
        self._memory = formats if formats is not None else FORMATS
        self._prices = (price_per_1k_input, price_per_1k_output)
        self._guard = guard if guard is not None else InputGuard()
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, transport=transport)

    @property
    def response_format(self) -> str:
        """The format in use: the first one this endpoint accepted (or will be tried first)."""
        return self._memory.current(self._endpoint, self._choices)

    async def aclose(self) -> None:
        await self._client.aclose()

    def _cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self._prices[0] + output_tokens * self._prices[1]) / 1000

    async def complete_json(
        self,
        *,
        role: str,
        system: str,
        user: str,
        schema: Mapping[str, Any],
        max_output_tokens: int | None = None,
        timeout_secs: float | None = None,
        check: Check | None = None,
    ) -> LlmReply:
        self._guard.check(system, user)
        budget = max_output_tokens or self._max_output_tokens

        async def complete(messages: Sequence[ChatMessage], wait_secs: float) -> RawCompletion:
            return await self._complete(role, messages, schema, budget, wait_secs)

        return await run_json_protocol(
            role=role,
            backend=self.name,
            model=self.model,
            system=system,
            user=user,
            schema=schema,
            complete=complete,
            timeout_secs=timeout_secs or self._timeout_secs,
            check=check,
            cost=self._cost,
        )

    async def _complete(
        self,
        role: str,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        max_tokens: int,
        wait_secs: float,
    ) -> RawCompletion:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_secs
        while True:
            body: dict[str, Any] = {
                "model": self.model,
                "messages": list(messages),
                "max_tokens": max_tokens,
                "temperature": self._temperature,
                "stream": True,
            }
            response_format = _response_format(self.response_format, role, schema)
            if response_format is not None:
                body["response_format"] = response_format
            remaining = max(0.001, deadline - loop.time())
            try:
                # Cancelling the read closes the connection: the server stops generating.
                return await asyncio.wait_for(self._stream(body, remaining), remaining)
            except _FormatRefused:
                continue  # the next format down, without spending one of R2's attempts
            except TimeoutError:
                raise ModelUnavailableError(
                    f"the model did not answer within {wait_secs:.1f} s (the call was cancelled)"
                ) from None
            except httpx.TimeoutException:
                raise ModelUnavailableError(f"the model did not answer within {wait_secs:.1f} s") from None
            except httpx.HTTPError as error:
                raise ModelUnavailableError(f"cannot reach the model server: {error}") from None

    async def _stream(self, body: dict[str, Any], wait_secs: float) -> RawCompletion:
        async with self._client.stream("POST", self._url, json=body, timeout=wait_secs) as response:
            if response.status_code != 200:
                text = (await response.aread()).decode(errors="replace")
                if _rejects_format(response.status_code, text) and self._memory.refuse(
                    self._endpoint, self._choices
                ):
                    raise _FormatRefused
                raise ModelUnavailableError(
                    f"the model server answered HTTP {response.status_code}: {text[:200]}"
                )
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # A server that ignores `stream` answers with one JSON document.
                return _whole_completion(await response.aread())
            return await _read_events(response)


async def _read_events(response: httpx.Response) -> RawCompletion:
    pieces: list[str] = []
    end = JsonObjectEnd()
    finish: str | None = None
    usage: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
            choices = chunk.get("choices") or []
            usage = chunk.get("usage") or usage
            if not choices:
                continue
            choice = choices[0]
            piece = (choice.get("delta") or {}).get("content") or ""
            finish = choice.get("finish_reason") or finish
        except (ValueError, AttributeError, TypeError):
            raise ModelUnavailableError("the model server's stream is not chat completion chunks") from None
        pieces.append(str(piece))
        if end.feed(str(piece)):
            # The object is whole: leaving the block closes the stream, and the server stops.
            return _completion("".join(pieces)[: end.closed_at], usage, truncated=False)
    return _completion("".join(pieces), usage, truncated=finish == "length")


def _whole_completion(raw: bytes) -> RawCompletion:
    try:
        payload = json.loads(raw)
        choice = payload["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelUnavailableError("the model server's answer is not a chat completion") from None
    usage = payload.get("usage") if isinstance(payload, dict) else None
    return _completion(
        str(text), usage if isinstance(usage, dict) else {}, choice.get("finish_reason") == "length"
    )


def _completion(text: str, usage: Mapping[str, Any], truncated: bool) -> RawCompletion:
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    return RawCompletion(
        text=text,
        input_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
        output_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
        truncated=truncated,
    )
