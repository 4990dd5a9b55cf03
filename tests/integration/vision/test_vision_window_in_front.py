"""The window in front, on real programs of different toolkits overlapping (issue 31): the engine names
the X server's focus window, not the one whose toolkit keeps a stale `focused` state (Qt); a front
window whose tree is not on the bus blocks a plan with what it needs; and a plan made for one window
never types into another raised before its keys are sent. What a window holds is read independently
(the test's own AT-SPI reader), never from the engine's word.

One desktop, broker and engine serve the module; each test starts and stops its own programs."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.x_windows import XWindows
from kronii.vision.core.front import XDesk, XWindow

from tests.desktop import focus_window, stop_process, wait_until
from tests.infra import InfraUrls
from tests.integration.vision.vision_desktop import A11yDesktop, start_a11y_desktop
from tests.integration.vision.vision_service_support import VisionEngine, start_vision

QT_ON_THE_BUS = {"QT_ACCESSIBILITY": "1"}


@pytest.fixture(scope="module")
def desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as shared:
        yield shared


@pytest.fixture(scope="module")
def vision(
    infra: InfraUrls, migrated_database: str, desktop: A11yDesktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VisionEngine]:
    with start_vision(infra, migrated_database, desktop, tmp_path_factory.mktemp("front")) as engine:
        yield engine


def x_desk(desktop: A11yDesktop) -> XDesk:
    windows = XWindows(desktop.display)
    try:
        return windows.desk()
    finally:
        windows.close()


def window_of(desktop: A11yDesktop, pid: int) -> XWindow | None:
    return x_desk(desktop).of_pid(pid)


@contextlib.contextmanager
def program(desktop: A11yDesktop, argv: Sequence[str], env: dict[str, str] | None = None) -> Iterator[int]:
    """`argv` on the desktop until the block ends; yields its pid once its window is in front."""
    process = subprocess.Popen(
        argv, env={**desktop.env, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(
            lambda: (w := window_of(desktop, process.pid)) is not None and x_desk(desktop).focus == w.window_id,
            timeout_s=15, what=f"{argv[0]}'s window in front",
        )  # fmt: skip
        yield process.pid
    finally:
        stop_process(process)


def context(vision: VisionEngine) -> dict[str, Any]:
    response = httpx.get(f"{vision.url}/v1/vision/context", timeout=30)
    assert response.status_code == 200, response.text
    return dict(response.json())


def wait_for_front(vision: VisionEngine, title: str, timeout_s: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    seen = context(vision)
    while seen["focused_title"] != title or len(seen["tree"]) < 2:
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)
        seen = context(vision)
    return seen


def text_of(desktop: A11yDesktop, pid: int) -> str:
    """The text of the program's editable text areas, read by the test's own AT-SPI connection."""

    async def read() -> str:
        reader = AtspiReader(desktop.bus_address)
        await reader.connect()
        try:
            nodes = await reader.snapshot()
        finally:
            await reader.close()
        return "|".join(n.text for n in nodes if n.pid == pid and n.editable and n.role == "text")

    return asyncio.run(read())


def test_a_gtk_dialog_over_a_qt_editor_is_named_the_window_in_front_and_its_tree_is_the_one_shown(
    vision: VisionEngine, desktop: A11yDesktop
) -> None:
    with (
        program(desktop, ["featherpad"], QT_ON_THE_BUS) as editor,
        program(desktop, ["zenity", "--entry", "--title", "Question", "--text", "Your name?"]) as dialog,
    ):
        seen = wait_for_front(vision, "Question")
        assert seen["window"]["pid"] == dialog and seen["window"]["app"] == "Zenity", seen["window"]
        assert seen["window"]["x_id"] == x_desk(desktop).focus
        assert seen["window_problem"] == ""
        assert not any(node["name"] == "Untitled" for node in seen["tree"]), seen["tree"]
        # The person's own command says the same.
        run = vision.kronii("vision", "context", "--json")
        assert run.code == 0, run.shown
        assert '"focused_title": "Question"' in run.shown
        shown = vision.kronii("vision", "context")
        assert f"window: Question (Zenity, pid {dialog}, X window " in shown.shown, shown.shown
        assert editor != dialog


def test_a_qt_window_over_a_gtk_editor_is_named_the_window_in_front(
    vision: VisionEngine, desktop: A11yDesktop
) -> None:
    with (
        program(desktop, ["mousepad"]),
        program(desktop, ["speedcrunch"], QT_ON_THE_BUS) as calculator,
    ):
        front = window_of(desktop, calculator)
        assert front is not None
        seen = wait_for_front(vision, front.title)
        assert seen["window"]["pid"] == calculator and seen["window"]["app"] == front.wm_class
        assert seen["window_problem"] == ""


def _blocked_plan(vision: VisionEngine) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while not context(vision)["window_problem"]:
        assert time.monotonic() < deadline, context(vision)
        time.sleep(0.2)
    plan = vision.plan("click the OK button", execute=True)  # nothing runs: the plan is blocked
    assert plan["state"] == "blocked", plan
    return plan


def test_a_front_window_whose_tree_is_not_on_the_bus_blocks_the_plan_with_what_its_toolkit_needs(
    vision: VisionEngine, desktop: A11yDesktop
) -> None:
    # A GTK dialog started without its accessibility bridge, in front of a Qt editor that is on the bus.
    with (
        program(desktop, ["featherpad"], QT_ON_THE_BUS),
        program(
            desktop, ["zenity", "--entry", "--title", "Bridgeless", "--text", "Name?"], {"NO_AT_BRIDGE": "1"}
        ) as dialog,
    ):
        plan = _blocked_plan(vision)
        assert plan["reason"].startswith(
            f"the window in front is 'Bridgeless' (Zenity, pid {dialog}), but"
        ), plan
        assert "accessibility tree is not on the bus" in plan["reason"]
        assert "NO_AT_BRIDGE must not be set" in plan["reason"]
        assert context(vision)["window"]["pid"] == dialog


def test_any_program_without_a_tree_in_front_blocks_the_plan_with_a_sentence(
    vision: VisionEngine, desktop: A11yDesktop
) -> None:
    with (
        program(desktop, ["zenity", "--question", "--title", "Behind", "--text", "Keep it?"]),
        program(desktop, ["xterm", "-T", "Plain terminal"]) as terminal,
    ):
        plan = _blocked_plan(vision)
        assert plan["reason"].startswith(
            f"the window in front is 'Plain terminal' (XTerm, pid {terminal}), but"
        )
        assert "accessibility tree is not on the bus" in plan["reason"]
        assert "does not speak AT-SPI" in plan["reason"]


def test_a_chromium_window_without_its_renderers_tree_in_front_blocks_the_plan_with_the_flag_it_needs(
    vision: VisionEngine, desktop: A11yDesktop, tmp_path: Path
) -> None:
    page = "data:text/html,<title>Order</title><button>Pay</button>"
    browser = [
        "chromium", "--no-sandbox", "--no-first-run", "--password-store=basic", f"--user-data-dir={tmp_path}", page,
    ]  # fmt: skip
    with program(desktop, browser) as chromium:
        plan = _blocked_plan(vision)
        assert f"(Chromium, pid {chromium}), but its accessibility tree is empty" in plan["reason"], plan
        assert "--force-renderer-accessibility" in plan["reason"]


def test_a_plan_made_for_one_window_never_types_into_another_raised_before_its_keys(
    vision: VisionEngine, desktop: A11yDesktop
) -> None:
    with (
        program(desktop, ["featherpad"], QT_ON_THE_BUS) as editor,
        program(desktop, ["zenity", "--info", "--title", "Notice", "--text", "Read me"]) as notice,
    ):
        wait_for_front(vision, "Notice")
        editor_window = window_of(desktop, editor)
        before = text_of(desktop, editor)
        assert editor_window is not None and "hello" not in before
        plan = vision.plan("wait 500 ms then wait 3 s then type hello")
        if plan["state"] == "awaiting_confirmation":
            assert vision.kronii("vision", "approve", plan["plan_id"]).code == 0
        assert plan["state"] != "blocked", plan
        # Past the approval's binding (the first step ran on A in front), during the second wait:
        wait_until(lambda: len(vision.get(plan["plan_id"])["results"]) >= 1, 10, what="the first wait done")
        focus_window(desktop.display, editor_window.window_id)  # B raised before the keys are sent
        ended = vision.wait_for(plan["plan_id"])
        assert ended["state"] == "failed", ended
        assert ended["reason"] == (
            "the window in front is now 'Untitled' (FeatherPad), not 'Notice' (Zenity) the plan was "
            "approved for: nothing was typed or clicked"
        )
        assert text_of(desktop, editor) == before
        assert notice
