"""What the vision engine knows of the screen at one moment (seed 001, "ScreenContext DTO"): immutable,
built once per tick, and safe to hand to a model (every text in it has been through redaction).

Coordinates: `Bounds` in the accessibility tree are in the toolkit's logical screen pixels (AT-SPI's
screen coordinates); OCR zones and model-proposed `click_by_bounds` boxes are in the pixels of the
redacted screenshot. `core/pixels.py` is the one place that turns either into X server pixels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Bounds", "Built", "Frame", "OcrZone", "RawNode", "ScreenContext", "UiNode", "WindowFacts"]


@dataclass(frozen=True, slots=True)
class Bounds:
    x: int
    y: int
    width: int
    height: int

    @property
    def empty(self) -> bool:
        return self.width <= 0 or self.height <= 0

    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2

    def contains_point(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height

    def contains(self, other: Bounds) -> bool:
        """Whether `other` lies wholly inside these bounds (an empty box is never inside)."""
        if other.empty:
            return False
        return (
            other.x >= self.x
            and other.y >= self.y
            and other.x + other.width <= self.x + self.width
            and other.y + other.height <= self.y + self.height
        )

    def as_dict(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Bounds:
        return cls(int(data["x"]), int(data["y"]), int(data["width"]), int(data["height"]))


@dataclass(frozen=True, slots=True)
class OcrZone:
    """One line or block of text read from the redacted screenshot; `confidence` in 0..1."""

    text: str
    confidence: float
    bounds: Bounds


@dataclass(frozen=True, slots=True)
class RawNode:
    """One accessible object as the AT-SPI adapter read it, before pruning.

    `ref` is the adapter's handle ("<bus name>|<object path>"), stable while the object lives.
    `text` is already empty for secured objects (the adapter never reads a password's text);
    `secured` says the object was one (role "password text" or state "secured")."""

    ref: str
    role: str
    name: str
    states: frozenset[str]
    bounds: Bounds | None
    actions: tuple[str, ...]
    editable: bool
    text: str
    depth: int
    parent: str | None
    secured: bool = False
    window_title: str = ""
    pid: int = 0
    # The names of the objects its labelled-by relation points at (read for fields only).
    labelled_by: tuple[str, ...] = ()
    # The hint a field shows while empty (AT-SPI attribute placeholder-text or placeholder).
    placeholder: str = ""


@dataclass(frozen=True, slots=True)
class UiNode:
    """A node of the pruned tree that plans may name: `id` is the short id a plan uses ("e1")."""

    id: str
    ref: str
    role: str
    name: str
    states: frozenset[str]
    bounds: Bounds | None
    actions: tuple[str, ...]
    editable: bool
    text: str
    depth: int
    secured: bool = False
    # How a person calls a field: its labelled-by relation, else the label beside or above it.
    label: str = ""
    placeholder: str = ""
    # The texts of the labels inside the element (a GTK4 button named only by its label child).
    inner: tuple[str, ...] = ()
    # The parent's ref: the cells of one table or list share it.
    parent: str = ""

    @property
    def focused(self) -> bool:
        return "focused" in self.states

    def as_prompt(self) -> dict[str, Any]:
        """What a model sees of the node: never a ref, never a secured field's text."""
        entry: dict[str, Any] = {"id": self.id, "role": self.role, "name": self.name}
        if self.bounds is not None:
            entry["bounds"] = self.bounds.as_dict()
        if self.text and not self.secured:
            entry["text"] = self.text
        if self.label and self.label != self.name:
            entry["label"] = self.label
        if self.placeholder:
            entry["placeholder"] = self.placeholder
        if self.secured:
            entry["secured"] = True
        if self.focused:
            entry["focused"] = True
        return entry


@dataclass(frozen=True, slots=True)
class WindowFacts:
    """The X window a context (and a plan made on it) is about: the X server's focus window, its
    process, title, program (WM_CLASS) and rectangle in X pixels. `covered` are the parts of it drawn
    over by windows that are not the application's (a notification bubble): the pixel diff masks them."""

    x_id: int
    pid: int
    title: str
    app: str
    area: Bounds
    covered: tuple[Bounds, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "x_id": self.x_id, "pid": self.pid, "title": self.title, "app": self.app,
            "area": self.area.as_dict(),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class ScreenContext:
    """One immutable snapshot of the screen for planning.

    `screenshot_id`/`screenshot_hash` name capture's redacted frame (never a path; empty when capture
    was not asked or not running, and then `notes` says so). `capture_area` is where that frame lies
    on the screen in X pixels; `scale` is device pixels per logical pixel (2.0 under GDK_SCALE=2).
    `window` is the X window in front the tree was read from (None without an X display);
    `window_problem` says why a plan made on this context must not run ("" when nothing is wrong)."""

    screenshot_id: str
    screenshot_hash: str
    screenshot_size: tuple[int, int]
    capture_area: Bounds
    ocr: tuple[OcrZone, ...]
    tree: tuple[UiNode, ...]
    focused_title: str
    screen_bounds: Bounds
    scale: float
    taken_at_ms: int
    previous_actions: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    window: WindowFacts | None = None
    window_problem: str = ""

    def node(self, node_id: str) -> UiNode | None:
        for node in self.tree:
            if node.id == node_id:
                return node
        return None


@dataclass(frozen=True)
class Frame:
    """capture's redacted frame of the window in front: its id and hash, the PNG, and where it lies."""

    screenshot_id: str
    sha256: str
    png: bytes
    size: tuple[int, int]
    # In X pixels: the window's rectangle on the screen.
    area: tuple[int, int, int, int]


@dataclass(frozen=True)
class Built:
    """A context as built: the snapshot, the reduced frame of the screen (for the diff only), the tree
    as read before pruning (for R6), and each part's time in milliseconds."""

    context: ScreenContext
    frame: np.ndarray
    raw: tuple[RawNode, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
