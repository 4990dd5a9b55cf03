"""What the vision engine's use cases need of the outside world (adapters implement these, and the
in-process tests' fakes do too), and the exceptions the adapters raise for them. Takes and returns
core types only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from kronii.vision.core.commands import CallFacts, PlanAnswer
from kronii.vision.core.context import Bounds, Frame, OcrZone, RawNode, ScreenContext
from kronii.vision.core.front import XDesk
from kronii.vision.core.plan_book import PlanRecord

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Accessibility",
    "Ask",
    "DesktopControl",
    "Launcher",
    "LeaseRefused",
    "Ocr",
    "PersonCheck",
    "Planner",
    "ScreenFrames",
    "ScreenshotUnavailable",
    "Screenshots",
]

# Ask a person about a flagged plan (the desktop notification).
Ask = Callable[[PlanRecord], Awaitable[None]]


class ScreenshotUnavailable(Exception):
    """capture could not give a frame now: `str()` says why (not running, refused, expired)."""


class Accessibility(Protocol):
    """The AT-SPI tree of the desktop and the semantic actions on its objects (by `RawNode.ref`)."""

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        """The tree; `fresh` walks it again even when no object event said it changed."""
        ...

    def mark(self) -> int:
        """Where the toolkits' events stand now (for `heard_since`)."""
        ...

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        """The events heard after `mark`: (kind, ref), e.g. ("object:state-changed:checked", ref);
        empty where the toolkits' events cannot be heard."""
        ...

    async def do_action(self, ref: str, name: str = "click") -> bool: ...

    async def set_text(self, ref: str, text: str) -> bool: ...

    async def grab_focus(self, ref: str) -> bool:
        """Give the object the keyboard focus (False: it would not take it)."""
        ...

    async def select(self, ref: str, parent: str) -> bool:
        """Select the object in its list or table (`parent`'s Selection; False: it could not)."""
        ...


class ScreenFrames(Protocol):
    """Reduced grayscale frames of the whole screen for the diff only (never stored, never sent)."""

    def grab(self) -> np.ndarray: ...

    def screen_size(self) -> tuple[int, int]: ...

    def front_window(self) -> tuple[int, Bounds] | None:
        """The X window in front: its process id and its rectangle in X pixels (None: no such window)."""
        ...

    def desk(self) -> XDesk | None:
        """The X server's focus window, active window and stacked top-level windows now (None: no X
        display to ask, and then the accessibility tree's own guess of the window in front stands)."""
        ...


class Screenshots(Protocol):
    async def focused_window(self) -> Frame:
        """Raises `ScreenshotUnavailable` with a sentence when capture cannot give one."""
        ...


class Ocr(Protocol):
    def read(self, png: bytes) -> tuple[OcrZone, ...]: ...


class Planner(Protocol):
    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer: ...


class LeaseRefused(Exception):
    """The broker would not give, or took back, the desktop: `str()` is its sentence."""


class DesktopControl(Protocol):
    """The input broker, as an agent: a lease, safe points between steps, input under the lease."""

    async def acquire(self, lease_seconds: int) -> None: ...

    async def safe_point(self, step: str, sequence: int) -> str:
        """CONTINUE, PAUSE, STOP (the person's STOP_NOW) or TAKEN_BACK (the person's own input ended
        the lease); LeaseRefused when the broker refuses the call."""
        ...

    async def click(self, x: int, y: int) -> None: ...

    async def type_text(self, text: str) -> None: ...

    async def release(self) -> None: ...


class Launcher(Protocol):
    def open(self, app: str) -> None:
        """Start an allowlisted app, detached; raises ValueError for one that is not."""
        ...


class PersonCheck(Protocol):
    async def person(self, facts: CallFacts) -> str:
        """The person's actor name ("person:uid:N"), or PermissionDenied with a sentence."""
        ...
