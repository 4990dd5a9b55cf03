"""The Today page: the day's timeline as a picture (states and focus, an hours axis, a tooltip per
bar), the time per app, per title and per state as charts, a date picker with the days before and
after, a range of up to 31 days, and a live refresh of today's picture on each focus change.

GET /today?day=YYYY-MM-DD&days=N is the page; GET /today/body the part htmx re-fetches."""

from __future__ import annotations

from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from kronii.console.api.pages import Page, page_state
from kronii.console.api.rendering import render
from kronii.console.compose.today import build
from kronii.console.core.timeline import COLUMNS, STATE_FILLS, Bar
from kronii.console.usecases.show_today import MAX_DAYS, ShowToday, TodayView
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


async def _view(request: Request) -> tuple[TodayView | None, str, int, ShowToday]:
    show: ShowToday = page_state(request, SLUG)
    try:
        view = await show.view(request.query_params.get("day"), _days(request.query_params.get("days")))
    except KroniiError as error:
        status = error.http_status if error.http_status < 500 else 503
        return None, error.message, status, show
    return view, "", 200, show


def _context(view: TodayView | None, problem: str, show: ShowToday) -> dict[str, Any]:
    return {
        "view": view,
        "problem": problem,
        "today": show.today(),
        "ranges": RANGES,
        "max_days": MAX_DAYS,
        "columns": COLUMNS,
        "label_width": LABEL,
        "row_height": ROW_HEIGHT,
        "state_fills": STATE_FILLS,
        "title_text": _title(view, show.today()),
        "bar_rects": bar_rects,
    }


def _title(view: TodayView | None, today: date) -> str:
    if view is None or (view.is_today and view.days == 1):
        return "Today"
    if view.days == 1:
        return view.day.strftime("%A %d %B %Y")
    return f"{view.days} days to {view.day.strftime('%d %B %Y')}"


router = APIRouter(tags=["console"])


@router.get("/today")
async def today_page(request: Request) -> HTMLResponse:
    view, problem, status, show = await _view(request)
    return render(request, "today.html", _context(view, problem, show), status_code=status)


@router.get("/today/body")
async def today_body(request: Request) -> HTMLResponse:
    view, problem, status, show = await _view(request)
    return render(request, "today_body.html", _context(view, problem, show), status_code=status)


PAGE = Page(slug=SLUG, title="Today", order=10, router=router, build=build)
