"""The Privacy page: what is kept where, for how long, how much; delete a day (its activity AND its
captured frames, one button), an app's activity, or everything, each confirmed on a page of its own
first; and the audit log's last rows with the whole chain verified.

    GET  /privacy?verify=whole    the page (whole: the audit chain checked from its first row again)
    POST /privacy/delete          scope=day|app|all (+ day | app); confirm=yes deletes
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.pages.form_helpers import answer_status, form_fields, status_of
from kronii.console.api.rendering import render
from kronii.console.api.security import person
from kronii.console.compose.privacy import PrivacyState, build
from kronii.foundation.errors import KroniiError

__all__ = ["PAGE"]

SLUG = "privacy"
SCOPES = {
    "day": "this day's activity, captured frames and decisions",
    "app": "this app's activity",
    "all": "all activity, every captured frame and every decision",
}


def _state(request: Request) -> PrivacyState:
    state: PrivacyState = page_state(request, SLUG)
    return state


router = APIRouter()


async def _page(
    request: Request, said: str = "", problem: str = "", status: int = 200, whole_chain: bool = False
) -> HTMLResponse:
    state = _state(request)
    view = await state.show.view(whole_chain)

    def when(at: float) -> str:
        return datetime.fromtimestamp(at, state.zone).strftime("%Y-%m-%d %H:%M:%S")

    today = datetime.now(state.zone).date().isoformat()
    context = {"view": view, "said": said, "problem": problem, "when": when, "today": today}
    return render(request, "privacy.html", context, status_code=answer_status(request, status))


@router.get("/privacy", response_class=HTMLResponse)
async def privacy_page(request: Request, verify: str = "") -> HTMLResponse:
    """verify=whole walks the audit chain from its first row again."""
    return await _page(request, whole_chain=verify == "whole")


@router.post("/privacy/delete", response_class=HTMLResponse)
async def delete(request: Request) -> HTMLResponse:
    fields = await form_fields(request)
    scope, day, app = fields.get("scope", ""), fields.get("day", "")[:10], fields.get("app", "")[:256]
    if scope not in SCOPES:
        return await _page(
            request, problem="Choose what to delete: a day, an app's activity or everything.", status=400
        )
    ask = {"scope": scope, "day": day, "app": app, "what": SCOPES[scope]}
    if fields.get("confirm") != "yes":
        return render(request, "privacy_confirm.html", ask)
    forget, who = _state(request).forget, person(request)
    try:
        if scope == "day":
            done = await forget.day(who, day)
        elif scope == "app":
            done = await forget.app(who, app)
        else:
            done = await forget.everything(who)
    except KroniiError as error:
        return await _page(request, problem=error.message, status=status_of(error))
    # Some of it done is said as done (the sentence names what was not); nothing done is a 503.
    nothing_done = done.spans is None and done.frames is None and done.decisions is None
    return await _page(request, said=done.sentence(), status=503 if nothing_done else 200)


PAGE = Page(slug=SLUG, title="Privacy", order=70, router=router, build=build)
