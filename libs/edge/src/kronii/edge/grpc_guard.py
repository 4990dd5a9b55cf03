"""Every gRPC method answers bad input and its own failures with a code and a plain sentence.

grpc.aio answers a request it cannot parse, and an exception a servicer lets escape, with UNKNOWN
and the Python exception's class in the detail. The interceptor here takes parsing over from the
server (each handler gets an identity deserializer and the behaviour parses the bytes itself), so
a malformed message is INVALID_ARGUMENT naming the expected message type, and an escaped exception
is INTERNAL with a sentence (the traceback goes to the log, never to the caller), unless it means
"not now" (`kronii.stores.durable.refusal_for`: a full disk, Redis MISCONF or OOM, PostgreSQL's
disk_full, a store out of reach): that is UNAVAILABLE with its sentence and `retry-after` seconds in
the trailing metadata.
"""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from kronii.stores.durable import refusal_for

__all__ = ["INTERNAL_SENTENCE", "GuardInterceptor", "guard_handler", "malformed_sentence", "retry_metadata"]

log = logging.getLogger(__name__)

INTERNAL_SENTENCE = "the service failed on this call; its log has the details"

_Deserializer = Callable[[bytes], Any]
_Abort = (grpc.aio.AbortError, grpc.aio.UsageError)


def retry_metadata(retry_after_secs: int) -> tuple[tuple[str, str], ...]:
    """gRPC's form of Retry-After: trailing metadata, when the caller was told to wait."""
    return (("retry-after", str(retry_after_secs)),) if retry_after_secs else ()


def malformed_sentence(message_name: str) -> str:
    return f"the request is not a valid {message_name} message"


def _message_name(deserializer: _Deserializer | None, method: str) -> str:
    """The full protobuf name the deserializer parses (generated code passes `Type.FromString`)."""
    owner = getattr(deserializer, "__self__", None)
    descriptor = getattr(owner, "DESCRIPTOR", None)
    name = getattr(descriptor, "full_name", "")
    return str(name) if name else f"request for {method}"


class _Parser:
    def __init__(self, deserializer: _Deserializer | None, method: str) -> None:
        self.deserializer = deserializer
        self.sentence = malformed_sentence(_message_name(deserializer, method))

    async def parse(self, raw: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if self.deserializer is None or not isinstance(raw, bytes | bytearray | memoryview):
            return raw
        try:
            return self.deserializer(bytes(raw))
        except Exception:  # DecodeError, or whatever a custom deserializer raises on these bytes
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, self.sentence)
            raise AssertionError("abort returned") from None  # pragma: no cover

    async def stream(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        async for raw in requests:
            yield await self.parse(raw, context)


async def _internal(context: grpc.aio.ServicerContext[Any, Any], method: str) -> None:
    error = sys.exc_info()[1]
    refusal = refusal_for(error) if error is not None else None
    if refusal is not None:
        # A store full or away, or a service not ready: the caller may retry (HTTP: 503).
        log.warning("gRPC %s answered UNAVAILABLE: %s (%s)", method, refusal.message, type(error).__name__)
        await context.abort(
            grpc.StatusCode.UNAVAILABLE, refusal.message, retry_metadata(refusal.retry_after_secs)
        )
    log.exception("gRPC %s failed", method)
    await context.abort(grpc.StatusCode.INTERNAL, INTERNAL_SENTENCE)


def _unary_in(behaviour: Any, parser: _Parser, method: str, streaming_out: bool) -> Any:
    if streaming_out:

        async def stream_call(raw: Any, context: Any) -> AsyncIterator[Any]:
            request = await parser.parse(raw, context)
            try:
                async for item in _as_stream(behaviour(request, context)):
                    yield item
            except _Abort:
                raise
            except Exception:
                await _internal(context, method)

        return stream_call

    async def call(raw: Any, context: Any) -> Any:
        request = await parser.parse(raw, context)
        try:
            return await _settled(behaviour(request, context))
        except _Abort:
            raise
        except Exception:
            await _internal(context, method)

    return call


def _stream_in(behaviour: Any, parser: _Parser, method: str, streaming_out: bool) -> Any:
    if streaming_out:

        async def stream_call(requests: Any, context: Any) -> AsyncIterator[Any]:
            try:
                async for item in _as_stream(behaviour(parser.stream(requests, context), context)):
                    yield item
            except _Abort:
                raise
            except Exception:
                await _internal(context, method)

        return stream_call

    async def call(requests: Any, context: Any) -> Any:
        try:
            return await _settled(behaviour(parser.stream(requests, context), context))
        except _Abort:
            raise
        except Exception:
            await _internal(context, method)

    return call


async def _settled(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


async def _as_stream(result: Any) -> AsyncIterator[Any]:
    """A streaming behaviour is an async generator, or a coroutine that writes with context.write."""
    if hasattr(result, "__aiter__"):
        async for item in result:
            yield item
    elif inspect.isawaitable(result):
        await result


# Wraps one behaviour: (behaviour, streaming_in, streaming_out) -> the behaviour to serve.
Rewrap = Callable[[Any, bool, bool], Any]
_KINDS = (
    ("unary_unary", grpc.unary_unary_rpc_method_handler, False, False),
    ("unary_stream", grpc.unary_stream_rpc_method_handler, False, True),
    ("stream_unary", grpc.stream_unary_rpc_method_handler, True, False),
    ("stream_stream", grpc.stream_stream_rpc_method_handler, True, True),
)


def rewrapped(
    handler: grpc.RpcMethodHandler, wrap: Rewrap, *, parse_inside: bool = False
) -> grpc.RpcMethodHandler:
    """The same method with its behaviour wrapped, whichever of the four shapes it has (the one place
    that rebuilds handlers, for every interceptor). `parse_inside`: the wrapper parses the request."""
    for attribute, build, streaming_in, streaming_out in _KINDS:
        behaviour = getattr(handler, attribute)
        if behaviour:
            return build(
                wrap(behaviour, streaming_in, streaming_out),
                request_deserializer=None if parse_inside else handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    return handler


def guard_handler(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
    parser = _Parser(handler.request_deserializer, method)

    def wrap(behaviour: Any, streaming_in: bool, streaming_out: bool) -> Any:
        build = _stream_in if streaming_in else _unary_in
        return build(behaviour, parser, method, streaming_out)

    return rewrapped(handler, wrap, parse_inside=True)


class GuardInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc ships no stubs
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return guard_handler(handler, str(handler_call_details.method))
