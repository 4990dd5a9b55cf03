"""The model plan path with recorded replies: the real ModelPlanner through the real OpenAIBackend against
a real local chat completions server (tests/llm_server.py) replaying canned streams. R2 (one stricter
retry, then stop), the safety layer on what a model proposes (R3, R5), and what is never sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from kronii.llm.openai import FormatMemory, OpenAIBackend
from kronii.vision.adapters.model_planner import ModelPlanner
from kronii.vision.core.actions import Action, ActionType
from kronii.vision.core.context import Bounds, OcrZone, ScreenContext, UiNode
from kronii.vision.core.safety import SafetyPolicy, evaluate

from tests.llm_server import LlmServer, Reply

# What a careless adapter might have read out of the password field: it must never reach a model.
PASSWORD_TEXT = "correct-horse-battery-staple"
POLICY = SafetyPolicy(allowed_apps=frozenset({"firefox"}))
INTENT = "click the Save button"


def ui(
    node_id: str, role: str, name: str, depth: int = 1, *, text: str = "", secured: bool = False
) -> UiNode:
    return UiNode(
        id=node_id, ref=f"app|/{node_id}", role=role, name=name, states=frozenset(),
        bounds=Bounds(100, 40 * depth, 80, 30), actions=(), editable=role in {"entry", "password text"},
        text=text, depth=depth, secured=secured,
    )  # fmt: skip


def screen(ocr: tuple[OcrZone, ...] = (OcrZone("Save", 0.97, Bounds(100, 40, 80, 30)),)) -> ScreenContext:
    tree = (
        ui("e1", "frame", "Sign up", 0),
        ui("e2", "push button", "Save"),
        ui("e3", "entry", "Name", text="Ada"),
        ui("e4", "password text", "Password", text=PASSWORD_TEXT, secured=True),
    )
    return ScreenContext(
        screenshot_id="shot-7", screenshot_hash="ef" * 32, screenshot_size=(800, 600),
        capture_area=Bounds(0, 0, 800, 600), ocr=ocr, tree=tree, focused_title="Sign up",
        screen_bounds=Bounds(0, 0, 1920, 1080), scale=1.0, taken_at_ms=1_700_000_000_000,
    )  # fmt: skip


def reply(*actions: dict[str, Any]) -> str:
    return json.dumps({"actions": list(actions)})


CLICK_SAVE = reply({"type": "click_by_bounds", "args": {"uiElementId": "e2"}})
CLICK_GHOST = reply({"type": "click_by_bounds", "args": {"uiElementId": "e42"}})


@asynccontextmanager
async def recorded(*texts: str) -> AsyncIterator[tuple[ModelPlanner, LlmServer]]:
    """A planner whose model answers `texts` in turn (the last one again and again)."""
    async with LlmServer({"*": [Reply(text) for text in texts]}) as server:
        backend = OpenAIBackend(server.url, "gemma-3-270m", formats=FormatMemory())
        # Any, as wiring.py does: model_planner.JsonModel's `**kwargs` signature is one the real
        # backends' keyword-only complete_json does not match for mypy.
        model: Any = backend
        try:
            yield ModelPlanner(model, timeout_secs=10), server
        finally:
            await backend.aclose()


def system_prompts(server: LlmServer) -> list[str]:
    return [str(served.body["messages"][0]["content"]) for served in server.served]


async def test_a_valid_reply_becomes_the_plans_actions() -> None:
    async with recorded(CLICK_SAVE) as (planner, server):
        answer = await planner.plan(INTENT, screen())
    assert answer.actions == (Action(ActionType.CLICK_BY_BOUNDS, ui_element_id="e2"),)
    assert answer.note == "" and answer.backend == "openai"
    assert answer.call is not None and answer.call["attempts"] == 1 and answer.call["outcome"] == "ok"
    assert len(server.served) == 1 and server.served[0].role == "vision_planner"


async def test_r2_invalid_once_then_valid_gives_the_actions_after_two_attempts() -> None:
    async with recorded("Sure! I will click Save for you.", CLICK_SAVE) as (planner, server):
        answer = await planner.plan(INTENT, screen())
    assert [a.ui_element_id for a in answer.actions] == ["e2"]
    assert answer.call is not None and answer.call["attempts"] == 2
    first, second = system_prompts(server)
    assert "rejected" not in first
    assert "Your previous reply was rejected: it was not valid JSON" in second


async def test_r2_invalid_twice_stops_with_no_actions_and_a_note() -> None:
    async with recorded('{"actions": [{"type": "dance", "args": {}}]}') as (planner, server):
        answer = await planner.plan(INTENT, screen())
    assert answer.actions == ()
    assert answer.note.startswith(
        "the model gave no usable plan: the vision_planner model gave no valid JSON"
    )
    assert answer.call is not None and answer.call["outcome"] == "invalid_output"
    assert len(server.served) == 2  # one retry, then stop: never a third request


async def test_r5_a_click_outside_the_screen_from_the_model_is_dropped_by_the_safety_layer() -> None:
    off_screen = reply(
        {"type": "click_by_bounds", "args": {"bounds": {"x": 780, "y": 590, "width": 60, "height": 40}}},
        {"type": "type_text", "args": {"text": "Ada", "uiElementId": "e3"}},
    )
    async with recorded(off_screen) as (planner, _):
        answer = await planner.plan(INTENT, screen())
    assert len(answer.actions) == 2  # valid for the schema and the tree: the model's part is done
    verdict = evaluate(answer.actions, screen(), POLICY)
    assert [(d.index, d.row) for d in verdict.dropped] == [(0, "R5")]
    assert [a.type for a in verdict.actions] == [ActionType.TYPE_TEXT]


async def test_r2_an_unknown_element_id_is_sent_back_to_the_model_by_name() -> None:
    async with recorded(CLICK_GHOST, CLICK_SAVE) as (planner, server):
        answer = await planner.plan(INTENT, screen())
    assert [a.ui_element_id for a in answer.actions] == ["e2"]
    second = system_prompts(server)[1]
    assert "out of bounds: action 0 names element 'e42', which is not in ui_tree" in second


async def test_r2_an_unknown_element_id_twice_stops_the_plan() -> None:
    async with recorded(CLICK_GHOST) as (planner, server):
        answer = await planner.plan(INTENT, screen())
    assert answer.actions == () and "e42" in answer.note
    assert len(server.served) == 2


async def test_r3_an_app_the_model_opens_outside_the_allowlist_blocks_the_plan() -> None:
    async with recorded(reply({"type": "open_app", "args": {"target": "xterm"}})) as (planner, _):
        answer = await planner.plan("open a terminal", screen())
    verdict = evaluate(answer.actions, screen(), POLICY)
    assert verdict.blocked_by == "R3" and verdict.actions == ()


async def test_the_prompt_sent_holds_no_password_text_and_no_pixels() -> None:
    async with recorded("not json", CLICK_SAVE) as (planner, server):
        await planner.plan(INTENT, screen())
    assert len(server.served) == 2
    for served in server.served:
        sent = json.dumps(served.body)
        assert PASSWORD_TEXT not in sent
        # Text only: an image would be a list of content parts with an image_url in it.
        assert all(isinstance(m["content"], str) for m in served.body["messages"])
        assert "image_url" not in sent and "data:image" not in sent
        user = str(served.body["messages"][1]["content"])
        # The field is there for the plan to know about, marked secured, without its text.
        assert '{"id": "e4", "role": "password text", "name": "Password", "bounds"' in user
        assert '"secured": true' in user and '"text": "Ada"' in user


async def test_a_context_holding_a_secret_is_refused_by_the_input_guard_and_never_sent() -> None:
    leaked = (OcrZone("deploy key AKIAJ4XW7QZ2MB5RT6NP", 0.9, Bounds(0, 500, 600, 20)),)
    async with recorded(CLICK_SAVE) as (planner, server):
        answer = await planner.plan(INTENT, screen(ocr=leaked))
    assert server.served == []
    assert answer.actions == ()
    assert answer.note.startswith("the model gave no usable plan: refusing to send unredacted input")
    assert "AWS_ACCESS_KEY_ID" in answer.note and "AKIAJ4XW7QZ2MB5RT6NP" not in answer.note
