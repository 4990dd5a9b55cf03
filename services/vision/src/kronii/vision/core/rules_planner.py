"""The rules backend's planner: the simple intents, planned deterministically so that the whole path
(context, plan, safety, confirmation, broker, AT-SPI) runs without a model.

  open APP | launch APP | start APP
  click [on] [the] NAME [button|link|tab|item|box]
  type TEXT into|in [the] FIELD [field|box|entry]
  type TEXT                     (into the focused field)
  wait N [ms|s]
  STEP then STEP ...            (the steps in order)

An element is found by its accessible name first, then by OCR text (a click by bounds)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kronii.vision.core.actions import MAX_WAIT_MS, Action, ActionType
from kronii.vision.core.commands import PlanAnswer
from kronii.vision.core.context import ScreenContext, UiNode

__all__ = ["RulesPlan", "RulesPlanner", "plan_by_rules"]

SUPPORTED = "open APP, click the NAME button, type TEXT into FIELD, type TEXT, wait N s"

_QUOTE = "\"'\u201c\u201d\u2018\u2019"
_OPEN = re.compile(r"^(?:open|launch|start|run)\s+(?:the\s+)?(?P<app>.+?)(?:\s+app)?$", re.I)
_CLICK = re.compile(
    r"^(?:click|press|push|hit|select|choose)\s+(?:on\s+)?(?:the\s+)?(?P<name>.+?)"
    r"(?:\s+(?:button|link|tab|item|box|menu|option))?$",
    re.I,
)
_TYPE_INTO = re.compile(
    r"^(?:type|enter|write|fill in)\s+(?P<text>[\"\u201c'\u2018][^\"\u201d'\u2019]*[\"\u201d'\u2019]|.+?)"
    r"\s+(?:into|in)\s+(?:the\s+)?(?P<field>.+?)"
    r"(?:\s+(?:field|box|entry))?$",
    re.I,
)
_TYPE = re.compile(r"^(?:type|enter|write)\s+(?P<text>.+)$", re.I)
_WAIT = re.compile(r"^wait\s+(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>ms|milliseconds?|s|secs?|seconds?)?$", re.I)
_CLICKABLE = frozenset({"push button", "toggle button", "check box", "radio button", "link", "menu item"})
_FIELDS = frozenset({"text", "entry", "password text", "spin button", "combo box"})


@dataclass(frozen=True)
class RulesPlan:
    actions: tuple[Action, ...]
    # Why there are no actions ("" when there are).
    note: str = ""


def _unquote(text: str) -> str:
    return text.strip().strip(_QUOTE).strip()


def _by_name(context: ScreenContext, name: str, roles: frozenset[str]) -> list[UiNode]:
    wanted = name.lower()
    nodes = [n for n in context.tree if n.depth > 0]
    exact = [n for n in nodes if n.name.lower() == wanted]
    preferred = [n for n in exact if n.role in roles]
    if preferred or exact:
        return preferred or exact
    return [n for n in nodes if wanted in n.name.lower() and n.role in roles]


def _click(context: ScreenContext, name: str) -> RulesPlan:
    matches = _by_name(context, name, _CLICKABLE)
    if matches:
        first = matches[0]
        return RulesPlan(
            (
                # Several matches: the first is proposed, and the safety layer's R4 puts all of them
                # before the person.
                Action(ActionType.CLICK_BY_BOUNDS, target=first.name, ui_element_id=first.id),
            )
        )
    wanted = name.lower()
    zones = [z for z in context.ocr if wanted in z.text.lower()]
    if zones:
        zone = max(zones, key=lambda z: z.confidence)
        return RulesPlan((Action(ActionType.CLICK_BY_BOUNDS, target=name, bounds=zone.bounds),))
    return RulesPlan((), f"nothing named {name!r} is on the screen")


def _type(context: ScreenContext, text: str, field: str | None) -> RulesPlan:
    if field is None:
        focused = [n for n in context.tree if n.focused and n.editable]
        node = focused[0] if focused else None
        if node is None:
            return RulesPlan((Action(ActionType.TYPE_TEXT, text=text),))
        return RulesPlan((Action(ActionType.TYPE_TEXT, text=text, target=node.name, ui_element_id=node.id),))
    matches = _by_name(context, field, _FIELDS)
    if not matches:
        return RulesPlan((), f"no field named {field!r} is on the screen")
    first = matches[0]
    return RulesPlan((Action(ActionType.TYPE_TEXT, text=text, target=first.name, ui_element_id=first.id),))


def _wait(amount: str, unit: str | None) -> RulesPlan:
    millis = float(amount) * (1 if unit and unit.lower().startswith("m") else 1000)
    return RulesPlan((Action(ActionType.WAIT, delay_ms=min(MAX_WAIT_MS, round(millis))),))


_THEN = re.compile(r"\s*(?:,\s*)?\b(?:and\s+)?then\b\s*", re.I)
MAX_STEPS = 8


def plan_by_rules(intent: str, context: ScreenContext) -> RulesPlan:
    """The actions for `intent` ("A then B" for several), or none with a note saying why."""
    steps = [step for step in _THEN.split(" ".join(intent.split())) if step]
    if len(steps) > MAX_STEPS:
        return RulesPlan((), f"at most {MAX_STEPS} steps in one intent")
    actions: list[Action] = []
    for step in steps:
        planned = _plan_step(step, context)
        if not planned.actions:
            return planned
        actions.extend(planned.actions)
    return RulesPlan(tuple(actions)) if actions else RulesPlan((), "say what to do")


def _plan_step(step: str, context: ScreenContext) -> RulesPlan:
    said = step.rstrip(".!")
    if match := _WAIT.match(said):
        return _wait(match["n"], match["unit"])
    if match := _TYPE_INTO.match(said):
        return _type(context, _unquote(match["text"]), _unquote(match["field"]))
    if match := _TYPE.match(said):
        return _type(context, _unquote(match["text"]), None)
    if match := _OPEN.match(said):
        return RulesPlan((Action(ActionType.OPEN_APP, target=_unquote(match["app"])),))
    if match := _CLICK.match(said):
        return _click(context, _unquote(match["name"]))
    return RulesPlan((), f"without a model, kronii plans only: {SUPPORTED}")


class RulesPlanner:
    """The rules as the engine's planner (the default backend): no model, no I/O."""

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        answer = plan_by_rules(intent, context)
        return PlanAnswer(answer.actions, answer.note, "rules")
