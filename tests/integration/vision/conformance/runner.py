"""Runs one case of the conformance table against a real engine: the app up (started again when the
table says so), the tester's look at the app before, the intent POSTed as a person's request, then the
tester's look again until the effect shows or the plan has ended 3 s ago. The verdict is the tester's:
right, wrong element (the app changed, but not as asked), false done (the plan said done, nothing
happened), or wrong outcome (the engine answered otherwise than the table says)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.integration.vision.conformance.apps import RunningApp, Seen, look, reset, start_app
from tests.integration.vision.conformance.effects import changes
from tests.integration.vision.conformance.table import APPS, Case
from tests.integration.vision.vision_desktop import A11yDesktop

__all__ = ["AppKeeper", "Result", "run_case", "summary"]

FINAL = frozenset({"done", "failed", "stopped", "denied", "blocked", "stale", "expired"})
HELD = frozenset({"awaiting_confirmation"})
EFFECT_GRACE_S = 2.0
PLAN_TIMEOUT_S = 30.0
RIGHT, WRONG_ELEMENT, FALSE_DONE, WRONG_OUTCOME = "right", "wrong element", "false done", "wrong outcome"


@dataclass
class Result:
    case: Case
    verdict: str
    state: str
    detail: str
    # POST of the intent to the moment the tester first saw its effect (cases that must be done).
    to_effect_s: float | None = None
    plan: dict[str, Any] = field(default_factory=dict)


class AppKeeper:
    """The app of the current cases, kept up between them and started again when the table says so."""

    def __init__(self, desktop: A11yDesktop, on_start: Callable[[RunningApp], None] | None = None) -> None:
        self._desktop = desktop
        # Called with each app once it is up (the benchmark tells capture's stand-in sensor about it).
        self._on_start = on_start
        self._stack = contextlib.ExitStack()
        self._app: RunningApp | None = None

    def get(self, key: str) -> RunningApp:
        app = self._app
        if app is None or app.spec.key != key or not app.alive:
            self.close()
            self._app = self._stack.enter_context(start_app(self._desktop, APPS[key]))
            if self._on_start is not None:
                self._on_start(self._app)
        assert self._app is not None
        return self._app

    def close(self) -> None:
        self._stack.close()
        self._stack = contextlib.ExitStack()
        self._app = None

    def __enter__(self) -> AppKeeper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _context(url: str) -> dict[str, Any]:
    return dict(httpx.get(f"{url}/v1/vision/context", timeout=30).json())


def _front_title(seen: Seen) -> str:
    windows = [n for n in seen.nodes if n.depth == 1 and seen.shown(n)]
    return windows[0].name if windows else ""


def _engine_sees(url: str, title: str, timeout_s: float = 3.0, settle_s: float = 1.5) -> str:
    """Wait until the engine names the app's window as the one in front, then until the screen holds
    still for two looks in a row (a window that has just appeared may still be painting; a blinking
    caret never holds still, so that wait ends after `settle_s`). What the engine named, if not it."""
    deadline = time.monotonic() + timeout_s
    context = _context(url)
    while title and context.get("focused_title") != title and time.monotonic() < deadline:
        time.sleep(0.15)
        context = _context(url)
    front = str(context.get("focused_title"))
    settled = time.monotonic() + settle_s
    last = context.get("screenshot_hash")
    while time.monotonic() < settled:
        time.sleep(0.15)
        now = _context(url).get("screenshot_hash")
        if now is not None and now == last:
            break
        last = now
    return "" if not title or front == title else f"the engine named {front!r} in front, not {title!r}"


def _plan_line(plan: dict[str, Any]) -> str:
    actions = [f"{a.get('type')} {a.get('target', '')!r}" for a in plan.get("actions", [])]
    asked = [f"{a['name']} x{len(a.get('candidates', []))}" for a in plan.get("ambiguities", [])]
    why = plan.get("reason") or plan.get("blocked") or ""
    return (
        f"plan {plan.get('state')}: {why!r}; rows {plan.get('safety_rows', [])}; actions {actions}"
        + (f"; asks {asked}" if asked else "")
        + f"; ran {[r.get('how') for r in plan.get('results', [])]}"
    )


def _answer_matches(case: Case, plan: dict[str, Any]) -> str | None:
    expect, state = case.expect, plan.get("state", "")
    if state not in expect.states:
        return f"the plan is {state}, not {'/'.join(sorted(expect.states))}"
    if expect.row and expect.row not in plan.get("safety_rows", []):
        return f"the row {expect.row} did not fire"
    if state in ("blocked", "failed") and not (plan.get("reason") or plan.get("blocked")):
        return "it ended without a sentence saying why"
    if expect.ask is not None:
        name, count = expect.ask
        asked = [(a["name"].lower(), len(a.get("candidates", []))) for a in plan.get("ambiguities", [])]
        if not any(k == count and (not name or n == name.lower()) for n, k in asked):
            return f"the ambiguity {name!r} x{count} is not listed ({asked})"
    return None


def _verdict(case: Case, plan: dict[str, Any], before: Seen, after: Seen) -> tuple[str, str]:
    missing = case.effect(before, after)
    wrong_answer = _answer_matches(case, plan)
    changed = changes(before) != changes(after)
    detail = _plan_line(plan) + f"; effect: {missing or 'seen'}"
    if missing is None and wrong_answer is None:
        return RIGHT, detail
    if missing is not None and changed:
        return WRONG_ELEMENT, detail
    if missing is not None and plan.get("state") == "done":
        return FALSE_DONE, detail
    return WRONG_OUTCOME, f"{wrong_answer or missing}; {detail}"


def _watch(
    url: str, app: RunningApp, case: Case, plan: dict[str, Any], before: Seen, started: float
) -> tuple[dict[str, Any], Seen, float | None]:
    """Poll the plan and the app until the plan has ended (or waits for a person) and either the effect
    shows or EFFECT_GRACE_S passed since."""
    ended_at: float | None = None
    to_effect: float | None = None
    deadline = time.monotonic() + PLAN_TIMEOUT_S
    while True:
        after = look(app)
        if to_effect is None and case.effect(before, after) is None:
            to_effect = time.perf_counter() - started
        if plan.get("state") in FINAL | HELD:
            ended_at = ended_at or time.monotonic()
            if to_effect is not None or time.monotonic() - ended_at > EFFECT_GRACE_S:
                return plan, after, to_effect
        elif time.monotonic() > deadline:
            return plan, after, to_effect
        else:
            plan = dict(httpx.get(f"{url}/v1/vision/plans/{plan['plan_id']}", timeout=10).json())
        time.sleep(0.1)


def run_case(url: str, keeper: AppKeeper, case: Case, engine_output: Callable[[], str]) -> Result:
    app = keeper.get(case.app)
    reset(app)
    before = look(app)
    front = _engine_sees(url, _front_title(before))
    before = look(app)
    started = time.perf_counter()
    response = httpx.post(f"{url}/v1/vision/plans", json={"intent": case.intent, "execute": True}, timeout=60)
    if response.status_code != 200:
        return Result(
            case, WRONG_OUTCOME, "refused", f"POST answered {response.status_code}: {response.text}"
        )
    plan, after, to_effect = _watch(url, app, case, dict(response.json()), before, started)
    if plan.get("state") in HELD:
        httpx.post(f"{url}/v1/vision/plans/{plan['plan_id']}/deny", timeout=10)
    verdict, detail = _verdict(case, plan, before, after)
    detail = f"{detail}; {front}" if front else detail
    if case.secret:
        seen_by_engine = json.dumps(_context(url)) + json.dumps(plan) + engine_output()
        if case.secret in seen_by_engine:
            verdict, detail = WRONG_OUTCOME, f"the password's text reached the context or plan; {detail}"
    if case.fresh or not app.alive:
        keeper.close()
    return Result(case, verdict, str(plan.get("state")), detail, to_effect, plan)


def summary(results: list[Result]) -> dict[str, dict[str, int]]:
    """Per toolkit: how many cases, right, wrong element, false done, wrong outcome."""
    table: dict[str, dict[str, int]] = {}
    for result in results:
        row = table.setdefault(
            result.case.toolkit, {"cases": 0, RIGHT: 0, WRONG_ELEMENT: 0, FALSE_DONE: 0, WRONG_OUTCOME: 0}
        )
        row["cases"] += 1
        row[result.verdict] += 1
    return table
