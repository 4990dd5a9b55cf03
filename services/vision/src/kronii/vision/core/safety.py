"""The safety layer (seed 001, step 7 and R3-R6) as one table: each row names the rule it comes from,
the action types it looks at, its test, and its verdict. Every row has a test named after it.

Verdicts: BLOCK refuses the whole plan (nothing runs), DROP removes the one action, CONFIRM keeps it
but a person must approve the plan first. Rows are checked in order for each action; the first BLOCK
or DROP ends that action's evaluation, every CONFIRM that applies adds its reason."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kronii.vision.core.actions import Action, ActionClass, ActionType, action_class
from kronii.vision.core.context import Bounds, ScreenContext, UiNode
from kronii.vision.core.pixels import screenshot_to_screen
from kronii.vision.core.targets import called, distinct, kind_of, names_of, spoken

__all__ = [
    "ROWS",
    "Ambiguity",
    "ClassPolicy",
    "SafetyEvaluation",
    "SafetyPolicy",
    "SafetyRow",
    "Verdict",
    "evaluate",
]


class Verdict(enum.StrEnum):
    BLOCK = "block"
    DROP = "drop"
    CONFIRM = "confirm"


class ClassPolicy(enum.StrEnum):
    ALLOW = "allow"
    CONFIRM = "confirm"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class SafetyPolicy:
    # R3: the apps `open_app` may start, by the name a plan uses (matched without case).
    allowed_apps: frozenset[str] = frozenset()
    classes: Mapping[ActionClass, ClassPolicy] = field(
        default_factory=lambda: {
            ActionClass.READ_ONLY: ClassPolicy.ALLOW,
            ActionClass.INPUT: ClassPolicy.ALLOW,
            ActionClass.LAUNCH: ClassPolicy.CONFIRM,
        }
    )
    # Text read with less confidence than this does not steer a click without a person's yes.
    min_ocr_confidence: float = 0.6

    def allows_app(self, name: str) -> bool:
        return name.strip().lower() in {app.lower() for app in self.allowed_apps}


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """A name that matches more than one element (R4): shown in the confirmation dialog."""

    name: str
    candidates: tuple[UiNode, ...]


@dataclass(frozen=True)
class Facts:
    context: ScreenContext
    policy: SafetyPolicy

    def same_name(self, name: str) -> list[UiNode]:
        wanted = spoken(name)
        if not wanted:
            return []
        return [n for n in self.context.tree if n.depth > 0 and wanted in names_of(n)]

    def element(self, action: Action) -> UiNode | None:
        return self.context.node(action.ui_element_id) if action.ui_element_id else None

    def screen_box(self, box: Bounds) -> Bounds:
        ctx = self.context
        return screenshot_to_screen(box, ctx.capture_area, ctx.screenshot_size)

    def ocr_confidence(self, box: Bounds) -> float | None:
        """The confidence of the text the box lies on, or None when no zone overlaps it."""
        x, y = box.center()
        hits = [z.confidence for z in self.context.ocr if z.bounds.contains_point(x, y)]
        return max(hits) if hits else None


Test = Callable[[Action, Facts], bool]
Reason = Callable[[Action, Facts], str]


@dataclass(frozen=True, slots=True)
class SafetyRow:
    id: str
    rule: str
    types: frozenset[ActionType]
    test: Test
    verdict: Verdict
    reason: Reason


def _named(action: Action, facts: Facts) -> str:
    node = facts.element(action)
    return called(node) if node is not None else action.target


def _candidates(action: Action, facts: Facts) -> list[UiNode]:
    """The elements `action` may mean: those its planner named, else the element's own kind that
    share its name (a button and the label inside it are one thing to press, not two)."""
    listed = [
        n for i in action.metadata.get("candidates", "").split(",") if i and (n := facts.context.node(i))
    ]
    if listed:
        return listed
    node = facts.element(action)
    same = facts.same_name(_named(action, facts))
    if node is None:
        return same
    return distinct([n for n in same if kind_of(n) is kind_of(node)] or same)


def _ambiguous(action: Action, facts: Facts) -> bool:
    return len(_candidates(action, facts)) > 1


def _out_of_screen(action: Action, facts: Facts) -> bool:
    if action.bounds is None or facts.element(action) is not None:
        return False
    ctx = facts.context
    width, height = ctx.screenshot_size
    if width <= 0 or height <= 0 or not Bounds(0, 0, width, height).contains(action.bounds):
        return True
    return not ctx.screen_bounds.contains(facts.screen_box(action.bounds))


def _low_confidence(action: Action, facts: Facts) -> bool:
    if action.bounds is None or facts.element(action) is not None or _out_of_screen(action, facts):
        return False
    confidence = facts.ocr_confidence(action.bounds)
    return confidence is None or confidence < facts.policy.min_ocr_confidence


def _class_is(policy: ClassPolicy) -> Test:
    return lambda action, facts: facts.policy.classes.get(action_class(action.type)) is policy


_ALL = frozenset(ActionType)
_CLICK = frozenset({ActionType.CLICK_BY_BOUNDS})
_TYPE = frozenset({ActionType.TYPE_TEXT})

ROWS: tuple[SafetyRow, ...] = (
    SafetyRow(
        "P1", "class policy", _ALL, _class_is(ClassPolicy.DENY), Verdict.BLOCK,
        lambda a, f: f"{action_class(a.type).value.replace('_', '-')} actions are not allowed by policy",
    ),
    SafetyRow(
        "R3", "R3", frozenset({ActionType.OPEN_APP}),
        lambda a, f: not f.policy.allows_app(a.target), Verdict.BLOCK,
        lambda a, f: f"{a.target or '(no app named)'} is not in the allowlist of apps a plan may open",
    ),
    SafetyRow(
        "U1", "step 7 / R6", _ALL,
        lambda a, f: bool(a.ui_element_id) and f.element(a) is None, Verdict.BLOCK,
        lambda a, f: f"element {a.ui_element_id} is not on the screen",
    ),
    SafetyRow(
        "S1", "privacy", _TYPE,
        lambda a, f: (n := f.element(a)) is not None and n.secured, Verdict.BLOCK,
        lambda a, f: "a plan never types into a password or other secured field",
    ),
    SafetyRow(
        "R5", "R5", _CLICK, _out_of_screen, Verdict.DROP,
        lambda a, f: "click_by_bounds outside the screen bounds",
    ),
    SafetyRow(
        "R5b", "R5", _CLICK,
        lambda a, f: a.bounds is None and f.element(a) is None and not a.metadata.get("resolve"), Verdict.DROP,
        lambda a, f: "click_by_bounds names neither an element nor bounds",
    ),
    SafetyRow(
        "R4", "R4", _CLICK | _TYPE, _ambiguous, Verdict.CONFIRM,
        lambda a, f: f"{len(_candidates(a, f))} elements are named {_named(a, f)!r}",
    ),
    SafetyRow(
        "C1", "low OCR confidence", _CLICK, _low_confidence, Verdict.CONFIRM,
        lambda a, f: "the text at the click was read with low confidence (or not at all)",
    ),
    SafetyRow(
        "C2", "model asked", _ALL, lambda a, f: a.require_confirmation, Verdict.CONFIRM,
        lambda a, f: a.metadata.get("ambiguity") or a.metadata.get("reason") or "the planner was not sure",
    ),
    SafetyRow(
        "C3", "confirm action", frozenset({ActionType.CONFIRM}), lambda a, f: True, Verdict.CONFIRM,
        lambda a, f: a.text or "the planner asks for a confirmation",
    ),
    SafetyRow(
        "P2", "class policy", _ALL, _class_is(ClassPolicy.CONFIRM), Verdict.CONFIRM,
        lambda a, f: f"{action_class(a.type).value.replace('_', '-')} actions need a confirmation by policy",
    ),
)  # fmt: skip


@dataclass(frozen=True)
class Dropped:
    index: int
    row: str
    reason: str


@dataclass(frozen=True)
class SafetyEvaluation:
    actions: tuple[Action, ...]
    dropped: tuple[Dropped, ...]
    blocked: str
    blocked_by: str
    ambiguities: tuple[Ambiguity, ...]
    rows_fired: tuple[str, ...]

    @property
    def requires_confirmation(self) -> bool:
        return any(a.require_confirmation for a in self.actions)

    @property
    def runnable(self) -> bool:
        return not self.blocked and bool(self.actions)


def _evaluate_one(
    action: Action, facts: Facts, fired: list[str]
) -> tuple[Action | None, str, Verdict | None]:
    flagged = replace(action, require_confirmation=False) if action.require_confirmation else action
    for row in ROWS:
        if action.type not in row.types or not row.test(action, facts):
            continue
        fired.append(row.id)
        if row.verdict is Verdict.CONFIRM:
            flagged = flagged.flagged(row.reason(action, facts))
            continue
        return None, f"{row.id}: {row.reason(action, facts)}", row.verdict
    return flagged, "", None


def evaluate(actions: Sequence[Action], context: ScreenContext, policy: SafetyPolicy) -> SafetyEvaluation:
    facts = Facts(context, policy)
    kept: list[Action] = []
    dropped: list[Dropped] = []
    fired: list[str] = []
    ambiguities: dict[str, Ambiguity] = {}
    for index, action in enumerate(actions):
        result, reason, verdict = _evaluate_one(action, facts, fired)
        if verdict is Verdict.BLOCK:
            return SafetyEvaluation((), tuple(dropped), reason, reason.split(":", 1)[0], (), tuple(fired))
        if result is None:
            dropped.append(Dropped(index, reason.split(":", 1)[0], reason))
            continue
        if action.type in _CLICK | _TYPE and _ambiguous(action, facts):
            name = _named(action, facts)
            ambiguities.setdefault(name.lower(), Ambiguity(name, tuple(_candidates(action, facts))))
        kept.append(result)
    blocked = "" if kept else "no action is left to run after the safety checks"
    return SafetyEvaluation(
        tuple(kept),
        tuple(dropped),
        blocked,
        "" if kept else "EMPTY",
        tuple(ambiguities.values()),
        tuple(fired),
    )
