"""Typing goes to the window the plan was approved for, or nowhere.

Keys and clicks by coordinates sent through the input broker land wherever the X server's focus is
when they arrive, not where the plan meant them: before each such input the executor asks the X server
which window holds the focus, and sends nothing unless it is the X window the plan was made and
approved for (the same X window id). Semantic actions (AT-SPI actions and text on a named element)
reach their element wherever the focus is, and need no guard.

The approved window is bound to the run's task (`bind`), so the check needs nothing from the call
that sends the input."""

from __future__ import annotations

from contextvars import ContextVar

from kronii.vision.core.context import WindowFacts
from kronii.vision.core.front import window_guard
from kronii.vision.usecases.build_context import ContextBuilder

__all__ = ["bind", "refusal"]

_APPROVED: ContextVar[WindowFacts | None] = ContextVar("kronii_vision_approved_window", default=None)


def bind(window: WindowFacts | None) -> None:
    """The X window this run's input may go to (None: the plan was made without X facts)."""
    _APPROVED.set(window)


async def refusal(builder: ContextBuilder) -> str:
    """Why no input may be sent now ("" when the X focus is still in the approved window)."""
    approved = _APPROVED.get()
    if approved is None:
        return ""
    return window_guard(approved, await builder.desk())
