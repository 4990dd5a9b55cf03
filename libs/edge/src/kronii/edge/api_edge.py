"""Where a service meets its callers: a KroniiError becomes the one HTTP error body and the one gRPC
status, and JSON bodies turn into protobuf messages (and back) the same way in every service.

The HTTP error body is {"code": the error's code, "detail": sentence} plus "field" when a request
field is at fault (`kronii.foundation.errors.error_body`); the sentence is in `detail` as in FastAPI's own
errors, and every client (the CLIs' exit codes) branches on `code`. A
429 or 503 that knows when to come back sends Retry-After (every 503 does; gRPC sends it as the
trailing metadata `retry-after`).

A route that lets an exception escape is still answered with a status when the exception means
"not now" (`kronii.stores.durable.refusal_for`: a full disk, Redis MISCONF or OOM, PostgreSQL's
disk_full, a store out of reach, an Unavailable wrapped in another error): 503 with Retry-After and
a sentence (`RefusalMiddleware`); gRPC's guard does the same with UNAVAILABLE. Only what no rule
knows is a 500 / INTERNAL.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from google.protobuf.message import Message
from kronii.edge.grpc_guard import retry_metadata, rewrapped
from kronii.foundation.errors import InvalidArgument, KroniiError, error_body
from kronii.stores.durable import refusal_for

__all__ = [
    "KroniiErrorInterceptor",
    "RefusalMiddleware",
    "abort_with",
    "as_json",
    "error_response",
    "install_error_handler",
    "parse_message",
    "read_body",
    "read_json_object",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)

# ---- HTTP errors ---------------------------------------------------------------------------------


def error_response(error: KroniiError) -> JSONResponse:
    body = error_body(error)
    headers = {"Retry-After": str(error.retry_after_secs)} if error.retry_after_secs else None
    return JSONResponse(body, status_code=error.http_status, headers=headers)


def install_error_handler(app: FastAPI) -> None:
    async def render(_request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, KroniiError)
        if error.http_status >= 500:
            log.warning("answered %d: %s", error.http_status, error.message)
        return error_response(error)

    app.add_exception_handler(KroniiError, render)


_Asgi = Callable[[Any, Any, Any], Awaitable[None]]


class RefusalMiddleware:
    """Pure ASGI, inside the others: an exception a route lets escape that means "not now" is
    answered 503 with Retry-After and a sentence (nothing of the driver's text); anything else goes
    on to the catch-all (a 500 with a sentence). A response already begun is left as it is."""

    def __init__(self, app: _Asgi) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as error:
            refusal = refusal_for(error)
            if refusal is None or started:
                raise
            log.warning(
                "%s %s answered %d: %s (%s)",
                scope.get("method"),
                scope.get("path"),
                refusal.http_status,
                refusal.message,
                type(error).__name__,
            )
            await error_response(refusal)(scope, receive, send)


# ---- JSON bodies ---------------------------------------------------------------------------------


def as_json(message: Message) -> dict[str, Any]:
    """Proto field names, enums by name, every field present: the HTTP APIs' shape."""
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


async def read_json_object(request: Request, *, what: str = "", empty_ok: bool = True) -> dict[str, Any]:
    """The body as a JSON object; an empty body is {} when `empty_ok`. `what` names the expected
    message in the refusal."""
    raw = await request.body()
    if not raw and empty_ok:
        return {}
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        raise InvalidArgument("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise InvalidArgument("the body must be a JSON object" + (f" (a {what})" if what else ""))
    return data


def parse_message(data: dict[str, Any], message: M) -> M:
    try:
        return ParseDict(data, message)
    except ParseError as error:
        raise InvalidArgument(f"not a valid {message.DESCRIPTOR.name}: {error}") from None


async def read_body(request: Request, message: M, *, empty_ok: bool = True, **path: Any) -> M:
    """The JSON body as `message`; `path` adds the route's parameters (None ones are left out)."""
    data = await read_json_object(request, what=message.DESCRIPTOR.name, empty_ok=empty_ok)
    data.update({key: value for key, value in path.items() if value is not None})
    return parse_message(data, message)


# ---- gRPC errors ---------------------------------------------------------------------------------


async def abort_with(context: grpc.aio.ServicerContext[Any, Any], error: KroniiError) -> NoReturn:
    await context.abort(
        getattr(grpc.StatusCode, error.grpc_status), error.message, retry_metadata(error.retry_after_secs)
    )
    raise AssertionError("abort returned")  # pragma: no cover


def _answering_errors(behaviour: Any, _streaming_in: bool, streaming_out: bool) -> Any:
    if streaming_out:

        async def stream_call(request: Any, context: Any) -> AsyncIterator[Any]:
            try:
                result = behaviour(request, context)
                if hasattr(result, "__aiter__"):
                    async for item in result:
                        yield item
                elif inspect.isawaitable(result):  # a behaviour that writes with context.write
                    await result
            except KroniiError as error:
                await abort_with(context, error)

        return stream_call

    async def call(request: Any, context: Any) -> Any:
        try:
            result = behaviour(request, context)
            return await result if inspect.isawaitable(result) else result
        except KroniiError as error:
            await abort_with(context, error)

    return call


class KroniiErrorInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc ships no stubs
    """A KroniiError a servicer raises ends the call with its gRPC status and sentence. Listed after
    GuardInterceptor, so the guard's INTERNAL is left for what no service meant to say."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return rewrapped(handler, _answering_errors)
