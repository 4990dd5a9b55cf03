"""What the vision engine's use cases need of the outside world (adapters implement these, and the
in-process tests' fakes do too), and what its API needs of them (VisionOperations)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kronii.vision.core.actions import Action
from kronii.vision.core.context import Bounds, OcrZone, RawNode, ScreenContext

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Accessibility",
    "Audit",
    "CallFacts",
    "Clock",
    "DesktopControl",
    "Frame",
    "Launcher",
    "LeaseRefused",
    "Ocr",
    "PersonCheck",
    "PlanAnswer",
    "Planner",
    "ScreenFrames",
    "Screenshots",
    "VisionOperations",
]


class Clock(Protocol):
    def now_ms(self) -> int: ...

    def monotonic(self) -> float: ...


class Accessibility(Protocol):
    """The AT-SPI tree of the desktop and the semantic actions on its objects (by `RawNode.ref`)."""

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        """The tree; `fresh` walks it again even when no object event said it changed."""
        ...

    async def do_action(self, ref: str, name: str = "click") -> bool: ...

    async def set_text(self, ref: str, text: str) -> bool: ...

    async def grab_focus(self, ref: str) -> bool:
        """Give the object the keyboard focus (False: it would not take it)."""
        ...


class ScreenFrames(Protocol):
    """Reduced grayscale frames of the whole screen for the diff only (never stored, never sent)."""

    def grab(self) -> np.ndarray: ...

    def screen_size(self) -> tuple[int, int]: ...

    def front_window(self) -> tuple[int, Bounds] | None:
        """The X window in front: its process id and its rectangle in X pixels (None: no such window)."""
        ...


@dataclass(frozen=True)
class Frame:
    """capture's redacted frame of the window in front: its id and hash, the PNG, and where it lies."""

    screenshot_id: str
    sha256: str
    png: bytes
    size: tuple[int, int]
    # In X pixels: the window's rectangle on the screen.
    area: tuple[int, int, int, int]


class Screenshots(Protocol):
    async def focused_window(self) -> Frame:
        """Raises `ScreenshotUnavailable` (adapters) with a sentence when capture cannot give one."""
        ...


class Ocr(Protocol):
    def read(self, png: bytes) -> tuple[OcrZone, ...]: ...


@dataclass(frozen=True)
class PlanAnswer:
    """What a planner proposes: actions, or none and why; the model call's record when there was one."""

    actions: tuple[Action, ...]
    note: str = ""
    backend: str = "rules"
    call: dict[str, Any] | None = None


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


class Audit(Protocol):
    async def record(
        self, action: str, subject: str, outcome: str, *, actor: str = "vision", **detail: Any
    ) -> None:
        """One audit row; `actor` is who decided (the engine, or the person who approved)."""
        ...


@dataclass(frozen=True)
class CallFacts:
    """What the transport says about a call: the peer's loopback address (registered by the local
    socket for a local process) and the TTY binding's claim."""

    peer_host: str
    peer_port: int
    tty: str = ""
    session: str = ""


class PersonCheck(Protocol):
    async def person(self, facts: CallFacts) -> str:
        """The person's actor name ("person:uid:N"), or PermissionDenied with a sentence."""
        ...


class VisionOperations(Protocol):
    """What the HTTP and gRPC layers call."""

    async def plan(self, intent: str, requester: str, execute: bool) -> dict[str, Any]: ...

    def plans(self) -> Sequence[dict[str, Any]]: ...

    def show(self, plan_id: str) -> dict[str, Any]: ...

    async def approve(self, plan_id: str, actor: str) -> dict[str, Any]: ...

    async def deny(self, plan_id: str, actor: str) -> dict[str, Any]: ...

    def run(self, plan_id: str) -> dict[str, Any]: ...

    async def context(self) -> dict[str, Any]: ...
