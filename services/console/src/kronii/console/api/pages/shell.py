"""The Shell page: the critic's records (redacted by the critic), searched by meaning or by text, only
failures if asked, each with the hint it raised and its cluster; the failures like one record; the
clusters of near-duplicate failures. Read-only: nothing here changes state.

    GET /shell?q=&mode=meaning|text&failed=1     the search (an empty one lists the latest)
    GET /shell/similar/{record_id}               the failures like that record
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.pages.form_helpers import status_of
from kronii.console.api.rendering import render
from kronii.console.compose.shell import ShellState, build
from kronii.console.core.shell import MAX_QUERY_CHARS
from kronii.console.usecases.search_shell import ShellView
from kronii.foundation.errors import KroniiError

__all__ = ["PAGE"]

SLUG = "shell"


def _state(request: Request) -> ShellState:
    state: ShellState = page_state(request, SLUG)
    return state


router = APIRouter()


def _render(request: Request, view: ShellView, problem: str = "", status: int = 200) -> HTMLResponse:
    zone = _state(request).zone

    def when(at: float) -> str:
        return datetime.fromtimestamp(at, zone).strftime("%Y-%m-%d %H:%M:%S") if at else ""

    context = {"view": view, "problem": problem, "when": when, "max_chars": MAX_QUERY_CHARS}
    return render(request, "shell.html", context, status_code=status)


@router.get("/shell", response_class=HTMLResponse)
async def shell_page(request: Request, q: str = "", mode: str = "meaning", failed: str = "") -> HTMLResponse:
    search = _state(request).search
    try:
        view = await search.search(q[: MAX_QUERY_CHARS + 1], mode[:16], failed == "1")
    except KroniiError as error:
        return _render(request, await search.search("", "meaning", False), error.message, status_of(error))
    return _render(request, view)


@router.get("/shell/similar/{record_id}", response_class=HTMLResponse)
async def similar(request: Request, record_id: str) -> HTMLResponse:
    search = _state(request).search
    return _render(request, await search.similar(record_id[:128]))


PAGE = Page(slug=SLUG, title="Shell", order=50, router=router, build=build)
