"""OpenAPI documents that tell the truth about the common layers every route sits behind.

`install_openapi` post-processes FastAPI's document once: the `bearerToken` security scheme on every
private route, and the error answers the common layers give (400 and 413 from the input limits,
401 and 403 from the access layer, 422 from route declarations, 503 when PostgreSQL or Redis is
down), all with the `Error` body. Routes declare only what is theirs (404, 409, ...) with
`errors(...)`, and a body read by hand with `json_body(...)` or `proto_body(...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fastapi import FastAPI
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

__all__ = ["ERROR_SCHEMA", "errors", "install_openapi", "json_body", "message_schema", "proto_body"]

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["code", "detail"],
    "properties": {
        "code": {
            "type": "string",
            "description": "the error's code (kronii.foundation.errors): what a client branches on",
        },
        "detail": {"type": "string", "description": "what is wrong, as one sentence"},
        "field": {"type": "string", "description": "the request field at fault, when there is one"},
    },
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}

_MEANING = {
    400: "the request is malformed: a bad argument, a control character, JSON nested too deeply",
    401: "a token is required (the caller is not a local process of this user), or it was refused",
    403: "this service answers only its own user's processes, or the token lacks the right",
    404: "nothing has this id",
    409: "the request conflicts with the current state",
    413: "the body is larger than this route's limit (1 MB unless the route says otherwise)",
    422: "a field does not match the route's declaration",
    429: "too many failed calls from this caller: wait and retry",
    503: "a dependency (PostgreSQL, Redis, ...) is unavailable: retry after Retry-After seconds",
}

_NOT_READY = {
    "description": "not ready: a required dependency is down (the body says which)",
    "content": {"application/json": {"schema": {"type": "object", "required": ["ready"]}}},
}

_PROMETHEUS = {
    "description": "the Prometheus text exposition format",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}

_BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": (
        "Processes of the user the service runs as are let in by their uid (the kernel says who owns "
        "a loopback socket) and need no token; other local users get 403 on every private route; "
        "callers whose uid cannot be known (another host, a container) need Authorization: Bearer <token>."
    ),
}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """Route-specific error answers, for a route decorator's `responses=`."""
    return {code: {"description": _MEANING.get(code, "an error")} for code in codes}


def json_body(schema: Mapping[str, Any], *, required: bool = True) -> dict[str, Any]:
    """`openapi_extra` for a route that reads its JSON body itself."""
    content = {"application/json": {"schema": dict(schema)}}
    return {"requestBody": {"required": required, "content": content}}


def proto_body(message: type[Message], *, required: bool = False) -> dict[str, Any]:
    """`openapi_extra` for a body parsed with ParseDict into `message` (proto field names)."""
    return json_body(message_schema(message.DESCRIPTOR), required=required)


# ---- protobuf messages as JSON Schema (what ParseDict takes) -----------------------------------

_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_WELL_KNOWN: dict[str, dict[str, Any]] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]{1,11}(\.[0-9]{1,9})?s$"},
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": {},
}


def _scalar_schema(field: Any, depth: int) -> dict[str, Any]:
    kind = field.type
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return {"type": "integer", "minimum": low, "maximum": high}
    if kind == FieldDescriptor.TYPE_STRING:
        return {"type": "string"}
    if kind == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if kind == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "format": "byte", "description": "base64"}
    if kind == FieldDescriptor.TYPE_FLOAT:
        return {"type": "number", "minimum": -3.4e38, "maximum": 3.4e38}
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return {"type": "number"}
    if kind == FieldDescriptor.TYPE_ENUM:
        return {"type": "string", "enum": [value.name for value in field.enum_type.values]}
    return message_schema(field.message_type, depth + 1)


def _field_schema(field: Any, depth: int) -> dict[str, Any]:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        value = _scalar_schema(message.fields_by_name["value"], depth)
        return {"type": "object", "additionalProperties": value}
    schema = _scalar_schema(field, depth)
    if field.is_repeated:
        return {"type": "array", "items": schema}
    return schema


def message_schema(descriptor: Any, depth: int = 0) -> dict[str, Any]:
    """The JSON object ParseDict accepts for `descriptor` (unknown fields are refused)."""
    if descriptor.full_name in _WELL_KNOWN:
        return dict(_WELL_KNOWN[descriptor.full_name])
    if depth > 8:
        return {"type": "object"}
    properties = {field.name: _field_schema(field, depth) for field in descriptor.fields}
    return {"type": "object", "properties": properties, "additionalProperties": False}


# ---- the post-processing -----------------------------------------------------------------------

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def _error_answer(code: int, existing: Mapping[str, Any] | None) -> dict[str, Any]:
    description = (existing or {}).get("description") or _MEANING.get(code, "an error")
    if code == 422 or description == "Validation Error":
        description = _MEANING[422]
    return {"description": description, "content": {"application/json": {"schema": _ERROR_REF}}}


def _own_schema(answer: Mapping[str, Any]) -> bool:
    """Whether a route declared a body of its own for this answer (not FastAPI's defaults)."""
    for media in (answer.get("content") or {}).values():
        schema = media.get("schema") or {}
        if schema and "HTTPValidationError" not in str(schema.get("$ref", "")):
            return True
    return False


def _codes(operation: Mapping[str, Any], *, open_route: bool, token_free: bool) -> list[int]:
    codes = [400, 413]
    if not open_route:
        codes += [403, 503] if token_free else [401, 403, 503]
    if operation.get("parameters") or operation.get("requestBody"):
        codes.append(422)
    return codes


def _fix_operation(operation: dict[str, Any], *, open_route: bool, token_free: bool) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    for number in _codes(operation, open_route=open_route, token_free=token_free):
        responses.setdefault(str(number), {})
    for code, answer in list(responses.items()):
        if code.isdigit() and int(code) >= 400 and not _own_schema(answer):
            responses[code] = _error_answer(int(code), answer)
    if not open_route and not token_free:
        operation["security"] = [{"bearerToken": []}]
    elif not open_route:
        operation["security"] = []


def truthful(
    document: dict[str, Any], *, open_paths: Iterable[str], token_free: Iterable[str] = ()
) -> dict[str, Any]:
    """`document` with the common layers' answers and the security scheme declared (in place)."""
    opened, free = set(open_paths), set(token_free)
    for path, item in document.get("paths", {}).items():
        for method in _METHODS:
            if method in item:
                _fix_operation(item[method], open_route=path in opened, token_free=path in free)
    paths = document.get("paths", {})
    if "get" in paths.get("/readyz", {}):
        paths["/readyz"]["get"]["responses"]["503"] = _NOT_READY
    if "get" in paths.get("/metrics", {}):
        paths["/metrics"]["get"]["responses"]["200"] = _PROMETHEUS
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    components.setdefault("securitySchemes", {})["bearerToken"] = _BEARER
    return document


def install_openapi(app: FastAPI, *, open_paths: Iterable[str], token_free: Iterable[str] = ()) -> None:
    """Make `app.openapi()` return the truthful document (built once, on first request)."""
    build: Callable[[], dict[str, Any]] = app.openapi
    opened, free = frozenset(open_paths), frozenset(token_free)

    def openapi() -> dict[str, Any]:
        if not getattr(app.state, "openapi_truthful", False):
            truthful(build(), open_paths=opened, token_free=free)
            app.state.openapi_truthful = True
        return build()

    app.openapi = openapi  # type: ignore[method-assign]
