"""Server-rendered HTML: `render(request, "agents.html", {...})` fills a Jinja2 template of
api/templates (autoescaped) and puts in what every page shares: the nav, the session's CSRF token
(`csrf_token`, and `csrf_field()` for a plain form) and the active page. Each page's template
`{% extends "base.html" %}` and fills the blocks `title` and `content`; a fragment template (for htmx)
extends nothing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

__all__ = ["STATIC_DIR", "TEMPLATES_DIR", "render", "render_text", "templates"]

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"

templates = Environment(
    loader=FileSystemLoader(TEMPLATES_DIR),
    autoescape=select_autoescape(("html", "svg", "xml"), default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)


def _shared(request: Request) -> dict[str, Any]:
    state = request.state
    session = getattr(state, "console_session", None)
    token = session.csrf_token if session is not None else ""
    path = request.url.path
    return {
        "request": request,
        "nav": getattr(state, "console_nav", ()),
        "active": path.strip("/").split("/", 1)[0] or "today",
        "csrf_token": token,
        "csrf_field": lambda: Markup(  # noqa: S704 - the token is escaped
            f'<input type="hidden" name="csrf_token" value="{escape(token)}">'
        ),
    }


def render_text(request: Request, template: str, context: Mapping[str, Any] | None = None) -> str:
    return templates.get_template(template).render({**_shared(request), **(context or {})})


def render(
    request: Request, template: str, context: Mapping[str, Any] | None = None, *, status_code: int = 200
) -> HTMLResponse:
    """The template filled in, as an HTML response."""
    return HTMLResponse(render_text(request, template, context), status_code=status_code)
