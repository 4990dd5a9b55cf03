"""HTTP: the critic's routes under /v1/critic (events, search, similar, export, doctor, mute). Bodies
and answers are critic.proto's messages in JSON; search and similar take the same fields as query
parameters on GET. Each field is read on its own, so a refusal names the field at fault."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import asdict
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import Message
from kronii.critic.api.convert import (
    doctor_message,
    event_from,
    export_args_from,
    mute_message,
    mute_seconds_from,
    record_message,
    reported_message,
    search_message,
    search_query_from,
    similar_message,
    similar_query_from,
    wall_clock_ms,
)
from kronii.critic.core.model import InvocationRecord
from kronii.critic.usecases.operations import CriticOperations
from kronii.critic.v1 import critic_pb2 as pb
from kronii.edge.api_edge import as_json, read_json_object
from kronii.edge.openapi import errors, message_schema, proto_body
from kronii.foundation.errors import InvalidArgument

__all__ = ["critic_router", "fields_message", "query_message"]

M = TypeVar("M", bound=Message)

_INTEGERS = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SINT64,
}
_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}
_SIMILAR_ERRORS = errors(400, 404)


# ---- bodies and query strings, field by field ---------------------------------------------------


def _expected(field: Any) -> str:  # protobuf's descriptor types differ between its backends
    if field.message_type is not None and field.message_type.full_name == "google.protobuf.Timestamp":
        return "an RFC 3339 time such as 2025-10-01T12:00:00Z"
    if field.type in _INTEGERS:
        unsigned = field.type in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64)
        return "a whole number of at least 0" if unsigned else "a whole number"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true or false"
    if field.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return "a number"
    return "a string"


def fields_message(data: Mapping[str, Any], message: M) -> M:
    """``data`` (a JSON object) into ``message`` one field at a time: an unknown or malformed field
    is an InvalidArgument that names it."""
    fields = message.DESCRIPTOR.fields_by_name
    for name, value in data.items():
        field = fields.get(name)
        if field is None:
            known = ", ".join(fields)
            raise InvalidArgument(
                f"{name} is not a field of {message.DESCRIPTOR.name} (its fields: {known})", field=name
            )
        try:
            ParseDict({name: value}, message)
        except ParseError:
            raise InvalidArgument(f"{name} must be {_expected(field)}", field=name) from None
    return message


def query_message(params: Mapping[str, str], message: M) -> M:
    """A query string into ``message``: the same fields as the JSON body, booleans as true/false."""
    fields = message.DESCRIPTOR.fields_by_name
    data: dict[str, Any] = {}
    for name, text in params.items():
        field = fields.get(name)
        if field is not None and field.type == FieldDescriptor.TYPE_BOOL:
            if text.lower() not in _TRUE | _FALSE:
                raise InvalidArgument(f"{name} must be true or false", field=name)
            data[name] = text.lower() in _TRUE
        else:
            data[name] = text
    return fields_message(data, message)


async def _body(request: Request, message: M, *, empty_ok: bool = True) -> M:
    data = await read_json_object(request, what=message.DESCRIPTOR.name, empty_ok=empty_ok)
    return fields_message(data, message)


def _query_parameters(message: type[Message]) -> dict[str, Any]:
    """`openapi_extra` for a GET that takes ``message``'s fields as query parameters."""
    properties: dict[str, Any] = message_schema(message.DESCRIPTOR)["properties"]
    return {
        "parameters": [
            {"name": name, "in": "query", "required": False, "schema": schema}
            for name, schema in properties.items()
        ]
    }


# ---- the routes ----------------------------------------------------------------------------------


def critic_router(
    operations: Callable[[], CriticOperations], clock: Callable[[], int] = wall_clock_ms
) -> APIRouter:
    """``operations`` gives the critic's operations once the service has started; ``clock`` is now in
    ms since the epoch (an event without `started` is stamped with it)."""
    router = APIRouter(prefix="/v1/critic", tags=["critic"])

    @router.post("/events", openapi_extra=proto_body(pb.InvocationEvent, required=True))
    async def report_event(request: Request) -> dict[str, Any]:
        """One command from `kronii run` or a supervisor pane: kept redacted; the hint, if any."""
        event = event_from(await _body(request, pb.InvocationEvent(), empty_ok=False), clock())
        return as_json(reported_message(await operations().report(event)))

    async def search(message: pb.SearchRequest) -> dict[str, Any]:
        return as_json(search_message(await operations().search(search_query_from(message))))

    @router.get("/search", openapi_extra=_query_parameters(pb.SearchRequest))
    async def search_by_query(request: Request) -> dict[str, Any]:
        """Records like TEXT (semantic when the model is there, else keywords), best first."""
        return await search(query_message(request.query_params, pb.SearchRequest()))

    @router.post("/search", openapi_extra=proto_body(pb.SearchRequest))
    async def search_by_body(request: Request) -> dict[str, Any]:
        """The same search with a SearchRequest body."""
        return await search(await _body(request, pb.SearchRequest()))

    async def similar(message: pb.SimilarRequest) -> dict[str, Any]:
        return as_json(similar_message(await operations().similar(similar_query_from(message))))

    @router.get("/similar", openapi_extra=_query_parameters(pb.SimilarRequest), responses=_SIMILAR_ERRORS)
    async def similar_by_query(request: Request) -> dict[str, Any]:
        """Past failures similar to one record, or to the last failing command of a session or cwd.
        400: a malformed field (a record_id that is not an id, such as a path); 404: no record has
        that id, or no failing command is remembered yet."""
        return await similar(query_message(request.query_params, pb.SimilarRequest()))

    @router.post("/similar", openapi_extra=proto_body(pb.SimilarRequest), responses=_SIMILAR_ERRORS)
    async def similar_by_body(request: Request) -> dict[str, Any]:
        """The same with a SimilarRequest body (400 and 404 as for GET)."""
        return await similar(await _body(request, pb.SimilarRequest()))

    _export_route(router, operations)
    _state_routes(router, operations)
    return router


def _export_route(router: APIRouter, operations: Callable[[], CriticOperations]) -> None:
    @router.get(
        "/export",
        openapi_extra=_query_parameters(pb.ExportRequest),
        response_class=StreamingResponse,
        responses={200: {"content": {"application/x-ndjson": {}}}},
    )
    async def export(request: Request) -> StreamingResponse:
        """The kept records from `since`, oldest first, one InvocationRecord JSON per line; `redact`
        (default true) masks paths and personal data too."""
        query, embeddings = export_args_from(query_message(request.query_params, pb.ExportRequest()))
        records = operations().export(query)
        # The first record is fetched before the answer starts, so a refusal is still a status.
        first = await anext(records, None)

        def line(record: InvocationRecord) -> bytes:
            return (json.dumps(as_json(record_message(record, embeddings=embeddings))) + "\n").encode()

        async def lines() -> AsyncIterator[bytes]:
            if first is None:
                return
            yield line(first)
            async for record in records:
                yield line(record)

        return StreamingResponse(lines(), media_type="application/x-ndjson")


def _state_routes(router: APIRouter, operations: Callable[[], CriticOperations]) -> None:
    @router.get("/doctor")
    async def doctor() -> dict[str, Any]:
        """Hooks seen per shell, the spool and hint directory, the model, the counts, the queue."""
        return as_json(doctor_message(await operations().doctor()))

    @router.get("/clusters")
    async def clusters() -> dict[str, Any]:
        """The nightly clusters of near-duplicate failures kept in the retention window, newest day
        first: each with its day, its first command and error (redacted) and its records' ids."""
        return {"clusters": [asdict(group) for group in operations().clusters()]}

    @router.post("/mute", openapi_extra=proto_body(pb.MuteRequest, required=True))
    async def mute(request: Request) -> dict[str, Any]:
        """No hints for `seconds` (0 unmutes); the commands are still remembered."""
        data = await read_json_object(request, what="MuteRequest", empty_ok=False)
        if "seconds" not in data:
            raise InvalidArgument("seconds is required (0 unmutes)", field="seconds")
        seconds = mute_seconds_from(fields_message(data, pb.MuteRequest()))
        return as_json(mute_message(await operations().mute(seconds)))
