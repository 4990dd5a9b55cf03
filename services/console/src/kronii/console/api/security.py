"""The console's edge, in front of every route (after the shared same-uid check of kronii.edge.access,
which answers another local uid 403 before this runs):

- Host must be the console's own loopback name and port (127.0.0.1, localhost, [::1]): a DNS-rebound
  name is refused (421) before anything else is looked at.
- Origin, when sent, must be the console's own; Sec-Fetch-Site, when sent, must be same-origin or none
  (another page, even on another localhost port, is refused: 403).
- Every page, fragment and action needs the session cookie the one-time link set (else 401 saying to
  run `kronii console`); the open ones are /healthz, /readyz, /metrics, /openapi.json, /static/...,
  /login and the CLI's POST /console/link (which a browser cannot send: it needs a header a
  cross-site request may not carry, and refuses any request that has an Origin or Sec-Fetch-* header).
- Every POST, PUT, PATCH and DELETE carries the session's CSRF token (X-CSRF-Token header, or a
  `csrf_token` form field), compared in constant time, else 403; its body is at most `max_body` bytes,
  refused (413) as soon as it is known to be larger, before the rest is read.
- Every answer carries the security headers (CSP without inline script, no framing, no referrer, no
  sniffing, not cached); a refused state change is audited (`console.refused`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from fastapi import Request
from kronii.console.api.rendering import templates
from kronii.console.core.session import Session, SessionVerdict, same_token
from kronii.console.usecases.sign_in import SignIn
from kronii.edge.access import OPEN_HTTP_PATHS, Caller
from kronii.foundation.audit_trail import AuditTrail
from starlette.requests import cookie_parser

__all__ = [
    "COOKIE",
    "CSRF_HEADER",
    "LINK_HEADER",
    "ConsoleEdge",
    "EdgeState",
    "NavEntry",
    "person",
]

log = logging.getLogger(__name__)

COOKIE = "kronii_console"
CSRF_HEADER = "x-csrf-token"
LINK_HEADER = "x-kronii-console"
LINK_PATH = "/console/link"
_UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_SAFE_FETCH_SITES = frozenset({"same-origin", "none"})
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    # same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` with a plain
    # form's POST, which the Origin check must refuse; the console links to no other site anyway.
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_Asgi = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


@dataclass(frozen=True)
class NavEntry:
    slug: str
    title: str


@dataclass
class EdgeState:
    """What the edge needs once the console has started."""

    sign_in: SignIn
    record: AuditTrail
    nav: list[NavEntry] = field(default_factory=list)
    page_states: dict[str, Any] = field(default_factory=dict)
    on_refusal: Callable[[str], None] = lambda reason: None


class Refusal(Exception):
    def __init__(self, status: int, code: str, heading: str, reason: str, hint: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.code = code
        self.heading = heading
        self.reason = reason
        self.hint = hint


_RUN_CONSOLE = "Run `kronii console` in a terminal: it opens this page with a fresh login link."


def person(request: Request) -> str:
    """The actor of an audit row for what the person did through the console."""
    actor: str = getattr(request.state, "console_actor", "person")
    return actor


def _header(scope: _Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _own_hosts(scope: _Scope) -> frozenset[str]:
    """The loopback names and the address the console listens on, at its port: never a DNS name
    (a rebound one would point a foreign page at the console)."""
    host, port = scope.get("server") or ("127.0.0.1", 0)
    names = {*_LOOPBACK_NAMES, f"[{host}]" if ":" in str(host) else str(host)}
    return frozenset(f"{name}:{port}" for name in names)


def check_host_and_origin(scope: _Scope) -> None:
    """Host is ours (no DNS rebinding); Origin and Sec-Fetch-Site, when sent, say it is our own page."""
    host = (_header(scope, b"host") or "").lower()
    if host not in _own_hosts(scope):
        raise Refusal(
            421, "misdirected", "Wrong address",
            "this console answers only at its own address: http://127.0.0.1:<port> or http://localhost:<port>",
        )  # fmt: skip
    origin = _header(scope, b"origin")
    if origin is not None and origin.lower() != f"http://{host}":
        raise Refusal(
            403,
            "foreign_origin",
            "Refused",
            "the request came from another site's page, not from this console",
        )
    site = _header(scope, b"sec-fetch-site")
    if site is not None and site.lower() not in _SAFE_FETCH_SITES:
        raise Refusal(
            403, "foreign_site", "Refused", "the request came from another site's page, not from this console"
        )


def check_link_request(scope: _Scope) -> None:
    """The CLI's request for a login link: a header no cross-site request may carry, and nothing a
    browser adds (Origin, Sec-Fetch-*): a web page cannot ask for a link, even one on localhost."""
    if scope.get("method") != "POST" or (_header(scope, LINK_HEADER.encode()) or "") != "link":
        raise Refusal(403, "not_cli", "Refused", "a login link is given only to `kronii console`")
    if _header(scope, b"origin") is not None or _header(scope, b"sec-fetch-mode") is not None:
        raise Refusal(
            403, "not_cli", "Refused", "a login link is given only to `kronii console`, not to a web page"
        )


def _cookie(scope: _Scope) -> str | None:
    raw = _header(scope, b"cookie")
    return cookie_parser(raw).get(COOKIE) if raw else None


def _is_open(path: str) -> bool:
    # /openapi.json describes the routes, never the person's data (the suite reads every service's).
    return path in OPEN_HTTP_PATHS or path.startswith("/static/") or path in ("/login", "/openapi.json")


def _declared_length(scope: _Scope) -> int | None:
    value = _header(scope, b"content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise Refusal(
            400, "bad_length", "Refused", "the Content-Length header is not a whole number"
        ) from None


async def read_small_body(scope: _Scope, receive: _Receive, limit: int) -> tuple[bytes, bool]:
    """The whole body, refused (413) as soon as it is known to be over `limit`; (body, disconnected)."""
    too_large = Refusal(
        413, "too_large", "Too large", f"the request body is larger than the console allows ({limit} bytes)"
    )
    declared = _declared_length(scope)
    if declared is not None and declared > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _form_token(scope: _Scope, body: bytes) -> str | None:
    kind = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return None
    values = parse_qs(body.decode("latin-1"), max_num_fields=200).get("csrf_token")
    return values[0] if values else None


def check_csrf(scope: _Scope, session: Session, body: bytes) -> None:
    given = _header(scope, CSRF_HEADER.encode()) or _form_token(scope, body)
    if not same_token(session.csrf_token, given):
        reason = (
            "the CSRF token is missing" if not given else "the CSRF token does not belong to this session"
        )
        raise Refusal(403, "csrf", "Refused", f"{reason}: reload the page and try again")


def _replay(body: bytes, receive: _Receive, disconnected: bool) -> _Receive:
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> _Message:
        if pending:
            return pending.pop()
        if disconnected:
            return {"type": "http.disconnect"}
        return await receive()

    return replay


def _with_headers(send: _Send, path: str) -> _Send:
    static = path.startswith("/static/")

    async def secured(message: _Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v) for k, v in message.get("headers", []) if k.lower() not in dict(SECURITY_HEADERS)
            ]
            headers.extend(SECURITY_HEADERS)
            if not any(key.lower() == b"cache-control" for key, _ in headers):
                headers.append((b"cache-control", b"max-age=3600" if static else b"no-store"))
            message = {**message, "headers": headers}
        await send(message)

    return secured


async def answer_refusal(send: _Send, refusal: Refusal) -> None:
    body = (
        templates.get_template("refused.html")
        .render(heading=refusal.heading, reason=refusal.reason, hint=refusal.hint)
        .encode()
    )
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"x-kronii-refusal", refusal.code.encode()),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ConsoleEdge:
    """Pure ASGI middleware: the checks above, then the route with the session in `request.state`."""

    def __init__(self, app: _Asgi, *, state: Callable[[], EdgeState | None], max_body: int) -> None:
        self.app = app
        self.state = state
        self.max_body = max_body

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_HTTP_PATHS:
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        send = _with_headers(send, path)
        state = self.state()
        try:
            check_host_and_origin(scope)
            if state is None:
                raise Refusal(
                    503, "starting", "Starting", "the console is still starting; reload in a moment"
                )
            receive = await self._admit(scope, receive, state, path)
        except Refusal as refusal:
            await self._refused(scope, state, refusal)
            await answer_refusal(send, refusal)
            return
        await self.app(scope, receive, send)

    async def _admit(self, scope: _Scope, receive: _Receive, state: EdgeState, path: str) -> _Receive:
        """The checks after Host and Origin; the receive channel the route reads (its body replayed)."""
        scope_state = scope.setdefault("state", {})
        scope_state["console_nav"] = state.nav
        scope_state["console_pages"] = state.page_states
        caller = scope_state.get("caller")
        scope_state["console_actor"] = f"person:{caller.actor}" if isinstance(caller, Caller) else "person"
        if path == LINK_PATH:
            check_link_request(scope)
            return receive
        if _is_open(path):
            return receive
        verdict, session = await state.sign_in.current(_cookie(scope))
        if session is None:
            expired = verdict is SessionVerdict.EXPIRED
            reason = "your console session expired" if expired else "this page needs the console's session"
            raise Refusal(401, "no_session", "Sign in", reason, _RUN_CONSOLE)
        scope_state["console_session"] = session
        if scope.get("method") not in _UNSAFE_METHODS:
            return receive
        body, disconnected = await read_small_body(scope, receive, self.max_body)
        check_csrf(scope, session, body)
        return _replay(body, receive, disconnected)

    async def _refused(self, scope: _Scope, state: EdgeState | None, refusal: Refusal) -> None:
        if state is None:
            return
        state.on_refusal(refusal.code)
        if scope.get("method") in _UNSAFE_METHODS:
            caller = scope.get("state", {}).get("caller")
            actor = f"person:{caller.actor}" if isinstance(caller, Caller) else "unknown"
            try:
                await state.record(
                    actor=actor,
                    action="console.refused",
                    subject=str(scope.get("path", ""))[:200],
                    outcome=refusal.code,
                    status=refusal.status,
                )
            except Exception:
                log.exception("the audit row of a refused console request was not written")
