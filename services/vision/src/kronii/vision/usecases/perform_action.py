"""One action of a plan, done the way its element's kind means, and seen to have had its effect.

The element's kind (core/targets.py) decides the verb: a button is pressed with its own action, a row
is selected through its list's Selection (never `activate`, a list's double-click), a check box is
toggled (not at all when it already is as asked), a menu is opened, a field takes the text. Where the
element offers no such verb, a click at its centre goes through the input broker. Then the tree is read
again until the effect the kind promises is there (core/effects.py); without it the action fails with
what was seen, and the plan stops: "done" always means the screen shows it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Built, RawNode, ScreenContext
from kronii.vision.core.effects import Effect, Observation, effect_for, observe
from kronii.vision.core.pixels import logical_to_screen, screen_point_of, screenshot_to_screen, surface_origin
from kronii.vision.core.revalidation import current_node
from kronii.vision.core.rules_planner import resolve_now
from kronii.vision.core.targets import ACTIONS_BY_KIND, Kind, kind_of
from kronii.vision.ports import Accessibility, DesktopControl, Launcher

__all__ = ["ActionFailed", "PerformAction"]

Send = Callable[[Awaitable[None]], Awaitable[None]]
_OFF_SCREEN = -(2**30)


class ActionFailed(Exception):
    """The action could not be done, or its effect was not seen: `str()` says what was seen."""


def _verb(node: RawNode, kind: Kind) -> str:
    """The node's own action for "click" on its kind (matched without case), or ""."""
    offered = {name.lower(): name for name in node.actions}
    return next((offered[v] for v in ACTIONS_BY_KIND[kind] if v in offered), "")


def _origin(approved: ScreenContext) -> tuple[int, int]:
    """Where the window's extents start on the screen (GTK4 gives them relative to its window)."""
    window = next((n.bounds for n in approved.tree if n.depth == 0), None)
    return surface_origin(window, approved.window.area if approved.window is not None else None)


def _describe(node: RawNode) -> str:
    return f"{node.role} {node.name!r}" if node.name else node.role


class PerformAction:
    def __init__(
        self,
        accessibility: Accessibility,
        control: DesktopControl,
        launcher: Launcher,
        send: Send,
        *,
        effect_timeout_s: float = 2.0,
        window_timeout_s: float = 10.0,
        poll_s: float = 0.1,
        observe: Callable[[str, bool], None] = lambda effect, seen: None,
    ) -> None:
        self._tree = accessibility
        self._control = control
        self._launcher = launcher
        self._send = send
        self._effect_timeout_s = effect_timeout_s
        self._window_timeout_s = window_timeout_s
        self._poll_s = poll_s
        self._observe = observe

    async def __call__(self, action: Action, approved: ScreenContext, fresh: Built) -> str:
        if action.type is ActionType.WAIT:
            await asyncio.sleep(action.delay_ms / 1000)
            return "waited"
        if action.type is ActionType.CONFIRM:
            return "confirmed"
        if action.type is ActionType.OPEN_APP:
            self._launcher.open(action.target)
            seen = await self._until(Effect.WINDOW, "", fresh.raw, timeout_s=self._window_timeout_s)
            if not seen.seen:
                raise ActionFailed(f"{action.target} was started, but no window of it appeared: {seen.what}")
            return "launched; a new window appeared"
        node = self._element(action, approved, fresh)
        if action.type is ActionType.TYPE_TEXT:
            return await self._type(action, node, fresh.raw)
        return await self._click(action, approved, node, fresh.raw)

    def _element(self, action: Action, approved: ScreenContext, fresh: Built) -> RawNode | None:
        """The element the action names: by the approved screen's id, or found now (a step after a
        screen change names what was not there when the plan was made)."""
        node = current_node(action, approved, fresh.raw)
        if node is not None or not action.metadata.get("resolve"):
            return node
        found = resolve_now(action, fresh.context)
        if isinstance(found, str):
            raise ActionFailed(found)
        node = current_node(found, fresh.context, fresh.raw)
        if node is None:
            raise ActionFailed(f"{action.target!r} was found but is gone again")
        if node.secured and action.type is ActionType.TYPE_TEXT:
            raise ActionFailed("a plan never types into a password or other secured field")
        return node

    async def _click(
        self, action: Action, approved: ScreenContext, node: RawNode | None, before: Sequence[RawNode]
    ) -> str:
        if node is None:
            assert action.bounds is not None  # the safety layer dropped clicks with neither
            box = screenshot_to_screen(action.bounds, approved.capture_area, approved.screenshot_size)
            x, y = screen_point_of(box)
            mark = self._tree.mark()
            await self._send(self._control.click(x, y))
            return await self._seen(
                f"click at ({x}, {y}) through the broker", Effect.CHANGED, "", before, pid=0, mark=mark
            )
        kind = kind_of(node)
        want = action.metadata.get("want", "")
        checked = "checked" in node.states
        if kind is Kind.TOGGLE and want and checked == (want == "checked"):
            return f"{_describe(node)} was already {want}: nothing to do"
        mark = self._tree.mark()
        how = await self._press(node, kind, approved)
        # "open the X menu" on a menu button (GTK4's) is kept to its word: a menu must open.
        asked = Kind.MENU if action.metadata.get("kind") == "menu" else kind
        effect = effect_for(asked, want=want, was_checked=checked)
        return await self._seen(how, effect, node.ref, before, pid=node.pid, mark=mark)

    async def _press(self, node: RawNode, kind: Kind, approved: ScreenContext) -> str:
        if kind is Kind.ROW and await self._tree.select(node.ref, node.parent or ""):
            return f"selected {_describe(node)} in its list"
        if kind is Kind.FIELD and await self._tree.grab_focus(node.ref):
            return f"gave {_describe(node)} the focus"
        verb = _verb(node, kind)
        if verb and await self._tree.do_action(node.ref, verb):
            return f"{_describe(node)}: its accessibility action {verb!r}"
        box = node.bounds
        if box is None or box.empty or box.x <= _OFF_SCREEN:
            raise ActionFailed(f"{_describe(node)} offers no way to press it and is not on the screen")
        x, y = screen_point_of(logical_to_screen(box, approved.scale))
        dx, dy = _origin(approved)
        x, y = x + dx, y + dy
        await self._send(self._control.click(x, y))
        return f"{_describe(node)}: a click at ({x}, {y}) through the broker"

    async def _type(self, action: Action, node: RawNode | None, before: Sequence[RawNode]) -> str:
        if node is None:
            await self._send(self._control.type_text(action.text))
            return "keys through the broker"
        if (
            node.editable
            and not node.secured
            and await self._tree.set_text(node.ref, node.text + action.text)
        ):
            how = "accessibility text"
        else:
            await self._focus(node)
            await self._send(self._control.type_text(action.text))
            how = "keys through the broker into the focused field"
        return await self._seen(how, Effect.TEXT, node.ref, before, text=action.text, pid=node.pid)

    async def _focus(self, node: RawNode) -> None:
        """Keys go wherever the focus is: into the named field, or not at all. The field must say it
        has the focus before the first key: Chromium moves it a moment after GrabFocus answers, and
        keys sent in between went nowhere."""
        if "focused" in node.states:
            return
        if not await self._tree.grab_focus(node.ref):
            raise ActionFailed(f"{_describe(node)} would not take the focus, so no keys were typed")
        if not (await self._until(Effect.FOCUSED, node.ref, (), pid=node.pid)).seen:
            raise ActionFailed(f"{_describe(node)} did not show the focus, so no keys were typed")

    async def _seen(
        self, how: str, effect: Effect, ref: str, before: Sequence[RawNode], *, text: str = "", pid: int,
        mark: int | None = None,
    ) -> str:  # fmt: skip
        seen = await self._until(effect, ref, before, text=text, pid=pid, mark=mark)
        if not seen.seen:
            raise ActionFailed(
                f"{how}, but {seen.what} within {self._effect_timeout_s:g} s: the expected effect "
                f"({effect.value}) was not seen, so the plan stops here"
            )
        return f"{how}; seen: {seen.what}"

    async def _until(
        self, effect: Effect, ref: str, before: Sequence[RawNode], *, text: str = "", pid: int = 0,
        timeout_s: float | None = None, mark: int | None = None,
    ) -> Observation:  # fmt: skip
        deadline = time.monotonic() + (timeout_s or self._effect_timeout_s)
        while True:
            after = await self._tree.snapshot(fresh=True)
            heard = self._tree.heard_since(mark) if mark is not None else ()
            seen = observe(effect, ref, before, after, text=text, pid=pid, heard=heard)
            if seen.seen or time.monotonic() >= deadline:
                self._observe(effect.value, seen.seen)
                return seen
            await asyncio.sleep(self._poll_s)
