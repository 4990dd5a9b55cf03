"""The Captures page: the day's stored REDACTED frames as a timeline of thumbnails by hour (app, time,
redaction level), a date picker, a full frame behind the person's proof of presence (capture's own,
as for `kronii capture get`: without it the page shows capture's refusal), and deletes of one frame,
a day or all of them, each confirmed on a page of its own first.

    GET  /captures?day=YYYY-MM-DD&page=N the day's timeline (240 frames a page)
    GET  /captures/fragment?day=         the day's frames (live: refetched on a capture job's news)
    GET  /captures/thumbs/{id}.png       a redacted thumbnail (made by the capture service)
    GET  /captures/frames/{id}           the full redacted frame, or the refusal
    GET  /captures/delete?scope=&...     the confirmation page of a delete
    POST /captures/delete                scope=one|day|all (+ screenshot_id | day); confirm=yes deletes
"""

from __future__ import annotations

import base64
from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.pages.form_helpers import answer_status, form_fields, status_of
from kronii.console.api.rendering import render
from kronii.console.api.security import person
from kronii.console.compose.captures import CapturesState, build
from kronii.console.core.captures import frame_time, human_bytes
from kronii.console.usecases.show_captures import ShowCaptures
from kronii.foundation.errors import KroniiError

__all__ = ["PAGE"]

SLUG = "captures"
SCOPES = {"one": "this frame", "day": "every frame of that day", "all": "every stored frame"}


def _state(request: Request) -> CapturesState:
    state: CapturesState = page_state(request, SLUG)
    return state


router = APIRouter()


@router.get("/captures", response_class=HTMLResponse)
async def captures_page(
    request: Request, day: str = "", page: int = Query(1, ge=1, le=10_000)
) -> HTMLResponse:
    show = _state(request).show
    try:
        shown = await show.day(day[:32], page)
    except KroniiError as error:
        shown = await show.day("")
        return render(
            request, "captures.html", _context(shown, show, error.message), status_code=status_of(error)
        )
    return render(request, "captures.html", _context(shown, show, ""))


def _context(shown: Any, show: ShowCaptures, problem: str) -> dict[str, Any]:
    return {
        "shown": shown,
        "zone": show.tz,
        "problem": problem or shown.problem,
        "human_bytes": human_bytes,
        "frame_time": frame_time,
    }


@router.get("/captures/fragment", response_class=HTMLResponse)
async def frames_fragment(
    request: Request, day: str = "", page: int = Query(1, ge=1, le=10_000)
) -> HTMLResponse:
    """The day's frames again, for the page's live refresh when a capture job changes."""
    show = _state(request).show
    try:
        shown = await show.day(day[:32], page)
    except KroniiError as error:
        return HTMLResponse(error.message, status_code=status_of(error))
    return render(request, "captures_frames.html", _context(shown, show, ""))


@router.get("/captures/thumbs/{screenshot_id}.png")
async def thumbnail(request: Request, screenshot_id: str) -> Response:
    try:
        png = await _state(request).show.thumbnail(screenshot_id)
    except KroniiError as error:
        return Response(error.message, status_code=status_of(error), media_type="text/plain")
    return Response(png, media_type="image/png", headers={"cache-control": "private, no-store"})


@router.get("/captures/frames/{screenshot_id}", response_class=HTMLResponse)
async def full_frame(request: Request, screenshot_id: str, day: str = "") -> HTMLResponse:
    try:
        opened = await _state(request).show.open(person(request), screenshot_id)
    except KroniiError as error:
        context = {"image": None, "refusal": error.message, "screenshot_id": "", "day": day[:10]}
        return render(request, "captures_frame.html", context, status_code=status_of(error))
    image = None if opened.png is None else "data:image/png;base64," + base64.b64encode(opened.png).decode()
    context = {"image": image, "refusal": opened.refusal, "screenshot_id": screenshot_id, "day": day[:10]}
    return render(request, "captures_frame.html", context, status_code=200 if image else 403)


@router.get("/captures/delete", response_class=HTMLResponse)
async def confirm_delete(
    request: Request, scope: str = "", screenshot_id: str = "", day: str = ""
) -> HTMLResponse:
    """The confirmation page a frame's Delete link opens (nothing is deleted by a GET)."""
    ask = {
        "scope": scope,
        "screenshot_id": screenshot_id[:64],
        "day": day[:10],
        "what": SCOPES.get(scope, ""),
    }
    if scope not in SCOPES:
        return _said(request, ask, "", "Choose what to delete: one frame, a day or everything.", 400)
    return render(request, "captures_confirm.html", ask)


@router.post("/captures/delete", response_class=HTMLResponse)
async def delete(request: Request) -> HTMLResponse:
    fields = await form_fields(request)
    scope, target, day = fields.get("scope", ""), fields.get("screenshot_id", ""), fields.get("day", "")[:10]
    ask = {"scope": scope, "screenshot_id": target, "day": day, "what": SCOPES.get(scope, "")}
    if scope not in SCOPES:
        return _said(request, ask, "", "Choose what to delete: one frame, a day or everything.", 400)
    if fields.get("confirm") != "yes":
        return render(request, "captures_confirm.html", ask)
    forget = _state(request).forget
    try:
        if scope == "one":
            done = await forget.one(person(request), target)
        elif scope == "day":
            done = await forget.day(person(request), day)
        else:
            done = await forget.everything(person(request))
    except KroniiError as error:
        return _said(request, ask, "", error.message, status_of(error))
    return _said(request, ask, done.sentence(), "", 200)


def _said(request: Request, ask: dict[str, str], done: str, problem: str, status: int) -> HTMLResponse:
    context = {**ask, "done": done, "problem": problem}
    return render(request, "captures_done.html", context, status_code=answer_status(request, status))


PAGE = Page(slug=SLUG, title="Captures", order=30, router=router, build=build)
