"""The desktop's windows and frames on sway (a wlroots compositor with an IPC), what DesktopFrames gives
on X11: reduced grayscale frames of the whole layout through wlr-screencopy (in process,
kronii.desktop.wayland_screencopy), the layout's size from the outputs, and the windows from sway's
GET_TREE as an `XDesk` (each window's process, title, app id as its class, rectangle in the layout,
which one is focused). `LayoutTree` puts the accessibility tree on that layout (core.layout): on
Wayland, GTK gives extents relative to its own window.

Wayland gives a client no other client's windows; sway's IPC does. Windows on workspaces not shown
are left out, as X leaves out unmapped ones. Floating windows lie above tiled ones: the stack lists the
tiled first."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from kronii.desktop.sway_ipc import GET_TREE, SwayIpcError, request
from kronii.desktop.wayland_screencopy import ScreenCopy
from kronii.desktop.wayland_wire import WaylandError
from kronii.foundation.errors import Unavailable
from kronii.vision.adapters.desktop import DesktopTree
from kronii.vision.adapters.x_windows import _executable, _is_kronii, toolkit_of
from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.diff import DEFAULT_FACTOR, reduce
from kronii.vision.core.front import XDesk, XWindow
from kronii.vision.core.layout import place_on_layout

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["LayoutTree", "SwayDesktop", "desk_from_tree"]

_VIEWS = ("con", "floating_con")


def _rect(node: dict[str, Any], key: str) -> tuple[int, int, int, int]:
    value = node.get(key) or {}
    return (
        int(value.get("x", 0)),
        int(value.get("y", 0)),
        int(value.get("width", 0)),
        int(value.get("height", 0)),
    )


def _views(node: dict[str, Any], floating: bool = False) -> Iterator[tuple[dict[str, Any], bool]]:
    """Every window of the tree, each with whether it floats, tiled ones first at each level."""
    if node.get("type") in _VIEWS and node.get("pid"):
        yield node, floating
    for child in node.get("nodes") or ():
        yield from _views(child, floating)
    for child in node.get("floating_nodes") or ():
        yield from _views(child, True)


def _area(node: dict[str, Any]) -> Bounds:
    """Where the window's surface lies in the layout: its container, plus where the window sits in it
    (borders, title bar), less the offset of the window's geometry in its surface (client shadows)."""
    x, y, _w, _h = _rect(node, "rect")
    inner_x, inner_y, width, height = _rect(node, "window_rect")
    geometry_x, geometry_y, _gw, _gh = _rect(node, "geometry")
    return Bounds(x + inner_x - geometry_x, y + inner_y - geometry_y, width, height)


def desk_from_tree(tree: dict[str, Any], facts: dict[int, tuple[str, bool]] | None = None) -> XDesk:
    """sway's GET_TREE as the windows the vision engine reasons about: the visible ones, tiled before
    floating; the focused window's id (0: the focus is on no window). `facts` gives a process's
    executable and whether it is kronii's (default: nothing known)."""
    known = facts or {}
    found = sorted(
        ((node, floating) for node, floating in _views(tree) if node.get("visible", True)),
        key=lambda item: item[1],
    )
    stack = []
    focus = 0
    for node, _floating in found:
        pid = int(node["pid"])
        executable, kronii = known.get(pid, ("", False))
        window_class = (node.get("window_properties") or {}).get("class")
        stack.append(
            XWindow(
                window_id=int(node["id"]),
                pid=pid,
                title=str(node.get("name") or ""),
                wm_class=str(node.get("app_id") or window_class or ""),
                area=_area(node),
                executable=executable,
                kronii=kronii,
            )
        )
        if node.get("focused"):
            focus = int(node["id"])
    return XDesk(focus, focus, tuple(stack))


class SwayDesktop:
    """A ScreenFrames on sway: `socket` is its Wayland socket, `ipc` its IPC socket. One screen-copy
    connection, used by one thread at a time."""

    def __init__(self, socket: Path, ipc: Path, *, factor: int = DEFAULT_FACTOR) -> None:
        self._socket = socket
        self._ipc = ipc
        self._factor = factor
        self._screen: ScreenCopy | None = None
        self._lock = threading.Lock()  # the screen-copy connection
        self._desk_lock = threading.Lock()  # what is known of the windows' processes
        self._processes: dict[int, tuple[str, bool]] = {}
        self._toolkits: dict[int, str] = {}
        self._copy_problem = ""
        self._ipc_problem = ""

    @property
    def problem(self) -> str:
        """Why the screen or the windows cannot be read now ("" when both can)."""
        return "; ".join(part for part in (self._copy_problem, self._ipc_problem) if part)

    def _ready(self) -> ScreenCopy:
        if self._screen is None:
            try:
                self._screen = ScreenCopy(self._socket)
            except WaylandError as error:
                self._copy_problem = f"cannot copy sway's screen: {error}"
                raise Unavailable(self._copy_problem) from None
            self._copy_problem = ""
        return self._screen

    def _failed(self, error: WaylandError) -> Unavailable:
        self._close()
        self._copy_problem = f"copying sway's screen failed: {error}"
        return Unavailable(self._copy_problem)

    def screen_size(self) -> tuple[int, int]:
        """The layout's extent: from its origin to the outputs' farthest corner (the screen bounds a
        plan's places are checked against; an output left of or above 0,0 adds nothing here)."""
        with self._lock:
            outputs = self._ready().outputs
        if not outputs:
            raise Unavailable("sway has no output to read the screen from")
        return max(o.x + o.width for o in outputs), max(o.y + o.height for o in outputs)

    def grab(self) -> np.ndarray:
        """The whole layout now, each output copied in turn (at its own scale, brought back to layout
        pixels) and reduced; only the reduced frame leaves."""
        with self._lock:
            screen = self._ready()
            try:
                outputs = screen.outputs
                left, top = min(o.x for o in outputs), min(o.y for o in outputs)
                width = max(o.x + o.width for o in outputs) - left
                height = max(o.y + o.height for o in outputs) - top
                canvas = np.zeros((height, width, 3), dtype=np.uint8)
                for output in outputs:
                    pixels = screen.region(output.x, output.y, output.width, output.height)
                    step = max(1, pixels.shape[0] // max(1, output.height))
                    pixels = pixels[::step, ::step][: output.height, : output.width]
                    x, y = output.x - left, output.y - top
                    canvas[y : y + pixels.shape[0], x : x + pixels.shape[1]] = pixels
            except WaylandError as error:
                raise self._failed(error) from None
            except ValueError:
                raise Unavailable("sway has no output to read the screen from") from None
        return reduce(canvas, self._factor)

    def desk(self) -> XDesk | None:
        """sway's windows now; None when its IPC does not answer (the tree's own guess then stands)."""
        try:
            tree = request(self._ipc, GET_TREE)
        except SwayIpcError as error:
            self._ipc_problem = str(error)
            return None
        self._ipc_problem = ""
        pids = {int(node["pid"]) for node, _floating in _views(tree)}
        with self._desk_lock:
            for pid in pids - set(self._processes):
                self._processes[pid] = (_executable(pid), _is_kronii(pid))
            self._processes = {pid: facts for pid, facts in self._processes.items() if pid in pids}
            desk = desk_from_tree(tree, self._processes)
            return self._with_toolkit(desk)

    def _with_toolkit(self, desk: XDesk) -> XDesk:
        window = desk.window(desk.focus)
        if window is None:
            return desk
        if window.pid not in self._toolkits:
            self._toolkits[window.pid] = toolkit_of(window.pid)
        named = replace(window, toolkit=self._toolkits[window.pid])
        return XDesk(desk.focus, desk.active, tuple(named if w is window else w for w in desk.stack))

    def front_window(self) -> tuple[int, Bounds] | None:
        desk = self.desk()
        window = desk.window(desk.focus) if desk is not None else None
        return None if window is None else (window.pid, window.area)

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._screen is not None:
            self._screen.close()
            self._screen = None


class LayoutTree:
    """The accessibility tree with its objects' bounds in sway's layout: each read is placed through
    the windows sway lists at that moment. Actions go to the tree unchanged (they name objects, not
    places)."""

    def __init__(self, tree: DesktopTree, desktop: SwayDesktop) -> None:
        self._tree = tree
        self._desktop = desktop

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        nodes, desk = await asyncio.gather(
            self._tree.snapshot(fresh=fresh), asyncio.to_thread(self._desktop.desk)
        )
        if desk is None:
            return tuple(node if node.bounds is None else _unplaced(node) for node in nodes)
        return place_on_layout(nodes, desk)

    def mark(self) -> int:
        return self._tree.mark()

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        return self._tree.heard_since(mark)

    async def do_action(self, ref: str, name: str = "click") -> bool:
        return await self._tree.do_action(ref, name)

    async def set_text(self, ref: str, text: str) -> bool:
        return await self._tree.set_text(ref, text)

    async def grab_focus(self, ref: str) -> bool:
        return await self._tree.grab_focus(ref)

    async def select(self, ref: str, parent: str) -> bool:
        return await self._tree.select(ref, parent)


def _unplaced(node: RawNode) -> RawNode:
    """Without sway's windows no place is known: no bounds rather than window-relative ones."""
    return replace(node, bounds=None)
