"""Input limits for every service's HTTP API, in one place, before any route runs.

- The body: at most 1 MB (a route may declare another limit with `body_limit`); a larger declared
  Content-Length is refused unread, and a body without one is counted as it streams.
- JSON bodies: at most 32 levels of nesting. (A NUL inside a JSON string is left to the route: the
  supervisor cleans prompts of control characters; where one reaches PostgreSQL, the database's
  refusal is answered as a 400 below.)
- The path and the query string: no control character and no bidirectional-formatting character
  (they hide what an id really is in logs and terminals).
- An exception a request's content causes (too deep, out of range, not storable) is a 400 with a
  sentence, and any other one a 500 with a sentence: never a bare "Internal Server Error".

Every refusal is JSON `{"code": ..., "detail": "<one sentence>"}`; 422s from route declarations are too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote_plus

from fastapi import FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kronii.foundation.errors import code_for_status
from starlette.routing import Match

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "ID_MAX_CHARS",
    "MAX_JSON_DEPTH",
    "LimitsMiddleware",
    "PathId",
    "body_limit",
    "install_limits",
    "json_depth_exceeds",
    "unsafe_character",
    "validation_sentence",
]

log = logging.getLogger(__name__)

DEFAULT_BODY_LIMIT = 1024 * 1024
MAX_JSON_DEPTH = 32
_LIMIT_ATTRIBUTE = "__kronii_body_limit__"

# C0 and C1 controls, DEL, and the Unicode bidirectional formatting characters.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_Asgi = Callable[[_Scope, _Receive, _Send], Awaitable[None]]
F = TypeVar("F", bound=Callable[..., Any])


def body_limit(max_bytes: int) -> Callable[[F], F]:
    """Give one route a body limit other than DEFAULT_BODY_LIMIT (put it under the route decorator)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, _LIMIT_ATTRIBUTE, max_bytes)
        return endpoint

    return mark


def unsafe_character(text: str) -> str | None:
    """The first control or bidirectional-formatting character in `text`, if any."""
    found = _UNSAFE.search(text)
    return found.group() if found else None


def json_depth_exceeds(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON text nests arrays and objects deeper than `limit` (strings are skipped)."""
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return True
    return False


def _describe(character: str) -> str:
    return f"U+{ord(character):04X}"


class _Refusal(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _route_limit(scope: _Scope, default: int) -> int:
    """The body limit of the route this request will reach (routing is repeated: it is cheap)."""
    router = getattr(scope.get("app"), "router", None)
    for route in getattr(router, "routes", ()):
        match, child = route.matches(scope)
        if match is Match.FULL:
            return int(getattr(child.get("endpoint"), _LIMIT_ATTRIBUTE, default))
    return default


def _declared_length(scope: _Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                raise _Refusal(400, "the Content-Length header is not a whole number") from None
    return None


def _check_address(scope: _Scope) -> None:
    bad = unsafe_character(scope.get("path", ""))
    if bad is not None:
        raise _Refusal(
            400, f"the path contains a control or bidirectional-formatting character ({_describe(bad)})"
        )
    query = unquote_plus(scope.get("query_string", b"").decode("latin-1"), errors="replace")
    bad = unsafe_character(query)
    if bad is not None:
        raise _Refusal(
            400,
            f"the query string contains a control or bidirectional-formatting character ({_describe(bad)})",
        )


def _check_json(body: bytes, depth: int) -> None:
    if body.lstrip()[:1] not in (b"{", b"["):
        return
    if json_depth_exceeds(body, depth):
        raise _Refusal(400, f"the JSON body is nested more than {depth} levels deep")


def _input_error_sentence(error: BaseException) -> str | None:
    """The sentence for an exception the request's content caused; None for any other."""
    if isinstance(error, RecursionError):
        return "the request is nested too deeply to read"
    # SQLAlchemy's and asyncpg's DataError: PostgreSQL's class 22, data exceptions.
    if any(kind.__name__ == "DataError" for kind in type(error).__mro__):
        return "a value in the request cannot be stored: it is out of range or holds a character the database refuses"
    if isinstance(error, ValueError | OverflowError | UnicodeError):
        return "a value in the request cannot be read: it is out of range or malformed"
    return None


async def _answer(send: _Send, status: int, detail: str) -> None:
    body = json.dumps({"code": code_for_status(status), "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class LimitsMiddleware:
    """Pure ASGI: the body is read (up to its limit) and checked before the route sees it."""

    def __init__(
        self, app: _Asgi, *, max_body: int = DEFAULT_BODY_LIMIT, max_depth: int = MAX_JSON_DEPTH
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.max_depth = max_depth

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            _check_address(scope)
            limit = _route_limit(scope, self.max_body)
            declared = _declared_length(scope)
            if declared is not None and declared > limit:
                raise _Refusal(413, f"the body is larger than this route's limit of {limit} bytes")
            first, disconnected = await self._read_body(receive, limit)
            _check_json(first["body"], self.max_depth)
        except _Refusal as refusal:
            await _answer(send, refusal.status, refusal.detail)
            return
        await self._run(scope, _replay(first, receive, disconnected), send)

    async def _read_body(self, receive: _Receive, limit: int) -> tuple[_Message, bool]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}, True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _Refusal(413, f"the body is larger than this route's limit of {limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}, False

    async def _run(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        started = False

        async def tracking_send(message: _Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as error:
            if started:
                raise
            sentence = _input_error_sentence(error)
            if sentence is not None:
                log.warning(
                    "refused %s %s: %s", scope.get("method"), scope.get("path"), sentence, exc_info=True
                )
                await _answer(send, 400, sentence)
                return
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            await _answer(send, 500, "the service failed on this request; its log has the details")


def _replay(first: _Message, receive: _Receive, disconnected: bool) -> _Receive:
    """The buffered body first, then the real channel (a streaming route waits on it for disconnect)."""
    pending: list[_Message] = [first]

    async def replay() -> _Message:
        if pending:
            return pending.pop()
        if disconnected:
            return {"type": "http.disconnect"}
        return await receive()

    return replay


# ---- 422s as a sentence -------------------------------------------------------------------------

_PLACES = {"body": "the body field", "query": "the query parameter", "path": "the path parameter",
           "header": "the header", "cookie": "the cookie"}  # fmt: skip


def validation_sentence(error: RequestValidationError) -> str:
    """The first problem a route's declarations found, as one sentence."""
    problems = list(error.errors())
    if not problems:
        return "the request does not match this route's declaration"
    first = problems[0]
    location = [str(part) for part in first.get("loc", ())]
    place = _PLACES.get(location[0], "the value") if location else "the value"
    name = ".".join(location[1:])
    message = str(first.get("msg", "is not valid")).rstrip(".")
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    if not name:
        return f"the body is not valid: {message[:1].lower()}{message[1:]}"
    return f"{place} {name!r} is not valid: {message[:1].lower()}{message[1:]}"


async def _validation_answer(request: Request, error: Exception) -> JSONResponse:
    """A bad query or path argument is a 400 (as the routes' own checks answer); a body field, 422."""
    assert isinstance(error, RequestValidationError)
    problems = list(error.errors())
    in_body = not problems or (problems[0].get("loc") or ("body",))[0] == "body"
    status = 422 if in_body else 400
    return JSONResponse(
        {"code": code_for_status(status), "detail": validation_sentence(error)}, status_code=status
    )


def install_limits(
    app: FastAPI, *, max_body: int = DEFAULT_BODY_LIMIT, max_depth: int = MAX_JSON_DEPTH
) -> None:
    """Add the limits to `app` (call before the access middleware is added, so they sit inside it)."""
    app.add_middleware(LimitsMiddleware, max_body=max_body, max_depth=max_depth)
    app.add_exception_handler(RequestValidationError, _validation_answer)


# ---- declarations routes share ------------------------------------------------------------------

ID_MAX_CHARS = 256
# An id in a path: long enough for every kronii id, short enough not to be a payload.
PathId = Annotated[str, Path(min_length=1, max_length=ID_MAX_CHARS)]
