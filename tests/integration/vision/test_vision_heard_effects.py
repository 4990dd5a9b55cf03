"""A press whose effect comes and goes before the next look is still seen (core/effects.py): the
engine hears what the application's toolkit says it did. On real galculator (GTK3) "+" is a toggle
button that is checked and let go within the click, and its display is rewritten with the same "4":
with the look at the tree coming late, as on a loaded machine (the CI failure of "4 + 5 ="), the tree
alone shows nothing, and the plan used to fail; the events carry it to "9"."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.desktop import DesktopTree
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Bounds, Built, RawNode, ScreenContext
from kronii.vision.core.effects import Effect, observe
from kronii.vision.core.tree import prune
from kronii.vision.usecases.perform_action import PerformAction

from tests.integration.vision.conformance.apps import RunningApp, start_app
from tests.integration.vision.conformance.table import APPS
from tests.integration.vision.vision_desktop import A11yDesktop

LATE_S = 0.4  # the first look after an action, as late as seen on a machine under load


class LateTree:
    """The engine's tree whose fresh looks come `LATE_S` late."""

    def __init__(self, tree: DesktopTree) -> None:
        self.tree = tree

    async def snapshot(self, fresh: bool = False) -> tuple[RawNode, ...]:
        if fresh:
            await asyncio.sleep(LATE_S)
        return await self.tree.snapshot(fresh=fresh)

    def mark(self) -> int:
        return self.tree.mark()

    def heard_since(self, mark: int) -> tuple[tuple[str, str], ...]:
        return self.tree.heard_since(mark)

    async def do_action(self, ref: str, name: str = "click") -> bool:
        return await self.tree.do_action(ref, name)

    async def set_text(self, ref: str, text: str) -> bool:
        return await self.tree.set_text(ref, text)

    async def grab_focus(self, ref: str) -> bool:
        return await self.tree.grab_focus(ref)

    async def select(self, ref: str, parent: str) -> bool:
        return await self.tree.select(ref, parent)


class NoHands:
    """No click goes through the broker here: every button has its own action."""

    async def click(self, x: int, y: int) -> None:
        raise AssertionError(f"a click at ({x}, {y}) was sent through the broker")

    async def type_text(self, text: str) -> None:
        raise AssertionError("nothing is typed here")

    async def acquire(self, lease_seconds: int) -> None: ...

    async def safe_point(self, step: str, sequence: int) -> str:
        return "CONTINUE"

    async def release(self) -> None: ...


class NoLauncher:
    def open(self, app: str) -> None:
        raise AssertionError("nothing is launched here")


@dataclass
class Calculator:
    app: RunningApp
    tree: DesktopTree

    async def nodes(self) -> tuple[RawNode, ...]:
        pid = self.app.process.pid
        return tuple(n for n in await self.tree.snapshot(fresh=True) if n.pid == pid)

    async def display(self) -> str:
        return next(n.text for n in await self.nodes() if n.role == "text" and n.text)


@pytest.fixture
def galculator(a11y_desktop: A11yDesktop) -> Iterator[RunningApp]:
    spec = APPS["galculator"]
    with start_app(a11y_desktop, spec) as app:
        yield app


def _built(nodes: tuple[RawNode, ...]) -> Built:
    context = ScreenContext(
        screenshot_id="", screenshot_hash="", screenshot_size=(0, 0), capture_area=Bounds(0, 0, 0, 0), ocr=(),
        tree=prune(nodes, max_nodes=400, max_depth=40), focused_title="galculator",
        screen_bounds=Bounds(0, 0, 1024, 768), scale=1.0, taken_at_ms=0,
    )  # fmt: skip
    return Built(context, np.zeros((2, 2), dtype=np.uint8), nodes)


async def _press(doing: PerformAction, calculator: Calculator, label: str) -> tuple[str, bool]:
    """Press the button `label` as a plan's step; also whether the tree alone showed its effect."""
    fresh = _built(await calculator.nodes())
    element = next(n for n in fresh.context.tree if n.name == label and n.role.endswith("button"))
    action = Action(ActionType.CLICK_BY_BOUNDS, target=label, ui_element_id=element.id)
    how = await doing(action, fresh.context, fresh)
    ref = next(n.ref for n in fresh.raw if n.name == label and n.role.endswith("button"))
    after = await calculator.nodes()
    return how, observe(Effect.CHANGED, ref, fresh.raw, after, pid=calculator.app.process.pid).seen


@pytest.mark.asyncio
async def test_a_toggle_let_go_before_a_late_look_is_done_by_the_event_and_4_plus_5_is_9(
    galculator: RunningApp,
) -> None:
    tree = DesktopTree(AtspiReader(galculator.bus_address, time_budget_s=10.0))
    calculator = Calculator(galculator, tree)
    doing = PerformAction(LateTree(tree), NoHands(), NoLauncher(), _send, effect_timeout_s=2.0)
    try:
        await calculator.nodes()  # connected and listening before the first press
        await asyncio.sleep(0.3)
        await _press(doing, calculator, "AC")
        presses = {label: await _press(doing, calculator, label) for label in ("4", "+", "5", "=")}
        how, tree_alone = presses["+"]
        assert not tree_alone, f"galculator's '+' left something in its tree this time: {how}"
        assert "reported a change (object:" in how, how
        assert await calculator.display() == "9"
    finally:
        with contextlib.suppress(Exception):
            await tree.close()


async def _send(sent: object) -> None:
    await sent  # type: ignore[misc]
