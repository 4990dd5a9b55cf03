"""Building a ScreenContext (seed 001, steps 1-5): the accessibility tree (read and pruned), a reduced
frame of the screen for the diff, and, when capture is on and answers, its redacted frame of the window
in front with OCR zones read from it. Each part's time is kept for the benchmark and the metrics.

Without capture the context still has the tree; its notes say why there is no screenshot, and a plan
that would need OCR (a click by bounds) then goes to the person through the safety layer (C1)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from kronii.foundation.clock import Clock
from kronii.vision.core.context import Bounds, Built, Frame, OcrZone, RawNode, ScreenContext
from kronii.vision.core.front import FrontChoice, XDesk, choose_front, window_facts
from kronii.vision.core.pixels import infer_scale
from kronii.vision.core.tree import prune
from kronii.vision.ports import Accessibility, Ocr, ScreenFrames, Screenshots, ScreenshotUnavailable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ContextBuilder"]

_T = TypeVar("_T")

log = logging.getLogger(__name__)


class ContextBuilder:
    def __init__(
        self,
        accessibility: Accessibility,
        frames: ScreenFrames,
        clock: Clock,
        *,
        screenshots: Screenshots | None = None,
        ocr: Ocr | None = None,
        scale: float = 1.0,
        max_nodes: int = 300,
        max_depth: int = 32,
        observe: Callable[[dict[str, float]], None] = lambda timings: None,
    ) -> None:
        self._tree = accessibility
        self._frames = frames
        self._clock = clock
        self._screenshots = screenshots
        self._ocr = ocr
        self._scale = scale
        self._max_nodes = max_nodes
        self._max_depth = max_depth
        self._observe = observe

    @property
    def has_screenshots(self) -> bool:
        return self._screenshots is not None

    async def build(
        self, previous_actions: Sequence[str] = (), *, with_screenshot: bool = True, fresh: bool = False
    ) -> Built:
        """`fresh` reads the tree again whatever the object events said (an approval, a run's step)."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        # The tree (D-Bus) and the X server's look (another thread) are read at the same time.
        raw, (frame, (width, height), desk) = await asyncio.gather(
            self._timed(self._tree.snapshot(fresh=fresh), "tree", timings),
            self._timed(asyncio.to_thread(self._look), "frame", timings),
        )
        choice = choose_front(raw, desk)
        notes: list[str] = list(choice.notes)
        shot: Frame | None = None
        zones: tuple[OcrZone, ...] = ()
        if with_screenshot:
            shot, zones = await self._screenshot(notes, timings)
        window = choice.node
        tree = prune(_subtree(raw, window), max_nodes=self._max_nodes, max_depth=self._max_depth)
        mark = time.perf_counter()
        scale = await self._scale_of(choice)
        timings["scale"] = (time.perf_counter() - mark) * 1000
        context = ScreenContext(
            screenshot_id=shot.screenshot_id if shot else "",
            screenshot_hash=shot.sha256 if shot else "",
            screenshot_size=shot.size if shot else (0, 0),
            capture_area=Bounds(*shot.area) if shot else Bounds(0, 0, 0, 0),
            ocr=zones,
            tree=tree,
            focused_title=window.name if window is not None else "",
            screen_bounds=Bounds(0, 0, width, height),
            scale=scale,
            taken_at_ms=self._clock.wall_ms(),
            previous_actions=tuple(previous_actions)[-5:],
            notes=tuple(notes),
            window=window_facts(desk, choice.x) if desk is not None and choice.x is not None else None,
            window_problem=choice.problem,
        )
        timings["total"] = (time.perf_counter() - started) * 1000
        self._observe(timings)
        return Built(context, frame, raw, timings)

    @staticmethod
    async def _timed(work: Awaitable[_T], part: str, timings: dict[str, float]) -> _T:
        mark = time.perf_counter()
        try:
            return await work
        finally:
            timings[part] = (time.perf_counter() - mark) * 1000

    async def _scale_of(self, choice: FrontChoice) -> float:
        """The front window's scale, from its AT-SPI extents against its X geometry when both are the
        same process's window; else the configured scale (GDK_SCALE)."""
        window = choice.node
        if window is None or window.bounds is None or not window.pid:
            return self._scale
        if choice.x is not None:
            if choice.x.pid != window.pid:
                return self._scale
            return infer_scale(window.bounds, choice.x.area, self._scale)
        seen = await asyncio.to_thread(self._frames.front_window)
        if seen is None or seen[0] != window.pid:
            return self._scale
        return infer_scale(window.bounds, seen[1], self._scale)

    async def _screenshot(
        self, notes: list[str], timings: dict[str, float]
    ) -> tuple[Frame | None, tuple[OcrZone, ...]]:
        if self._screenshots is None:
            notes.append("capture is off for the vision engine: the plan sees the accessibility tree only")
            return None, ()
        mark = time.perf_counter()
        try:
            shot = await self._screenshots.focused_window()
        except ScreenshotUnavailable as why:
            notes.append(f"no screenshot: {why}")
            return None, ()
        timings["capture"] = (time.perf_counter() - mark) * 1000
        if self._ocr is None:
            return shot, ()
        mark = time.perf_counter()
        try:
            zones = await asyncio.to_thread(self._ocr.read, shot.png)
        except Exception as error:  # a Tesseract timeout or an unreadable frame: the tree still plans
            notes.append(f"no text read from the screenshot: {error}")
            return shot, ()
        timings["ocr"] = (time.perf_counter() - mark) * 1000
        return shot, zones

    def _look(self) -> tuple[np.ndarray, tuple[int, int], XDesk | None]:
        """A frame, the screen's size and its windows, off the event loop (all talk to the X server)."""
        return self._frames.grab(), self._frames.screen_size(), self._frames.desk()

    async def desk(self) -> XDesk | None:
        """The X server's windows now (the executor's window guard asks before any input)."""
        return await asyncio.to_thread(self._frames.desk)

    async def watch_look(self) -> tuple[np.ndarray, XDesk | None]:
        """A reduced frame of the screen and its windows, for the screen watch's masked diff."""
        return await asyncio.to_thread(lambda: (self._frames.grab(), self._frames.desk()))


def _subtree(nodes: tuple[RawNode, ...], window: RawNode | None) -> tuple[RawNode, ...]:
    """`window` and its descendants: the tree a plan sees is the window in front's, never another's."""
    if window is None:
        return ()
    start = nodes.index(window)
    end = next((i for i in range(start + 1, len(nodes)) if nodes[i].depth <= window.depth), len(nodes))
    return nodes[start:end]
