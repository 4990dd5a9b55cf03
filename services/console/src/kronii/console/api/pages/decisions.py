"""The Decisions page: the pipeline's runs (trigger, route, redaction level, roles run by rules or a
model with fallbacks and cost, and why it notified or stayed silent), with Snooze and Mute on a run
that notified, and the snoozes and mutes in force with Undo.

    GET  /decisions?before=<epoch s>     the runs, newest first (25 a page)
    GET  /decisions/fragment             the latest runs (live: refetched on the pipeline's notices)
    POST /decisions/snooze               notification_id, seconds (3600 | 14400 | 86400)
    POST /decisions/mute                 notification_id
    POST /decisions/unmute               source_key
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.pages.form_helpers import answer_status, form_fields, status_of
from kronii.console.api.rendering import render
from kronii.console.api.security import person
from kronii.console.compose.decisions import DecisionsState, build
from kronii.console.core.decisions import SNOOZE_CHOICES
from kronii.foundation.errors import InvalidArgument, KroniiError

__all__ = ["PAGE"]

SLUG = "decisions"
SNOOZE_WORDS = {3600: "1 hour", 4 * 3600: "4 hours", 86400: "1 day"}


def _state(request: Request) -> DecisionsState:
    state: DecisionsState = page_state(request, SLUG)
    return state


router = APIRouter()


def _when(zone: Any) -> Any:
    def when(at: float | None) -> str:
        return "" if at is None else datetime.fromtimestamp(at, zone).strftime("%Y-%m-%d %H:%M:%S")

    return when


async def _page(
    request: Request,
    said: str = "",
    problem: str = "",
    status: int = 200,
    before: str = "",
    template: str = "decisions.html",
) -> HTMLResponse:
    state = _state(request)
    try:
        view = await state.show.view(before)
    except KroniiError as error:
        view, problem, status = await state.show.view(""), error.message, status_of(error)
    context = {
        "view": view,
        "said": said,
        "problem": problem,
        "when": _when(state.zone),
        "snoozes": [(secs, SNOOZE_WORDS[secs]) for secs in SNOOZE_CHOICES],
    }
    return render(request, template, context, status_code=answer_status(request, status))


@router.get("/decisions", response_class=HTMLResponse)
async def decisions_page(request: Request, before: str = "") -> HTMLResponse:
    return await _page(request, before=before[:32])


@router.get("/decisions/fragment", response_class=HTMLResponse)
async def runs_fragment(request: Request) -> HTMLResponse:
    """The latest runs again, for the page's live refresh when the pipeline notifies."""
    return await _page(request, template="decisions_runs.html")


@router.post("/decisions/{action}", response_class=HTMLResponse)
async def steer(request: Request, action: str) -> HTMLResponse:
    fields = await form_fields(request)
    steer = _state(request).steer
    who = person(request)
    try:
        if action == "snooze":
            seconds = _seconds(fields.get("seconds", ""))
            await steer.snooze(who, fields.get("notification_id", ""), seconds)
            said = f"Snoozed that kind of suggestion for {SNOOZE_WORDS[seconds]}."
        elif action == "mute":
            await steer.mute(who, fields.get("notification_id", ""))
            said = "Muted that kind of suggestion until you undo it."
        elif action == "unmute":
            await steer.clear(who, fields.get("source_key", ""))
            said = "Undone: that kind of suggestion may notify again."
        else:
            return await _page(request, problem="There is no such action on this page.", status=404)
    except KroniiError as error:
        return await _page(request, problem=error.message, status=status_of(error))
    return await _page(request, said=said)


def _seconds(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidArgument("snooze for 1 hour, 4 hours or 1 day") from None


PAGE = Page(slug=SLUG, title="Decisions", order=40, router=router, build=build)
