"""The Today page: the day's timeline as a picture (states and focus, an hours axis, a tooltip per
bar), the time per app, per title and per state as charts, a date picker with the days before and
after, a range of up to 31 days, and a live refresh of today's picture on each focus change.

GET /today?day=YYYY-MM-DD&days=N is the page (its frame sent at once, the day's picture and charts
when the sensor has answered); GET /today/body the part htmx re-fetches."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.rendering import render, render_text
from kronii.console.compose.today import build
from kronii.console.core.timeline import COLUMNS, STATE_FILLS, Bar
from kronii.console.usecases.show_today import MAX_DAYS, ShowToday, TodayFrame, TodayView
from kronii.foundation.errors import KroniiError
from markupsafe import Markup

__all__ = ["PAGE"]

SLUG = "today"
RANGES = ((1, "One day"), (7, "7 days"), (30, "30 days"))
# The picture's rows, in SVG units (the viewBox is LABEL + COLUMNS wide).
LABEL = 90
ROW_HEIGHT = 30


def bar_rects(bars: list[Bar], y: int) -> Markup:
    """The rects of one row of the picture, each with its tooltip: built here rather than in a template
    loop, a busy day has a thousand of them."""
    height = ROW_HEIGHT - 6
    return Markup("").join(
        Markup('<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>').format(
            LABEL + bar.x, y, bar.width, height, bar.fill, bar.tooltip
        )
        for bar in bars
    )


def _days(value: str | None) -> int:
    try:
        return int(value) if value else 1
    except ValueError:
        return 0  # refused by the use case with a sentence


def _asked(request: Request) -> tuple[str | None, int]:
    return request.query_params.get("day"), _days(request.query_params.get("days"))


async def _view_of(show: ShowToday, frame: TodayFrame) -> tuple[TodayView | None, str, int]:
    try:
        return await show.view_of(frame), "", 200
    except KroniiError as error:
        return None, error.message, error.http_status if error.http_status < 500 else 503


def _context(
    frame: TodayFrame | None, view: TodayView | None, problem: str, show: ShowToday
) -> dict[str, Any]:
    return {
        "frame": frame,
        "view": view,
        "problem": problem,
        "today": show.today(),
        "ranges": RANGES,
        "max_days": MAX_DAYS,
        "columns": COLUMNS,
        "label_width": LABEL,
        "row_height": ROW_HEIGHT,
        "state_fills": STATE_FILLS,
        "title_text": _title(frame),
        "bar_rects": bar_rects,
    }


def _title(frame: TodayFrame | None) -> str:
    if frame is None or (frame.is_today and frame.days == 1):
        return "Today"
    if frame.days == 1:
        return frame.day.strftime("%A %d %B %Y")
    return f"{frame.days} days to {frame.day.strftime('%d %B %Y')}"


router = APIRouter(tags=["console"])
# Where the day's picture and charts go in the page, sent once they are ready.
_BODY = "<!--kronii:today-body-->"


@router.get("/today", response_model=None)
async def today_page(request: Request) -> HTMLResponse | StreamingResponse:
    """The page's frame (nav, date picker) is sent at once, the picture and charts when the sensor
    has answered: the person sees the page while the day is read. A bad day is a 400 page."""
    show: ShowToday = page_state(request, SLUG)
    try:
        frame = show.frame(*_asked(request))
    except KroniiError as error:
        context = _context(None, None, error.message, show)
        # An autoescaped template's own output: safe to place as it is.
        body = Markup(render_text(request, "today_body.html", context))  # noqa: S704
        return render(request, "today.html", {**context, "body": body}, status_code=error.http_status)
    top, bottom = render_text(
        request,
        "today.html",
        {**_context(frame, None, "", show), "body": Markup(_BODY)},  # noqa: S704 - a constant
    ).split(_BODY)

    async def page() -> AsyncIterator[str]:
        yield top
        view, problem, _status = await _view_of(show, frame)
        yield render_text(request, "today_body.html", _context(frame, view, problem, show))
        yield bottom

    return StreamingResponse(page(), media_type="text/html; charset=utf-8")


@router.get("/today/body")
async def today_body(request: Request) -> HTMLResponse:
    show: ShowToday = page_state(request, SLUG)
    try:
        frame = show.frame(*_asked(request))
    except KroniiError as error:
        context = _context(None, None, error.message, show)
        return render(request, "today_body.html", context, status_code=error.http_status)
    view, problem, status = await _view_of(show, frame)
    return render(request, "today_body.html", _context(frame, view, problem, show), status_code=status)


PAGE = Page(slug=SLUG, title="Today", order=10, router=router, build=build)
