"""Which window a plan is about: the X server's focus window, matched to its accessibility tree.

The X server is the authority on where keys go (its input focus, walked up to the top-level client
window); the accessibility tree is not: Qt keeps the `focused` state on its focus widget even when its
window is behind another, so the tree alone once named an editor behind a dialog as the window in
front. The X facts come in as plain data (`XDesk`, read by the adapter); the AT-SPI window chosen is
the one of the focus window's process, and among several of that process the one whose title, bounds
and `active` state match the X window best.

The choice is checked against the tree: when the focus window's process has no window on the bus, or
the tree says another application's window is active, the context says so in one sentence a person
understands and a plan made on it is blocked (`FrontChoice.problem`). Without X facts (no display) the
tree's own guess stands, as before: the window holding the focused element, else the active one, else
the last one read.

`covering` says which parts of a window are drawn over by windows that are not the application's
(notification bubbles, other processes' override-redirect popups, any window of a kronii process):
the pixel diff masks them, so kronii's own confirmation bubble never makes an approved plan stale."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kronii.vision.core.context import Bounds, RawNode, WindowFacts

__all__ = [
    "WINDOW_ROLES",
    "FrontChoice",
    "XDesk",
    "XWindow",
    "choose_front",
    "covering",
    "describe",
    "front_window",
    "missing_tree_hint",
    "window_facts",
    "window_guard",
]

WINDOW_ROLES = frozenset({"frame", "window", "dialog", "alert", "file chooser"})

# What a program of each toolkit needs to be on the accessibility bus (the adapter names the toolkit
# from the libraries the process has loaded; any other program gets the generic sentence).
_TOOLKIT_HINTS = {
    "qt": "start Qt programs with QT_ACCESSIBILITY=1 (and the Qt AT-SPI bridge installed)",
    "chromium": "Chromium and Electron programs need --force-renderer-accessibility",
    "electron": "Chromium and Electron programs need --force-renderer-accessibility",
    "java": "Java programs need the ATK bridge (java-atk-wrapper, assistive_technologies in accessibility.properties)",
    "tk": "Tk programs have no AT-SPI support at all",
    "gtk": "GTK programs need the accessibility bridge (at-spi2-atk; NO_AT_BRIDGE must not be set)",
}
_GENERIC_HINT = (
    "it does not speak AT-SPI, or it started before the accessibility bus and must be started again"
)


@dataclass(frozen=True, slots=True)
class XWindow:
    """One mapped top-level window as the X server has it; `area` in X pixels, root coordinates."""

    window_id: int
    pid: int
    title: str
    wm_class: str
    area: Bounds
    executable: str = ""
    toolkit: str = ""
    notification: bool = False
    override_redirect: bool = False
    kronii: bool = False
    # WM_TRANSIENT_FOR: the window this one is a dialog of (0: none).
    transient_for: int = 0

    @property
    def app(self) -> str:
        return self.wm_class or self.executable or f"window {self.window_id:#x}"


@dataclass(frozen=True, slots=True)
class XDesk:
    """The X server's view now: the focus window's top-level client (0: none), _NET_ACTIVE_WINDOW
    (0: none) and the mapped top-level windows, bottom to top."""

    focus: int
    active: int
    stack: tuple[XWindow, ...]

    def window(self, window_id: int) -> XWindow | None:
        return next((w for w in self.stack if w.window_id == window_id), None)

    def of_pid(self, pid: int) -> XWindow | None:
        return next((w for w in reversed(self.stack) if pid and w.pid == pid), None)


@dataclass(frozen=True, slots=True)
class FrontChoice:
    """The AT-SPI window a plan is about (`node`), the X window in front (`x`), why a plan on it must
    not run (`problem`, "" when nothing is wrong) and what else a person should know (`notes`)."""

    node: RawNode | None
    x: XWindow | None
    problem: str = ""
    notes: tuple[str, ...] = ()


def describe(window: XWindow) -> str:
    """How a sentence names an X window: its title and its program."""
    title = f"{window.title!r} " if window.title else ""
    return f"{title}({window.app}, pid {window.pid})" if window.pid else f"{title}({window.app})"


def missing_tree_hint(window: XWindow) -> str:
    return _TOOLKIT_HINTS.get(window.toolkit, _GENERIC_HINT)


def top_windows(nodes: Sequence[RawNode]) -> list[RawNode]:
    """The windows of the tree that are not inside another window (a combo box's popup is not)."""
    tops: list[RawNode] = []
    inside: int | None = None  # the depth of the window whose subtree the walk is in
    for node in nodes:
        if inside is not None and node.depth > inside:
            continue
        inside = None
        if node.role in WINDOW_ROLES:
            tops.append(node)
            inside = node.depth
    return tops


def _tree_guess(nodes: Sequence[RawNode]) -> RawNode | None:
    """The tree's own guess: the window holding the focused element, else the active one, else the
    last window read (the registry lists the newest application last)."""
    windows = top_windows(nodes)
    if not windows:
        return None
    focused = next((n for n in nodes if "focused" in n.states), None)
    if focused is not None:
        owner = next((w for w in windows if w.name == focused.window_title and w.pid == focused.pid), None)
        if owner is not None:
            return owner
    active = [w for w in windows if "active" in w.states]
    return active[0] if active else windows[-1]


def _near(a: Bounds, b: Bounds, slack: int = 48) -> bool:
    return abs(a.x - b.x) <= slack and abs(a.y - b.y) <= slack and abs(a.width - b.width) <= slack


def _score(node: RawNode, x: XWindow) -> int:
    score = 4 if node.name and node.name == x.title else 0
    if node.bounds is not None and _near(node.bounds, x.area):
        score += 2
    return score + (1 if "active" in node.states else 0)


def _match(windows: Sequence[RawNode], x: XWindow) -> RawNode | None:
    """The tree's window for the X window `x`: its process's (by title when the X window names no
    process), the best match of title, bounds and `active` when there are several."""
    own = [w for w in windows if w.pid == x.pid] if x.pid else [w for w in windows if w.name == x.title]
    if not own:
        return None
    best = max(_score(w, x) for w in own)
    return [w for w in own if _score(w, x) == best][-1]


def front_window(nodes: Sequence[RawNode], desk: XDesk | None = None) -> RawNode | None:
    """The tree's window a plan is about (see `choose_front`)."""
    return choose_front(nodes, desk).node


def choose_front(nodes: Sequence[RawNode], desk: XDesk | None) -> FrontChoice:
    """The window in front: the X focus window's, checked against the tree (see the module)."""
    if desk is None:
        return FrontChoice(_tree_guess(nodes), None)
    notes: list[str] = []
    focus = desk.window(desk.focus) if desk.focus else None
    if focus is None and desk.active:
        focus = desk.window(desk.active)
        notes.append("the X server names no focus window: the window manager's active one is taken")
    if focus is None:
        notes.append("the X server names no window in front: the accessibility tree's guess is taken")
        return FrontChoice(_tree_guess(nodes), None, "", tuple(notes))
    if desk.active and desk.focus and desk.active != desk.focus:
        active = desk.window(desk.active)
        shown = describe(active) if active is not None else f"window {desk.active:#x}"
        notes.append(f"the X server's focus is in {describe(focus)}, the window manager names {shown} active")
    windows = top_windows(nodes)
    node = _match(windows, focus)
    if node is None:
        problem = (
            f"the window in front is {describe(focus)}, but its accessibility tree is not on the bus: "
            f"{missing_tree_hint(focus)}"
        )
        return FrontChoice(None, focus, problem, (*notes, problem))
    problem = _disagreement(windows, focus, desk)
    if not problem and not _has_children(nodes, node):
        # On the bus, but nothing under its window: Chromium without its renderer's tree looks so.
        problem = (
            f"the window in front is {describe(focus)}, but its accessibility tree is empty: "
            f"{missing_tree_hint(focus)}"
        )
    return FrontChoice(node, focus, problem, (*notes, problem) if problem else tuple(notes))


def _has_children(nodes: Sequence[RawNode], window: RawNode) -> bool:
    at = nodes.index(window)
    return at + 1 < len(nodes) and nodes[at + 1].depth > window.depth


def _disagreement(windows: Sequence[RawNode], focus: XWindow, desk: XDesk) -> str:
    """A sentence when the tree says another application's window is active ("" when it does not)."""
    other = next((w for w in windows if "active" in w.states and w.pid != focus.pid), None)
    if other is None:
        return ""
    owner = desk.of_pid(other.pid)
    program = owner.app if owner is not None else f"pid {other.pid}"
    return (
        f"the accessibility tree says {other.name!r} ({program}) is active while the X server's focus is "
        f"in {describe(focus)}: the tree cannot be trusted to name what the keys would reach"
    )


def covering(desk: XDesk, window_id: int) -> tuple[Bounds, ...]:
    """The parts of window `window_id` drawn over by windows above it that are not the application's:
    notification bubbles, override-redirect popups of other processes, any window of a kronii process."""
    target = desk.window(window_id)
    if target is None:
        return ()
    above = desk.stack[desk.stack.index(target) + 1 :]
    masks: list[Bounds] = []
    for window in above:
        foreign = (
            window.notification or window.kronii or (window.override_redirect and window.pid != target.pid)
        )
        overlap = _intersection(window.area, target.area)
        if foreign and overlap is not None:
            masks.append(overlap)
    return tuple(masks)


def _intersection(a: Bounds, b: Bounds) -> Bounds | None:
    left, top = max(a.x, b.x), max(a.y, b.y)
    right, bottom = min(a.x + a.width, b.x + b.width), min(a.y + a.height, b.y + b.height)
    if right <= left or bottom <= top:
        return None
    return Bounds(left, top, right - left, bottom - top)


def window_facts(desk: XDesk, window: XWindow) -> WindowFacts:
    return WindowFacts(
        x_id=window.window_id, pid=window.pid, title=window.title, app=window.app, area=window.area,
        covered=covering(desk, window.window_id),
    )  # fmt: skip


def window_guard(approved: WindowFacts | None, desk: XDesk | None) -> str:
    """Why no input may be sent now: "" when the X focus is still in the approved window, or in a
    dialog of it (WM_TRANSIENT_FOR) shown by the same process, as a plan's earlier click may open."""
    if approved is None:
        return ""  # the plan was made without X facts (no display): nothing to compare with
    if desk is None or not desk.focus:
        return (
            f"the X server no longer says which window is in front, and the plan was approved for "
            f"{approved.title!r} ({approved.app}): nothing was typed or clicked"
        )
    if desk.focus == approved.x_id:
        return ""
    now = desk.window(desk.focus)
    if now is not None and now.pid == approved.pid and now.transient_for == approved.x_id:
        return ""  # a dialog of the approved window, opened by the plan's own earlier step

    shown = repr(now.title) if now is not None and now.title else f"window {desk.focus:#x}"
    program = f" ({now.app})" if now is not None else ""
    return (
        f"the window in front is now {shown}{program}, not {approved.title!r} ({approved.app}) the plan "
        "was approved for: nothing was typed or clicked"
    )
