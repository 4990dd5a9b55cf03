"""Any OpenAI-compatible chat completions endpoint (OpenAI, vLLM, llama.cpp's servers, Ollama).

The role's JSON schema goes out as `response_format` json_schema; a server that rejects that
(400/422, or an error naming response_format) is asked with json_object plus the schema (llama-cpp-python turns that into a grammar),
then plain json_object, then nothing but the prompt. The first format a server accepts is kept."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
from kronii.pipeline.adapters.llm import (
    ChatMessage,
    InputGuard,
    LlmReply,
    ModelUnavailableError,
    RawCompletion,
    run_json_protocol,
)

__all__ = ["RESPONSE_FORMATS", "OpenAIBackend", "grammar_friendly"]

RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")


# Length bounds become one grammar rule per allowed character in llama.cpp (a 2000-character
# bound is a rule llama.cpp refuses, and its server dies on it); the server gets the schema
# without them and the reply is still validated against the full schema here.
_GRAMMAR_UNFRIENDLY = frozenset({"maxLength", "minLength", "maxItems", "minItems", "$schema"})


def grammar_friendly(schema: Any) -> Any:
    """`schema` without the length bounds that blow up grammar-constrained decoding."""
    if isinstance(schema, Mapping):
        return {k: grammar_friendly(v) for k, v in schema.items() if k not in _GRAMMAR_UNFRIENDLY}
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


def _rejects_format(response: httpx.Response) -> bool:
    # 400/422 is the usual answer; llama-cpp-python's server answers its validation error with a
    # 500 that names the field.
    if response.status_code in (400, 422):
        return True
    return response.status_code >= 500 and "response_format" in response.text


def _chat_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    base = base.removesuffix("/v1")
    return f"{base}/v1/chat/completions"


class OpenAIBackend:
    """`complete_json` over POST /v1/chat/completions with httpx.

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
    ) -> None:
        if response_format != "auto" and response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"response_format must be 'auto' or one of {', '.join(RESPONSE_FORMATS)}, not {response_format!r}"
            )
        if timeout_secs <= 0 or max_output_tokens <= 0:
            raise ValueError("timeout_secs and max_output_tokens must be positive")
        self.model = model
        self._url = _chat_url(base_url)
        self._timeout_secs = timeout_secs
        self._max_output_tokens = max_output_tokens
        self._temperature = temperature
        self._formats: tuple[str, ...] = RESPONSE_FORMATS if response_format == "auto" else (response_format,)
        self._prices = (price_per_1k_input, price_per_1k_output)
        self._guard = guard if guard is not None else InputGuard()
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, transport=transport)

    @property
    def response_format(self) -> str:
        """The format in use: the first one the server accepted (or will be tried first)."""
        return self._formats[0]

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
    ) -> LlmReply:
        self._guard.check(system, user)
        budget = max_output_tokens or self._max_output_tokens
        timeout = timeout_secs or self._timeout_secs

        async def complete(messages: Sequence[ChatMessage]) -> RawCompletion:
            return await self._complete(role, messages, schema, budget, timeout)

        return await run_json_protocol(
            role=role,
            backend=self.name,
            model=self.model,
            system=system,
            user=user,
            schema=schema,
            complete=complete,
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
        deadline = time.monotonic() + wait_secs
        while True:
            kind = self._formats[0]
            body: dict[str, Any] = {
                "model": self.model,
                "messages": list(messages),
                "max_tokens": max_tokens,
                "temperature": self._temperature,
            }
            response_format = _response_format(kind, role, schema)
            if response_format is not None:
                body["response_format"] = response_format
            response = await self._post(body, max(0.001, deadline - time.monotonic()))
            if len(self._formats) > 1 and _rejects_format(response):
                # The server does not take this response_format; the next one down is tried
                # without spending one of R2's attempts.
                self._formats = self._formats[1:]
                continue
            return self._parse(response)

    async def _post(self, body: dict[str, Any], wait_secs: float) -> httpx.Response:
        try:
            return await self._client.post(self._url, json=body, timeout=wait_secs)
        except httpx.TimeoutException:
            raise ModelUnavailableError(f"the model did not answer within {wait_secs:.1f} s") from None
        except httpx.HTTPError as error:
            raise ModelUnavailableError(f"cannot reach the model server: {error}") from None

    def _parse(self, response: httpx.Response) -> RawCompletion:
        if response.status_code != 200:
            raise ModelUnavailableError(
                f"the model server answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            payload = response.json()
            choice = payload["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ModelUnavailableError("the model server's answer is not a chat completion") from None
        usage = payload.get("usage") if isinstance(payload, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        prompt_tokens = usage.get("prompt_tokens")
        completion_tokens = usage.get("completion_tokens")
        return RawCompletion(
            text=str(text),
            input_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
            output_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
            truncated=choice.get("finish_reason") == "length",
        )
