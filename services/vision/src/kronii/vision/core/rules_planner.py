"""The rules backend's planner: the simple intents, planned deterministically so that the whole path
(context, plan, safety, confirmation, broker, AT-SPI) runs without a model.

  open APP | launch APP | start APP
  open [the] NAME menu                       (a menu of the window, not an app)
  click|press [on] [the] NAME [button|link|tab|item|menu|row|check box]
  select|pick|choose NAME | the second row | row 3 | the last item
  check|tick NAME   uncheck|untick|clear NAME   toggle NAME
  type TEXT into|in [the] FIELD [field|box|entry]    (the field by name, label, placeholder, or
  type TEXT into the text field                       "the field" when there is one)
  type TEXT                     (into the focused field)
  wait N [ms|s]
  STEP then STEP ...            (the steps in order)

An element is found by what a person would call it (core/targets.py): what they would press before a
label with the same words. A step after one that changes the screen (a menu opened) may name an element
that is not on the screen yet: it is found when its turn comes, on the screen as it is then. Without an
element, OCR text is clicked by its bounds."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kronii.vision.core.actions import MAX_WAIT_MS, Action, ActionType
from kronii.vision.core.commands import PlanAnswer
from kronii.vision.core.context import ScreenContext, UiNode
from kronii.vision.core.targets import Kind, Pick, called, find, nth_row, ordinal

__all__ = ["RulesPlan", "RulesPlanner", "plan_by_rules", "resolve_now"]

SUPPORTED = (
    "open APP, open the NAME menu, click the NAME button, select NAME / the second row, check NAME, "
    "type TEXT into FIELD, type TEXT, wait N s"
)

_QUOTE = "\"'\u201c\u201d\u2018\u2019"
_MENU = re.compile(r"^(?:open|show|pull down)\s+(?:the\s+)?(?:(?P<name>.+?)\s+)?menu$", re.I)
_OPEN = re.compile(r"^(?:open|launch|start|run)\s+(?:the\s+)?(?P<app>.+?)(?:\s+app)?$", re.I)
_CLICK = re.compile(
    r"^(?:click|press|push|hit|tap|activate)\s+(?:on\s+)?(?:the\s+)?(?P<name>.+?)"
    r"(?:\s+(?P<what>button|link|tab|item|menu item|menu|option|row|check\s?box|box|entry))?$",
    re.I,
)
_SELECT = re.compile(
    r"^(?:select|pick|choose)\s+(?:the\s+)?(?P<name>.+?)(?:\s+(?P<what>row|item|option|entry))?$", re.I
)
_CHECK = re.compile(
    r"^(?P<verb>check|tick|uncheck|untick|clear|toggle|enable|disable)\s+(?:the\s+)?(?P<name>.+?)"
    r"(?:\s+(?:check\s?box|box|option|switch|toggle))?$",
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

# What "click NAME" may mean, in the order a person would: something to press, a check box, a row,
# and only then any other named element (an area that takes clicks), clicked where it is.
_ANY = (
    frozenset({Kind.PRESS, Kind.MENU}),
    frozenset({Kind.TOGGLE}),
    frozenset({Kind.ROW}),
    frozenset({Kind.OTHER, Kind.LABEL}),
)
_BY_WORD: dict[str, tuple[frozenset[Kind], ...]] = {
    "button": (frozenset({Kind.PRESS, Kind.TOGGLE, Kind.MENU}),),
    "link": (frozenset({Kind.PRESS}),),
    "tab": (frozenset({Kind.PRESS}),),
    "menu": (frozenset({Kind.MENU}),),
    "menu item": (frozenset({Kind.PRESS, Kind.MENU, Kind.TOGGLE}),),
    "item": (frozenset({Kind.PRESS, Kind.MENU}), frozenset({Kind.ROW})),
    "option": (frozenset({Kind.ROW}), frozenset({Kind.PRESS, Kind.TOGGLE})),
    "row": (frozenset({Kind.ROW}),),
    "entry": (frozenset({Kind.ROW}),),
    "checkbox": (frozenset({Kind.TOGGLE}),),
    "check box": (frozenset({Kind.TOGGLE}),),
    "box": (frozenset({Kind.TOGGLE}),),
}
_FIELDS = frozenset({Kind.FIELD})
_WANT = {"check": "checked", "tick": "checked", "enable": "checked", "uncheck": "unchecked",
         "untick": "unchecked", "clear": "unchecked", "disable": "unchecked", "toggle": ""}  # fmt: skip


@dataclass(frozen=True)
class RulesPlan:
    actions: tuple[Action, ...]
    # Why there are no actions ("" when there are).
    note: str = ""


@dataclass
class _Steps:
    """What planning the earlier steps of one intent knows: whether the screen will have changed."""

    context: ScreenContext
    screen_moves: bool = False


def _unquote(text: str) -> str:
    return text.strip().strip(_QUOTE).strip()


def _on(node: UiNode, kind: str, **extra: str) -> Action:
    return Action(
        ActionType.CLICK_BY_BOUNDS, target=called(node),
        ui_element_id=node.id, metadata={"kind": kind, **extra},
    )  # fmt: skip


def _chosen(pick: Pick, kind: str, **extra: str) -> Action:
    """An action on the element `pick` names; with several candidates, the safety layer's R4 puts
    them all before the person."""
    return _with_candidates(_on(pick.nodes[0], kind, **extra), pick)


def _with_candidates(action: Action, pick: Pick) -> Action:
    if len(pick.nodes) < 2:
        return action
    return replace(action, metadata={**action.metadata, "candidates": ",".join(n.id for n in pick.nodes)})


def _later(phrase: str, kind: str, steps: _Steps, **extra: str) -> RulesPlan | None:
    """An action on an element found when its turn comes, when an earlier step changes the screen."""
    if not steps.screen_moves:
        return None
    metadata = {"kind": kind, "resolve": phrase, **extra}
    return RulesPlan((Action(ActionType.CLICK_BY_BOUNDS, target=phrase, metadata=metadata),))


def _click(
    steps: _Steps, name: str, what: str | None, tries: tuple[frozenset[Kind], ...] = _ANY
) -> RulesPlan:
    context = steps.context
    groups = _BY_WORD.get((what or "").lower(), tries)
    position = ordinal(f"{name} {what}" if what else name)
    if position is not None:
        return _row(steps, position)
    for kinds in groups:
        pick = find(context.tree, name, kinds)
        if pick.nodes:
            return RulesPlan((_chosen(pick, "click"),))
    if (later := _later(name, "click", steps)) is not None:
        return later
    wanted = name.lower()
    zones = [z for z in context.ocr if wanted in z.text.lower()]
    if zones:
        zone = max(zones, key=lambda z: z.confidence)
        return RulesPlan((Action(ActionType.CLICK_BY_BOUNDS, target=name, bounds=zone.bounds),))
    return RulesPlan((), f"nothing named {name!r} is in the window in front")


def _row(steps: _Steps, position: int) -> RulesPlan:
    pick = nth_row(steps.context.tree, position)
    if pick.nodes:
        return RulesPlan((_on(pick.nodes[0], "select"),))
    later = _later(f"row {position}", "select", steps, ordinal=str(position))
    return later or RulesPlan((), pick.note)


def _select(steps: _Steps, name: str, what: str | None) -> RulesPlan:
    position = ordinal(f"{name} {what}" if what else name)
    if position is not None:
        return _row(steps, position)
    rows_first = (frozenset({Kind.ROW}), frozenset({Kind.PRESS, Kind.MENU}), frozenset({Kind.TOGGLE}))
    planned = _click(steps, name, None, rows_first)
    return planned


def _check(steps: _Steps, verb: str, name: str) -> RulesPlan:
    want = _WANT[verb.lower()]
    pick = find(steps.context.tree, name, frozenset({Kind.TOGGLE}))
    if pick.nodes:
        return RulesPlan((_chosen(pick, "toggle", want=want),))
    later = _later(name, "toggle", steps, want=want)
    return later or RulesPlan((), pick.note)


_THE_MENU = frozenset({"the", "main", "app", "application", "hamburger", "primary"})
_MENUS = frozenset({Kind.MENU})
_MENU_BUTTONS = frozenset({Kind.PRESS})


def _menu(steps: _Steps, name: str) -> RulesPlan:
    """ "open the X menu": a menu called X, else a button called X that opens one (GTK4's menu
    buttons do not say they do: the effect check then insists a menu opened); "open the (main) menu":
    the one control called a menu."""
    tree = steps.context.tree
    wanted = "menu" if name.lower() in _THE_MENU else name
    pick = find(tree, wanted, _MENUS)
    if not pick.nodes:
        pick = find(tree, wanted, _MENU_BUTTONS)
    if pick.nodes:
        steps.screen_moves = True
        return RulesPlan((_chosen(pick, "menu"),))
    later = _later(wanted, "menu", steps)
    return later or RulesPlan((), f"no menu called {name!r} is in the window in front")


def _type(steps: _Steps, text: str, field: str | None) -> RulesPlan:
    context = steps.context
    if field is None:
        focused = [n for n in context.tree if n.focused and n.editable]
        node = focused[0] if focused else None
        if node is None:
            return RulesPlan((Action(ActionType.TYPE_TEXT, text=text),))
        return RulesPlan((Action(ActionType.TYPE_TEXT, text=text, target=node.name, ui_element_id=node.id),))
    pick = find(context.tree, field, _FIELDS)
    if not pick.nodes:
        if steps.screen_moves:
            metadata = {"kind": "type", "resolve": field}
            return RulesPlan((Action(ActionType.TYPE_TEXT, text=text, target=field, metadata=metadata),))
        return RulesPlan((), pick.note)
    node = pick.nodes[0]
    action = Action(
        ActionType.TYPE_TEXT, text=text, target=called(node) or field, ui_element_id=node.id,
        metadata={"kind": "type"},
    )  # fmt: skip
    return RulesPlan((_with_candidates(action, pick),))


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
    known = _Steps(context)
    for step in steps:
        planned = _plan_step(step, known)
        if not planned.actions:
            return planned
        actions.extend(planned.actions)
    return RulesPlan(tuple(actions)) if actions else RulesPlan((), "say what to do")


def _plan_step(step: str, steps: _Steps) -> RulesPlan:
    said = step.rstrip(".!")
    if match := _WAIT.match(said):
        return _wait(match["n"], match["unit"])
    if match := _TYPE_INTO.match(said):
        return _type(steps, _unquote(match["text"]), _unquote(match["field"]))
    if match := _TYPE.match(said):
        return _type(steps, _unquote(match["text"]), None)
    if match := _MENU.match(said):
        return _menu(steps, _unquote(match["name"] or "the"))
    if match := _OPEN.match(said):
        return RulesPlan((Action(ActionType.OPEN_APP, target=_unquote(match["app"])),))
    if match := _CHECK.match(said):
        return _check(steps, match["verb"], _unquote(match["name"]))
    if match := _SELECT.match(said):
        return _select(steps, _unquote(match["name"]), match["what"])
    if match := _CLICK.match(said):
        planned = _click(steps, _unquote(match["name"]), match["what"])
        steps.screen_moves = True
        return planned
    return RulesPlan((), f"without a model, kronii plans only: {SUPPORTED}")


class RulesPlanner:
    """The rules as the engine's planner (the default backend): no model, no I/O."""

    async def plan(self, intent: str, context: ScreenContext) -> PlanAnswer:
        answer = plan_by_rules(intent, context)
        return PlanAnswer(answer.actions, answer.note, "rules")


_VERB_OF_WANT = {"checked": "check", "unchecked": "uncheck", "": "toggle"}


def resolve_now(action: Action, context: ScreenContext) -> Action | str:
    """The element a step planned after a screen change names, found on `context` (the screen as it
    is when the step's turn comes), as an action on it; or why there is none, in a sentence."""
    phrase, kind = action.metadata.get("resolve", ""), action.metadata.get("kind", "click")
    steps = _Steps(context)
    if kind == "type":
        planned = _type(steps, action.text, phrase)
    elif kind == "toggle":
        planned = _check(steps, _VERB_OF_WANT.get(action.metadata.get("want", ""), "toggle"), phrase)
    elif kind == "menu":
        planned = _menu(steps, phrase)
    elif kind == "select" and action.metadata.get("ordinal"):
        planned = _row(steps, int(action.metadata["ordinal"]))
    elif kind == "select":
        planned = _select(steps, phrase, None)
    else:
        planned = _click(steps, phrase, None)
    if not planned.actions:
        return f"{planned.note} (looked for when its step came)"
    found = planned.actions[0]
    count = len(found.metadata.get("candidates", "").split(",")) if found.metadata.get("candidates") else 1
    if count > 1:
        return f"{count} elements fit {phrase!r} on the screen as it is now, so nothing was done"
    if not found.ui_element_id:
        return f"nothing named {phrase!r} is an element of the window as it is now"
    return replace(
        found, metadata={**found.metadata, **{k: v for k, v in action.metadata.items() if k == "want"}}
    )
