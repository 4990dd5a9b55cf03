"""A GGUF model in process through llama-cpp-python (the optional `llamacpp` extra).

llama_cpp is imported only when a backend is built, so a service runs without it; the schema is
handed to llama.cpp as a JSON grammar, and R2's retry still applies to what comes back.

Generation is streamed token by token in a worker thread that checks a stop flag between tokens: a
call that runs out of time stops llama.cpp within one token instead of running on, and a reply
stops at the closing brace of its JSON object."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kronii.llm.openai import grammar_friendly
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

__all__ = ["MISSING_EXTRA", "LlamaCppBackend", "LlamaCppUnavailable", "load_llama_cpp"]

MISSING_EXTRA = (
    "the llamacpp backend needs llama-cpp-python, which is not installed; "
    "install it with `pip install 'kronii[llamacpp]'` "
    "or choose another backend (openai, or the pipeline's rules)"
)


class LlamaCppUnavailable(RuntimeError):
    """llama-cpp-python is not installed, or the model file cannot be loaded."""


def load_llama_cpp() -> Any:
    """The llama_cpp module, or LlamaCppUnavailable with the sentence that says how to get it."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError:
        raise LlamaCppUnavailable(MISSING_EXTRA) from None


class LlamaCppBackend:
    """`complete_json` with llama_cpp.Llama. One call at a time: a Llama object is not thread-safe.

    A call that outlives its time is told to stop and does so at the next token; the lock keeps
    the next call waiting until the worker thread has really let go of the model."""

    name = "llamacpp"

    def __init__(
        self,
        model_path: str | Path,
        *,
        context_tokens: int = 4096,
        timeout_secs: float = 60.0,
        max_output_tokens: int = 512,
        threads: int | None = None,
        guard: InputGuard | None = None,
    ) -> None:
        llama_cpp = load_llama_cpp()
        path = Path(model_path)
        if not path.is_file():
            raise LlamaCppUnavailable(f"the llamacpp model file {path.name!r} does not exist")
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(path), n_ctx=context_tokens, n_threads=threads, verbose=False
            )
        except (ValueError, RuntimeError) as error:
            raise LlamaCppUnavailable(f"llama.cpp cannot load the model {path.name!r}: {error}") from None
        self.model = path.stem
        self._timeout_secs = timeout_secs
        self._max_output_tokens = max_output_tokens
        self._guard = guard if guard is not None else InputGuard()
        self._lock = asyncio.Lock()

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
            await self._lock.acquire()
            stop = threading.Event()
            work = asyncio.ensure_future(asyncio.to_thread(self._generate, messages, schema, budget, stop))
            work.add_done_callback(self._finished)
            try:
                return await asyncio.wait_for(asyncio.shield(work), wait_secs)
            except TimeoutError:
                raise ModelUnavailableError(
                    f"the model did not answer within {wait_secs:.1f} s (generation was stopped)"
                ) from None
            except (ValueError, RuntimeError, KeyError) as error:
                raise ModelUnavailableError(f"llama.cpp failed: {error}") from None
            finally:
                stop.set()  # on a timeout or a cancelled run, llama.cpp stops at its next token

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
        )

    def _finished(self, work: asyncio.Future[Any]) -> None:
        # The lock is held until llama.cpp is really done, even when the caller gave up waiting.
        self._lock.release()
        if not work.cancelled():
            work.exception()  # retrieved, so an abandoned call's error is not reported as unhandled

    def _generate(
        self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], budget: int, stop: threading.Event
    ) -> RawCompletion:
        chunks = self._llama.create_chat_completion(
            messages=list(messages),
            response_format={"type": "json_object", "schema": grammar_friendly(schema)},
            max_tokens=budget,
            temperature=0.0,
            stream=True,
        )
        pieces: list[str] = []
        end = JsonObjectEnd()
        finish: str | None = None
        tokens = 0
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = (choice.get("delta") or {}).get("content") or ""
                finish = choice.get("finish_reason") or finish
                tokens += 1 if piece else 0
                pieces.append(piece)
                if end.feed(piece):
                    return RawCompletion("".join(pieces)[: end.closed_at], output_tokens=tokens)
                if stop.is_set():
                    break
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()  # ends the generator: llama.cpp frees the sequence now
        return RawCompletion("".join(pieces), output_tokens=tokens, truncated=finish == "length")
