"""The Control page: who holds the desktop now and the time its lease has left, the person's Wait /
Interrupt / Stop (what `kronii control` asks the input broker; Stop revokes a live lease, so the
agent's next key is refused), and the vision plans waiting for the person's yes with their screen as
the plan saw it (the boxes of its targets and of every element a flagged name matched, in the redacted
frame's pixels; the engine's redacted window title) and flagged rows, with Approve / Deny. Each is a
plain form POST with the session's CSRF token; the state is a fragment re-fetched on the `control`
live events (the broker repeats its state every 5 s) and every few seconds besides.

An approved plan acts only while the person has granted the desktop to the vision engine, so Grant
("Let vision use the desktop for 2 minutes") sits with each waiting plan and in the desktop box while
the desktop is the person's, and Renew gives the agent that holds it more time: both go to the
broker's local socket as `kronii control grant|renew` do, proven by polkit for the console's process."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.pages.agents import error_status, form_fields, local_time
from kronii.console.api.rendering import render
from kronii.console.api.security import person
from kronii.console.compose.control import ControlState, build
from kronii.console.core.control import (
    GRANT_DEFAULT_MINUTES,
    GRANT_MINUTES,
    INTENT_SAID,
    Box,
    PlanView,
    grant_agents,
)
from kronii.console.usecases.show_control import ControlView
from kronii.foundation.errors import KroniiError

__all__ = ["PAGE", "screen_frame"]

SLUG = "control"
# The smallest screen drawn: a plan's boxes are in the redacted frame's pixels, its size unknown here.
_MIN_SCREEN = (1280, 720)


def screen_frame(boxes: tuple[Box, ...]) -> tuple[int, int]:
    """The width and height the plan's screen is drawn at: every box inside, at least 1280 x 720."""
    width = max([_MIN_SCREEN[0], *(b.x + b.width + 20 for b in boxes)])
    height = max([_MIN_SCREEN[1], *(b.y + b.height + 20 for b in boxes)])
    return width, height


def _state(request: Request) -> ControlState:
    state: ControlState = page_state(request, SLUG)
    return state


def _context(view: ControlView) -> dict[str, Any]:
    return {
        "view": view, "time": local_time, "frame": screen_frame, "intent_said": INTENT_SAID,
        "agents": grant_agents(view.desktop), "minutes": GRANT_MINUTES, "default_minutes": GRANT_DEFAULT_MINUTES,
    }  # fmt: skip


async def _page(request: Request, said: dict[str, Any] | None = None, status: int = 200) -> HTMLResponse:
    view = await _state(request).show.view()
    return render(request, "control.html", {**_context(view), "said": said}, status_code=status)


async def _act(request: Request, action: str, run: Any) -> HTMLResponse:
    try:
        done = await run
    except KroniiError as error:
        return await _page(
            request, {"ok": False, "action": action, "sentence": str(error)}, error_status(error)
        )
    return await _page(
        request, {"ok": True, "action": action, "answer": done, "plan": isinstance(done, PlanView)}
    )


router = APIRouter()


@router.get("/control", response_class=HTMLResponse)
async def control_page(request: Request) -> HTMLResponse:
    return await _page(request)


@router.get("/control/fragment", response_class=HTMLResponse)
async def control_fragment(request: Request) -> HTMLResponse:
    view = await _state(request).show.view()
    return render(request, "control_live.html", _context(view))


@router.post("/control/intent", response_class=HTMLResponse)
async def control_intent(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    name = form.get("intent", "")
    return await _act(request, name or "intent", _state(request).steer.intent(person(request), name))


@router.post("/control/grant", response_class=HTMLResponse)
async def control_grant(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    steer = _state(request).steer
    return await _act(
        request, "grant", steer.grant(person(request), form.get("agent", ""), form.get("minutes", ""))
    )


@router.post("/control/renew", response_class=HTMLResponse)
async def control_renew(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    steer = _state(request).steer
    return await _act(
        request, "renew", steer.renew(person(request), form.get("agent", ""), form.get("minutes", ""))
    )


@router.post("/control/approve", response_class=HTMLResponse)
async def control_approve(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    return await _act(
        request, "approve", _state(request).steer.approve(person(request), form.get("plan_id", ""))
    )


@router.post("/control/deny", response_class=HTMLResponse)
async def control_deny(request: Request) -> HTMLResponse:
    form = await form_fields(request)
    return await _act(request, "deny", _state(request).steer.deny(person(request), form.get("plan_id", "")))


PAGE = Page(slug=SLUG, title="Control", order=60, router=router, build=build)
