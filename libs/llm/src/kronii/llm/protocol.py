"""What every LLM backend shares: the reply and call record types, the errors, the guard that
only redacted input goes out, and the JSON protocol of seed 001 rule R2 (the reply must be valid
JSON matching the role's schema; otherwise one retry with a stricter prompt, then the run stops)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kronii.redaction import Category, Level, RedactionEngine, category_of, shared_engine

__all__ = [
    "MAX_ATTEMPTS",
    "CallRecord",
    "ChatMessage",
    "InputGuard",
    "InvalidOutput",
    "JsonObjectEnd",
    "LlmBackend",
    "LlmError",
    "LlmReply",
    "ModelOutputError",
    "ModelUnavailableError",
    "RawCompletion",
    "UnredactedInputError",
    "estimate_tokens",
    "parse_reply",
    "run_json_protocol",
    "stricter_system_prompt",
]

# R2: the first attempt and at most one retry.
MAX_ATTEMPTS = 2

ChatMessage = dict[str, str]


class LlmError(RuntimeError):
    """A model call did not produce a usable reply; `call` says what it cost."""

    def __init__(self, message: str, call: CallRecord | None = None) -> None:
        super().__init__(message)
        self.call = call


class ModelOutputError(LlmError):
    """The model's output was not valid JSON for the role's schema, twice: the run stops (R2)."""

    def __init__(self, message: str, call: CallRecord, reasons: Sequence[str]) -> None:
        super().__init__(message, call)
        self.reasons = tuple(reasons)


class ModelUnavailableError(LlmError):
    """The backend could not be reached, timed out or answered with an error."""


class UnredactedInputError(LlmError):
    """The input still holds what the redaction engine calls a secret: it is never sent."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One role's model call as the run records it (all attempts together)."""

    role: str
    backend: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    attempts: int = 0
    # Estimated from the backend's configured prices; 0 for local models.
    cost_estimate: float = 0.0
    # "ok", "invalid_output" or "error".
    outcome: str = "ok"
    tokens_estimated: bool = False
    # Why the rules' answer was used instead of the model's ("" when the model's stood).
    fallback: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "backend": self.backend,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
            "cost_estimate": self.cost_estimate,
            "outcome": self.outcome,
            "tokens_estimated": self.tokens_estimated,
            "fallback": self.fallback,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallRecord:
        return cls(
            role=str(data.get("role", "")),
            backend=str(data.get("backend", "")),
            model=str(data.get("model", "")),
            input_tokens=int(data.get("input_tokens", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            latency_ms=int(data.get("latency_ms", 0)),
            attempts=int(data.get("attempts", 0)),
            cost_estimate=float(data.get("cost_estimate", 0.0)),
            outcome=str(data.get("outcome", "ok")),
            tokens_estimated=bool(data.get("tokens_estimated", False)),
            fallback=str(data.get("fallback", "")),
        )


@dataclass(frozen=True, slots=True)
class LlmReply:
    data: dict[str, Any]
    call: CallRecord


class LlmBackend(Protocol):
    """What the core calls; `rules` (in the core), `openai` and `llamacpp` implement it."""

    name: str

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
    ) -> LlmReply: ...


def estimate_tokens(text: str) -> int:
    """About four characters a token: good enough for budgets when the server reports no usage."""
    return math.ceil(len(text) / 4) if text else 0


class InputGuard:
    """Refuses input in which the shared redaction engine still finds a secret or a policy term,
    or that it grades red. The error names the finding types, never the values."""

    def __init__(self, engine: RedactionEngine | None = None) -> None:
        self._engine = engine if engine is not None else shared_engine()

    def check(self, *texts: str) -> None:
        for text in texts:
            result = self._engine.redact(text)
            # Personal data may pass (the core decides how much of it a prompt needs); secrets and
            # the user's own deny terms and patterns may not.
            secrets = sorted(
                {f.type for f in result.findings if category_of(f.type) is not Category.PERSONAL}
            )
            if secrets:
                raise UnredactedInputError(
                    f"refusing to send unredacted input to a model: it contains {', '.join(secrets)}"
                )
            if result.level is Level.RED:
                raise UnredactedInputError(f"refusing to send input graded red: {result.reason}")


class InvalidOutput(ValueError):
    """Why one reply was not acceptable (not JSON, not an object, or not the schema)."""


def _strip_fence(text: str) -> str:
    # Small models like to wrap JSON in one markdown fence even when told not to; the content
    # inside is still checked strictly.
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and stripped.count("```") == 2:
        inner = stripped[3:-3]
        first_line, _, rest = inner.partition("\n")
        return (rest if first_line.strip().isalpha() or not first_line.strip() else inner).strip()
    return stripped


def _validator_for(schema: Mapping[str, Any]) -> Any:
    # Imported at the first model call: a service whose backend is the rules never pays for it (~2 MB).
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    return jsonschema.validators.validator_for(schema)


def parse_reply(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The reply as a JSON object valid for `schema`, or InvalidOutput saying what is wrong."""
    try:
        data = json.loads(_strip_fence(text))
    except ValueError as error:
        raise InvalidOutput(f"not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise InvalidOutput(f"not a JSON object but {type(data).__name__}")
    validator_class = _validator_for(schema)
    errors = sorted(validator_class(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.path) or "(root)"
        raise InvalidOutput(f"does not match the schema at {where}: {first.message}")
    return data


def stricter_system_prompt(system: str, schema: Mapping[str, Any], reason: str) -> str:
    """The retry's system prompt: the original, what was wrong, and the schema spelled out."""
    return (
        f"{system}\n\n"
        f"Your previous reply was rejected: it was {reason}.\n"
        "Reply with ONE JSON object and nothing else: no prose, no markdown, no code fences. "
        "It must validate against this JSON schema:\n"
        f"{json.dumps(schema, sort_keys=True)}"
    )


@dataclass(frozen=True, slots=True)
class RawCompletion:
    """One answer of a backend before parsing."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    truncated: bool = False


@dataclass
class _Tally:
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    attempts: int = 0
    reasons: list[str] = field(default_factory=list)

    def add(self, messages: Sequence[ChatMessage], raw: RawCompletion) -> None:
        self.attempts += 1
        if raw.input_tokens is None or raw.output_tokens is None:
            self.estimated = True
        self.input_tokens += (
            raw.input_tokens
            if raw.input_tokens is not None
            else sum(estimate_tokens(m["content"]) for m in messages)
        )
        self.output_tokens += (
            raw.output_tokens if raw.output_tokens is not None else estimate_tokens(raw.text)
        )


Complete = Callable[[Sequence[ChatMessage], float], Awaitable[RawCompletion]]
Cost = Callable[[int, int], float]
# Problems of a reply that is valid for the schema but out of the domain's bounds; empty when fine.
Check = Callable[[dict[str, Any]], Sequence[str]]


@dataclass
class _Accounting:
    """What one role's call has cost so far, for the record every outcome carries."""

    role: str
    backend: str
    model: str
    cost: Cost
    clock: Callable[[], float]
    started: float
    tally: _Tally = field(default_factory=_Tally)

    def record(self, outcome: str) -> CallRecord:
        return CallRecord(
            role=self.role,
            backend=self.backend,
            model=self.model,
            input_tokens=self.tally.input_tokens,
            output_tokens=self.tally.output_tokens,
            latency_ms=round((self.clock() - self.started) * 1000),
            attempts=self.tally.attempts,
            cost_estimate=self.cost(self.tally.input_tokens, self.tally.output_tokens),
            outcome=outcome,
            tokens_estimated=self.tally.estimated,
        )


async def _attempt(
    complete: Complete,
    messages: Sequence[ChatMessage],
    deadline: float,
    timeout_secs: float,
    call: _Accounting,
) -> RawCompletion:
    """One completion within what is left of the call's time, counted in `call`."""
    remaining = deadline - call.clock()
    tally = call.tally
    if remaining <= 0:
        raise ModelUnavailableError(
            f"the {call.role} model ran out of its {timeout_secs:g} s after {tally.attempts} attempt(s): "
            f"{'; '.join(tally.reasons)}",
            call.record("error"),
        )
    try:
        raw = await complete(messages, remaining)
    except ModelUnavailableError as error:
        raise ModelUnavailableError(str(error), call.record("error")) from error
    tally.add(messages, raw)
    return raw


def _validated(raw: RawCompletion, schema: Mapping[str, Any], check: Check | None) -> dict[str, Any]:
    """The completion's JSON object if it is whole, valid for `schema` and in bounds; else InvalidOutput."""
    if raw.truncated:
        raise InvalidOutput("cut off at the output token budget")
    data = parse_reply(raw.text, schema)
    problems = list(check(data)) if check is not None else []
    if problems:
        raise InvalidOutput(f"out of bounds: {'; '.join(problems)}")
    return data


async def run_json_protocol(
    *,
    role: str,
    backend: str,
    model: str,
    system: str,
    user: str,
    schema: Mapping[str, Any],
    complete: Complete,
    timeout_secs: float,
    check: Check | None = None,
    cost: Cost = lambda _in, _out: 0.0,
    clock: Callable[[], float] = time.monotonic,
) -> LlmReply:
    """Ask, validate, retry once with a stricter prompt (R2), and account for every attempt.

    `complete` sends one conversation with the seconds it may take and may raise
    ModelUnavailableError (not retried: R2 is about invalid output, and a second call to a dead
    server only doubles the wait). `timeout_secs` bounds all attempts together, so a role's call
    never outlives its budget. A reply valid for the schema that `check` finds out of bounds is
    invalid like one that is not JSON."""
    _validator_for(schema).check_schema(schema)
    call = _Accounting(role, backend, model, cost, clock, clock())
    deadline = call.started + timeout_secs
    system_prompt = system
    while call.tally.attempts < MAX_ATTEMPTS:
        messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user}]
        raw = await _attempt(complete, messages, deadline, timeout_secs, call)
        try:
            data = _validated(raw, schema, check)
        except InvalidOutput as invalid:
            call.tally.reasons.append(str(invalid))
            system_prompt = stricter_system_prompt(system, schema, str(invalid))
            continue
        return LlmReply(data, call.record("ok"))
    raise ModelOutputError(
        f"the {role} model gave no valid JSON in {MAX_ATTEMPTS} attempts: {'; '.join(call.tally.reasons)}",
        call.record("invalid_output"),
        call.tally.reasons,
    )


class JsonObjectEnd:
    """Follows a streamed reply and says when its first top-level JSON object is closed.

    Small models keep writing after the object (whitespace, a second object, prose); the stream
    is closed at the closing brace so the server stops generating and the time is not spent."""

    def __init__(self) -> None:
        self._depth = 0
        self._started = False
        self._in_string = False
        self._escaped = False
        self.closed_at: int | None = None  # characters of the text up to and with the brace
        self._seen = 0

    def feed(self, piece: str) -> bool:
        """Take the next piece of the text; True once the object is complete."""
        for offset, char in enumerate(piece):
            if self.closed_at is not None:
                break
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"' and self._started:
                self._in_string = True
            elif char == "{":
                self._started = True
                self._depth += 1
            elif char == "}" and self._started:
                self._depth -= 1
                if self._depth == 0:
                    self.closed_at = self._seen + offset + 1
        self._seen += len(piece)
        return self.closed_at is not None
