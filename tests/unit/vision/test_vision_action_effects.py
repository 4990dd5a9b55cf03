"""An action is done only when its effect is seen (core/effects.py, usecases/perform_action.py; issue 31):
each kind of element has its verb and its effect, and an action whose effect does not come is failed
with what was seen, never `done`. The application is scripted: what it does to its own tree after each
call is what a real one was seen to do (a calculator's display, a list's selection, a Qt menu)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Bounds, Built, RawNode, ScreenContext
from kronii.vision.core.effects import Effect, effect_for, observe
from kronii.vision.core.targets import Kind
from kronii.vision.core.tree import prune
from kronii.vision.usecases.perform_action import ActionFailed, PerformAction

SHOWING = frozenset({"showing", "visible", "enabled", "sensitive"})


def node(ref: str, role: str, name: str, depth: int = 1, **fields: object) -> RawNode:
    base = RawNode(
        ref=f":1.9|/{ref}", role=role, name=name, states=SHOWING, bounds=Bounds(10, 10 + depth, 50, 20),
        actions=(), editable=False, text="", depth=depth, parent=None, window_title="App", pid=9,
    )  # fmt: skip
    return replace(base, **fields)  # type: ignore[arg-type]


class App:
    """The tree, and what each call does to it (`on[ref]` replaces nodes after an action on `ref`;
    `says[ref]` are the events the toolkit sends for it, (kind, ref))."""

    def __init__(self, *nodes: RawNode) -> None:
        self.nodes = (node("w", "frame", "App", 0, states=SHOWING | {"active"}), *nodes)
        self.on: dict[str, tuple[RawNode, ...]] = {}
        self.says: dict[str, tuple[tuple[str, str], ...]] = {}
        self.heard: list[tuple[str, str]] = []
        self.calls: list[str] = []

    def _react(self, ref: str) -> None:
        changed = {n.ref: n for n in self.on.pop(ref, ())}
        self.nodes = tuple(changed.pop(n.ref, n) for n in self.nodes) + tuple(changed.values())
        self.heard.extend(self.says.pop(ref, ()))

    def mark(self) -> int:
        return len(self.heard)

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        return tuple(self.heard[mark:])

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        return self.nodes

    async def do_action(self, ref: str, name: str = "click") -> bool:
        self.calls.append(f"{name} {ref.rsplit('/', 1)[1]}")
        self._react(ref)
        return True

    async def set_text(self, ref: str, text: str) -> bool:
        self.calls.append(f"set_text {text}")
        self._react(ref)
        return True

    async def grab_focus(self, ref: str) -> bool:
        return True

    async def select(self, ref: str, parent: str) -> bool:
        self.calls.append(f"select {ref.rsplit('/', 1)[1]}")
        self._react(ref)
        return True


class Hands:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def click(self, x: int, y: int) -> None:
        self.sent.append(f"click {x} {y}")

    async def type_text(self, text: str) -> None:
        self.sent.append(f"type {text}")

    async def acquire(self, lease_seconds: int) -> None: ...

    async def safe_point(self, step: str, sequence: int) -> str:
        return "CONTINUE"

    async def release(self) -> None: ...


class NoLauncher:
    def open(self, app: str) -> None:
        raise AssertionError("nothing is launched here")


def built(app: App) -> Built:
    tree = prune(app.nodes, max_nodes=300, max_depth=40)
    context = ScreenContext(
        screenshot_id="", screenshot_hash="", screenshot_size=(0, 0), capture_area=Bounds(0, 0, 0, 0), ocr=(),
        tree=tree, focused_title="App", screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=0,
    )  # fmt: skip
    return Built(context, np.zeros((2, 2), dtype=np.uint8), app.nodes)


async def perform(app: App, action: Action) -> str:
    hands = Hands()

    async def send(sent: object) -> None:
        await sent  # type: ignore[misc]

    fresh = built(app)
    doing = PerformAction(app, hands, NoLauncher(), send, effect_timeout_s=0.05, poll_s=0.01)
    return await doing(action, fresh.context, fresh)


def on(app: App, name: str, **extra: str) -> Action:
    context = built(app).context
    target = next(n for n in context.tree if n.name == name)
    return Action(ActionType.CLICK_BY_BOUNDS, target=name, ui_element_id=target.id, metadata=extra)


async def test_a_pressed_button_whose_application_changed_is_done() -> None:
    display = node("display", "text", "", text="0")
    app = App(node("b7", "push button", "7", actions=("click",)), display)
    app.on[display.ref.replace("display", "b7")] = (replace(display, text="7"),)
    how = await perform(app, on(app, "7"))
    assert app.calls == ["click b7"] and how.endswith("seen: the application changed")


async def test_a_press_with_no_effect_is_failed_with_what_was_seen_never_done() -> None:
    app = App(node("b7", "push button", "7", actions=("click",)), node("display", "text", "", text="0"))
    with pytest.raises(ActionFailed, match=r"nothing changed in the application .* was not seen"):
        await perform(app, on(app, "7"))


async def test_a_toggle_let_go_at_once_is_done_by_its_applications_own_event() -> None:
    """galculator's "+" is a toggle button that is checked and let go within the click, and its display
    is rewritten with the same "4": a look at the tree afterwards sees nothing, the events do."""
    plus = node("plus", "toggle button", "+", actions=("click",))
    app = App(plus, node("display", "text", "", text="4"))
    app.heard.append(("object:state-changed:checked", plus.ref))  # an earlier press: before the mark
    with pytest.raises(ActionFailed, match="nothing changed in the application"):
        await perform(app, on(app, "+"))
    app.says[plus.ref] = (("object:state-changed:checked", plus.ref),)
    how = await perform(app, on(app, "+"))
    assert how.endswith("seen: the application reported a change (object:state-changed:checked)")
    display_ref = plus.ref.replace("plus", "display")
    app.says[plus.ref] = (("object:text-changed:insert", display_ref),)
    assert "(object:text-changed:insert)" in await perform(app, on(app, "+"))


async def test_focus_hover_tooltips_and_other_applications_events_are_not_a_change() -> None:
    plus = node("plus", "toggle button", "+", actions=("click",))
    app = App(plus)
    other_app = ":1.44|/atspi/accessible/3"
    app.says[plus.ref] = (
        ("object:state-changed:focused", plus.ref), ("object:state-changed:armed", plus.ref),
        ("object:state-changed:pressed", plus.ref), ("object:state-changed:showing", ":1.9|/tooltip"),
        ("object:bounds-changed", plus.ref), ("object:children-changed:add", ":1.9|/w"),
        ("object:state-changed:checked", other_app), ("object:text-changed:insert", other_app),
    )  # fmt: skip
    with pytest.raises(ActionFailed, match="nothing changed in the application"):
        await perform(app, on(app, "+"))


async def test_only_the_kinds_own_verb_runs_never_a_labels_clipboard_copy() -> None:
    app = App(node("l", "label", "7", actions=("clipboard.copy", "menu.popup")))
    with pytest.raises(ActionFailed):
        await perform(app, on(app, "7"))
    assert app.calls == []  # a label is clicked through the broker at most, never with clipboard.copy


async def test_a_row_is_selected_in_its_list_and_seen_selected() -> None:
    cell = node("banana", "table cell", "Banana", 2, actions=("activate",), parent=":1.9|/table")
    app = App(node("table", "table", "Fruit"), cell)
    app.on[cell.ref] = (replace(cell, states=cell.states | {"selected"}),)
    how = await perform(app, on(app, "Banana", kind="select"))
    assert app.calls == ["select banana"] and "seen: selected" in how


async def test_a_check_box_already_as_asked_is_left_alone() -> None:
    app = App(node("cb", "check box", "Bold", actions=("toggle",), states=SHOWING | {"checked"}))
    how = await perform(app, on(app, "Bold", want="checked"))
    assert app.calls == [] and how == "check box 'Bold' was already checked: nothing to do"


async def test_a_toggle_that_does_not_change_the_state_fails() -> None:
    app = App(node("cb", "check box", "Bold", actions=("Toggle",)))
    with pytest.raises(ActionFailed, match="not checked"):
        await perform(app, on(app, "Bold", want="checked"))
    assert app.calls == ["Toggle cb"]  # Qt's capitalised verb is still the toggle


async def test_typed_text_is_done_only_when_the_field_holds_it() -> None:
    field = node("name", "text", "Name", editable=True)
    app = App(field)
    app.on[field.ref] = (replace(field, text="Ada"),)
    context = built(app).context
    element = next(n for n in context.tree if n.name == "Name")
    typing = Action(ActionType.TYPE_TEXT, text="Ada", ui_element_id=element.id)
    assert (await perform(app, typing)).endswith("seen: the field holds 'Ada'")
    app.on[field.ref] = ()  # the field ignores the next text
    with pytest.raises(ActionFailed, match="the field holds 'Ada'"):
        await perform(app, typing)


def test_each_kind_has_its_effect() -> None:
    assert effect_for(Kind.PRESS) is Effect.CHANGED and effect_for(Kind.ROW) is Effect.SELECTED
    assert effect_for(Kind.MENU) is Effect.MENU_OPEN and effect_for(Kind.FIELD, typing=True) is Effect.TEXT
    assert effect_for(Kind.TOGGLE, was_checked=True) is Effect.UNCHECKED
    assert effect_for(Kind.TOGGLE, want="checked", was_checked=True) is Effect.CHECKED


def test_a_menu_opened_when_more_of_its_items_are_on_screen() -> None:
    menu = node("file", "menu item", "File", actions=("ShowMenu",))
    hidden = node("save", "menu item", "Save", 3, states=frozenset({"enabled"}), bounds=Bounds(0, 0, 355, 25))
    shown = replace(hidden, states=SHOWING, bounds=Bounds(6, 47, 355, 25))
    assert not observe(Effect.MENU_OPEN, menu.ref, [menu, hidden], [menu, hidden]).seen
    assert observe(Effect.MENU_OPEN, menu.ref, [menu, hidden], [menu, shown]).seen


def test_focus_moving_is_not_a_change_of_the_application() -> None:
    button = node("b", "push button", "OK")
    focused = replace(button, states=button.states | {"focused"})
    assert not observe(Effect.CHANGED, button.ref, [button], [focused], pid=9).seen


async def test_keys_wait_for_the_field_to_show_the_focus_and_none_are_sent_without_it() -> None:
    field = node("email", "entry", "Email", editable=True)
    app = App(field)
    app.set_text = lambda ref, text: _false()  # type: ignore[method-assign]  # Chromium: no SetTextContents
    context = built(app).context
    element = next(n for n in context.tree if n.name == "Email")
    hands = Hands()

    async def send(sent: object) -> None:
        await sent  # type: ignore[misc]

    fresh = built(app)
    doing = PerformAction(app, hands, NoLauncher(), send, effect_timeout_s=0.05, poll_s=0.01)
    with pytest.raises(ActionFailed, match="did not show the focus, so no keys were typed"):
        await doing(Action(ActionType.TYPE_TEXT, text="hi", ui_element_id=element.id), fresh.context, fresh)
    assert hands.sent == []


async def _false() -> bool:
    return False
