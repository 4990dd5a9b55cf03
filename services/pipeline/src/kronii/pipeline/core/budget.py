"""Context budgeting (seed 000, row 11): Base first, then plugin content by plugin priority, and
the screenshot as an id reference only (never bytes), under a token budget. Tokens are estimated
as chars/4, rounded up: close enough for English and code, and the same on every backend."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

# Screenshot ids are opaque tokens; anything path-like or long is refused so that neither a
# filesystem path nor image data can ride along as a "reference".
_SCREENSHOT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_TRUNCATION_MARK = " [...]"


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class ItemSource(StrEnum):
    BASE = "base"
    PLUGIN = "plugin"
    SCREENSHOT = "screenshot"


@dataclass(frozen=True, slots=True)
class ContextItem:
    source: ItemSource
    name: str
    text: str
    tokens: int
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class PluginContent:
    app_id: str
    text: str
    priority: int = 0


@dataclass(frozen=True, slots=True)
class Dropped:
    source: ItemSource
    name: str
    tokens: int
    reason: str


@dataclass(frozen=True, slots=True)
class BudgetedContext:
    items: tuple[ContextItem, ...]
    dropped: tuple[Dropped, ...]
    used_tokens: int
    budget_tokens: int

    @property
    def screenshot_id(self) -> str | None:
        return next((i.name for i in self.items if i.source is ItemSource.SCREENSHOT), None)

    def text(self) -> str:
        return "\n\n".join(f"[{item.source}:{item.name}]\n{item.text}" for item in self.items)


def screenshot_reference(screenshot_id: str) -> str:
    if not _SCREENSHOT_ID.match(screenshot_id):
        raise ValueError("screenshot_id must be an opaque id (letters, digits, '-', '_'; at most 128)")
    return f"screenshot id {screenshot_id} (redacted image, fetch by id)"


def _truncate(text: str, tokens: int) -> str:
    keep = max(0, tokens * 4 - len(_TRUNCATION_MARK))
    return text[:keep] + _TRUNCATION_MARK if keep else ""


def budget_context(
    base_text: str,
    plugin_contents: Sequence[PluginContent],
    max_tokens: int,
    screenshot_id: str | None = None,
) -> BudgetedContext:
    """Fill `max_tokens`: the Base snapshot first (cut short when it alone overflows), then the
    screenshot reference (a few tokens, and the capture was the round's most expensive step), then
    plugin content by descending priority (ties by app id). A plugin item that does not fit is
    dropped whole, not cut, because half a summary misleads more than none; later, smaller ones
    may still fit. Every drop is reported."""
    if max_tokens < 0:
        raise ValueError("max_tokens must be >= 0")
    items: list[ContextItem] = []
    dropped: list[Dropped] = []
    left = max_tokens

    base_tokens = estimate_tokens(base_text)
    if base_tokens <= left:
        items.append(ContextItem(ItemSource.BASE, "base", base_text, base_tokens))
        left -= base_tokens
    else:
        cut = _truncate(base_text, left)
        if cut:
            items.append(ContextItem(ItemSource.BASE, "base", cut, estimate_tokens(cut), truncated=True))
            left -= estimate_tokens(cut)
        dropped.append(
            Dropped(ItemSource.BASE, "base", base_tokens - estimate_tokens(cut), "truncated to fit")
        )

    if screenshot_id is not None:
        reference = screenshot_reference(screenshot_id)
        tokens = estimate_tokens(reference)
        if tokens <= left:
            items.append(ContextItem(ItemSource.SCREENSHOT, screenshot_id, reference, tokens))
            left -= tokens
        else:
            dropped.append(Dropped(ItemSource.SCREENSHOT, screenshot_id, tokens, "over budget"))

    for content in sorted(plugin_contents, key=lambda c: (-c.priority, c.app_id)):
        tokens = estimate_tokens(content.text)
        if tokens <= left:
            items.append(ContextItem(ItemSource.PLUGIN, content.app_id, content.text, tokens))
            left -= tokens
        else:
            dropped.append(Dropped(ItemSource.PLUGIN, content.app_id, tokens, "over budget"))

    return BudgetedContext(tuple(items), tuple(dropped), max_tokens - left, max_tokens)
