"""api/convert: a plan as the facade answers it (core PlanView) turned into vision.proto's Plan, as the
HTTP API shows it in JSON: every field the person or the caller reads, taken from the held plan."""

from __future__ import annotations

from dataclasses import replace

from kronii.edge.api_edge import as_json
from kronii.vision.api.convert import plan_message
from kronii.vision.core.context import Bounds, OcrZone, UiNode
from kronii.vision.core.plan_book import PlanView
from kronii.vision.core.safety import Ambiguity, Dropped

from tests.unit.vision.test_vision_orchestration import PERSON, SHOT_HASH, rig, settled

OK_WITH_BOUNDS = UiNode(
    "e7", "app|/ok1", "push button", "OK", frozenset(), Bounds(1, 2, 3, 4), (), False, "", 1
)
OK_WITHOUT_BOUNDS = UiNode("e8", "app|/ok2", "push button", "OK", frozenset(), None, (), False, "", 1)


async def test_a_run_plan_shows_its_actions_with_bounds_and_descriptions_and_each_steps_result() -> None:
    desk = rig(zones=(OcrZone("Submit", 0.95, Bounds(10, 10, 20, 10)),))
    record = await desk.planning.make("click Submit", PERSON, execute=True)
    await settled(record)
    shown = as_json(plan_message(PlanView.of(record)))
    assert shown["plan_id"] == record.id and shown["state"] == "done" and shown["requester"] == PERSON
    assert shown["screenshot_hash"] == SHOT_HASH and shown["fingerprint"] == record.fingerprint
    assert shown["created_ms"] == str(record.created_ms)  # int64 in JSON, as protobuf writes it
    (action,) = shown["actions"]
    assert action["type"] == "click_by_bounds"
    assert action["bounds"] == {"x": 10, "y": 10, "width": 20, "height": 10}
    assert action["description"] == record.evaluation.actions[0].describe()
    assert shown["results"] == [
        {
            "index": 0,
            "action": record.results[0]["action"],
            "how": "click at (140, 230) through the broker; seen: the application changed",
        }
    ]


async def test_a_flagged_plan_shows_why_it_asks_and_the_ambiguous_names_candidates() -> None:
    desk = rig()
    record = await desk.planning.make("open Firefox", PERSON, execute=False)
    view = PlanView.of(record)
    view = replace(
        view,
        evaluation=replace(
            view.evaluation,
            dropped=(Dropped(1, "P3", "not on the screen"),),
            ambiguities=(Ambiguity("OK", (OK_WITH_BOUNDS, OK_WITHOUT_BOUNDS)),),
        ),
    )
    shown = as_json(plan_message(view))
    assert shown["state"] == "awaiting_confirmation" and shown["requires_confirmation"] is True
    (action,) = shown["actions"]
    assert action["type"] == "open_app" and action["require_confirmation"] is True
    assert action["metadata"] == dict(record.evaluation.actions[0].metadata) != {}
    assert shown["dropped"] == [{"index": 1, "row": "P3", "reason": "not on the screen"}]
    assert shown["ambiguities"] == [
        {
            "name": "OK",
            "candidates": [
                {"id": "e7", "role": "push button", "bounds": {"x": 1, "y": 2, "width": 3, "height": 4}},
                {"id": "e8", "role": "push button"},
            ],
        }
    ]
    assert shown["safety_rows"] == list(record.evaluation.rows_fired) != []
