"""The Agents page: every runtime with its live state, its recent triggers and their true outcomes
(the detail one click away), the deferred queue, and the person's trigger / pause / resume / force,
each a plain form POST with the session's CSRF token (the answer is the page again, with what the
supervisor said on top, and a 4xx or 503 when it refused or was silent). The runtimes, the queue and
the outcomes are a fragment re-fetched on the `agents` live events, and every few seconds besides.
An agent's pane is read-only and redacted by the supervisor before it leaves it."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.rendering import render
from kronii.console.api.security import person
from kronii.console.compose.agents import AgentsState, build
from kronii.console.core.agents import MAX_PROMPT_CHARS, AgentsView
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_agents import PANE_LINES
from kronii.edge.limits import PathId
from kronii.foundation.errors import KroniiError

__all__ = ["PAGE", "error_status", "form_fields", "local_time"]

SLUG = "agents"
# A form field longer than this is cut before it is looked at (the body limit is the console's).
_FIELD_CHARS = MAX_PROMPT_CHARS + 100


def error_status(error: KroniiError) -> int:
    """The console's status for a refusal: another service's own 4xx passes through, silence is 503."""
    if isinstance(error, ServiceNotAnswering) and error.status is not None and error.status < 500:
        return error.status
    return error.http_status if error.http_status < 500 else 503


async def form_fields(request: Request) -> dict[str, str]:
    """A url-encoded form's first value of each field (the body limit was checked before)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {key: values[0][:_FIELD_CHARS] for key, values in parse_qs(body, max_num_fields=50).items()}


def local_time(stamp: float | None) -> str:
    if not stamp:
        return ""
    at = datetime.fromtimestamp(stamp).astimezone()
    return (
        at.strftime("%H:%M:%S")
        if at.date() == datetime.now().astimezone().date()
        else at.strftime("%Y-%m-%d %H:%M")
    )


def _state(request: Request) -> AgentsState:
    state: AgentsState = page_state(request, SLUG)
    return state


async def _view(page: AgentsState) -> tuple[AgentsView | None, str]:
    try:
        return await page.show.view(), ""
    except KroniiError as error:
        return None, str(error)


async def _page(
    request: Request, said: dict[str, Any] | None = None, status: int = 200, chosen: str = ""
) -> HTMLResponse:
    view, problem = await _view(_state(request))
    context = {
        "view": view,
        "problem": problem,
        "said": said,
        "time": local_time,
        "max_prompt": MAX_PROMPT_CHARS,
        "chosen": chosen,
    }
    return render(request, "agents.html", context, status_code=status)


async def _act(request: Request, action: str, run: Any, chosen: str = "") -> HTMLResponse:
    """Run one steer; the page again with its outcome (or the refusal's sentence and status), the
    agent the person chose still chosen."""
    try:
        done = await run
    except KroniiError as error:
        said = {"ok": False, "action": action, "sentence": str(error)}
        return await _page(request, said, error_status(error), chosen)
    return await _page(request, {"ok": True, "action": action, "answer": done}, chosen=chosen)


router = APIRouter()


@router.get("/agents", response_class=HTMLResponse)
async def agents_page(request: Request) -> HTMLResponse:
    return await _page(request)


@router.get("/agents/fragment", response_class=HTMLResponse)
async def agents_fragment(request: Request) -> HTMLResponse:
    view, problem = await _view(_state(request))
    return render(request, "agents_live.html", {"view": view, "problem": problem, "time": local_time})


@router.get("/agents/pane/{runtime_id}", response_class=HTMLResponse)
async def agents_pane(request: Request, runtime_id: PathId, lines: int = PANE_LINES) -> HTMLResponse:
    """The pane's last lines as the supervisor gives them (redacted): a fragment for htmx (always
    swapped in, a refusal as its sentence), else a page of its own with the refusal's status."""
    lines = max(1, min(lines, 500))
    status, problem, shown = 200, "", []
    try:
        shown = await _state(request).show.pane(runtime_id, lines)
    except KroniiError as error:
        status, problem = error_status(error), str(error)
    context = {"runtime_id": runtime_id, "lines": shown, "problem": problem}
    if request.headers.get("hx-request"):
        return render(request, "agents_pane.html", context)
    return render(request, "agents_pane_page.html", context, status_code=status)


@router.post("/agents/trigger", response_class=HTMLResponse)
async def agents_trigger(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    agent, _, workspace = form.get("agent", "").partition("@")
    run = _state(request).steer.trigger(person(request), workspace, agent, form.get("prompt", ""))
    return await _act(request, "trigger", run, form.get("agent", ""))


@router.post("/agents/pause", response_class=HTMLResponse)
async def agents_pause(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    run = _state(request).steer.pause(person(request), form.get("runtime_id", ""), form.get("reason", ""))
    return await _act(request, "pause", run)


@router.post("/agents/resume", response_class=HTMLResponse)
async def agents_resume(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    run = _state(request).steer.resume(person(request), form.get("runtime_id", ""), form.get("reason", ""))
    return await _act(request, "resume", run)


@router.post("/agents/force", response_class=HTMLResponse)
async def agents_force(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    run = _state(request).steer.force(person(request), form.get("trigger_id", ""), form.get("reason", ""))
    return await _act(request, "force", run)


PAGE = Page(slug=SLUG, title="Agents", order=20, router=router, build=build)
