"""The console's pages, discovered: every module of this package with a `PAGE` is one page, so adding a
page edits no shared file. A page has a slug (served at /<slug>, its nav entry), a title, its place in
the nav, its router (GET /<slug>, GET /<slug>/... fragments, POST /<slug>/... actions) and a `build`
that makes its use cases once at start from the ConsoleDeps; its routes reach what `build` returned
through `page_state(request, slug)`."""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from kronii.console.deps import ConsoleDeps

__all__ = ["Page", "discovered_pages", "page_state"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Page:
    slug: str  # served at /<slug> (Today is "today" and also "/"), its nav entry
    title: str
    order: int  # nav order: today 10, agents 20, captures 30, decisions 40, shell 50, control 60, privacy 70
    router: APIRouter
    build: Callable[[ConsoleDeps], Awaitable[object]] | None = None


def discovered_pages() -> list[Page]:
    """Every module in kronii.console.api.pages with a PAGE attribute, in nav order. A page module that
    fails to import is left out with a log line: one broken page does not take the console down."""
    pages: list[Page] = []
    for module in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        try:
            page = getattr(importlib.import_module(module.name), "PAGE", None)
        except Exception:
            log.exception("the console page module %s cannot be imported; it is left out", module.name)
            continue
        if isinstance(page, Page):
            pages.append(page)
    return sorted(pages, key=lambda page: (page.order, page.slug))


def page_state(request: Request, slug: str) -> Any:
    """What that page's `build` returned (None for a page without one)."""
    states: dict[str, Any] = request.state.console_pages
    return states.get(slug)
