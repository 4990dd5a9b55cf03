"""The rules are the floor: how a model's answer for a role is combined with the rules' answer for
the same input, so that a model can add to what the rules do but never take away. Pure.

- extractor: the rules' fragments, plus the model's of kinds the rules did not find;
- synthesizer: the rules' candidates first (so the rules' best stays the best), then the model's
  for actions the rules did not propose; fragments, hash, conflicts and cost label are the rules';
- planner: a model may notify where the rules stay silent only for a soft reason (confidence);
  never for a hard one (nothing to suggest, the same context again, already suggested today). It
  may not stay silent where the rules notify. Its cooldown, wake-up and filters count only where
  they are no quieter than the rules' (a shorter cooldown, an earlier wake-up, fewer filters);
- notifier: the rules' notification when the model has none for a plan that notifies, and none
  when the plan does not; the actions keep the rules' snooze time and disable target.

Each function returns the combined value and, when the rules overruled the model, why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kronii.pipeline.core.roles.values import (
    Fragment,
    Notification,
    NotificationActionKind,
    Plan,
    PlanHistory,
    Synthesis,
)

__all__ = ["fragments", "hard_silence", "notification", "plan", "synthesis"]


def fragments(model: Sequence[Fragment], rules: Sequence[Fragment]) -> list[Fragment]:
    known = {fragment.kind for fragment in rules}
    return [*rules, *(fragment for fragment in model if fragment.kind not in known)]


def synthesis(model: Synthesis, rules: Synthesis) -> Synthesis:
    actions = {candidate.action for candidate in rules.candidates}
    added = tuple(candidate for candidate in model.candidates if candidate.action not in actions)
    return replace(rules, candidates=(*rules.candidates, *added))


def hard_silence(synthesis: Synthesis, history: PlanHistory, repeat_window_ms: int) -> str | None:
    """The rules' reasons for silence that no model may overrule, or None."""
    top = synthesis.top
    if top is None:
        return "there is nothing to suggest"
    if any(
        h == synthesis.context_hash and history.now_ms - t < repeat_window_ms
        for h, t in history.recent_hashes
    ):
        return "the same context was planned within the repeat window"
    if top.key in history.surfaced_today:
        return "it was already suggested today"
    return None


def plan(
    model: Plan, rules: Plan, synthesis: Synthesis, history: PlanHistory, repeat_window_ms: int
) -> tuple[Plan, str]:
    if rules.notify and not model.notify:
        return rules, "overruled: the model stayed silent where the rules notify"
    if model.notify and not rules.notify:
        reason = hard_silence(synthesis, history, repeat_window_ms)
        if reason is not None:
            return rules, f"overruled: the model would notify although {reason}"
    quieter = model.min_cooldown_ms > rules.min_cooldown_ms or model.next_wakeup_ms > rules.next_wakeup_ms
    extra_filters = set(model.trigger_filters) - set(rules.trigger_filters)
    combined = replace(
        model,
        min_cooldown_ms=min(model.min_cooldown_ms, rules.min_cooldown_ms),
        next_wakeup_ms=min(model.next_wakeup_ms, rules.next_wakeup_ms),
        trigger_filters=tuple(f for f in model.trigger_filters if f in rules.trigger_filters),
        capture_preemption=rules.capture_preemption,
    )
    if quieter or extra_filters:
        return combined, "bounded: the model's schedule was quieter than the rules'; the rules' bounds kept"
    return combined, ""


def notification(
    model: Notification | None, rules: Notification | None, plan: Plan
) -> tuple[Notification | None, str]:
    if not plan.notify:
        return None, "overruled: the model wrote a notification for a silent plan" if model else ""
    if model is None or rules is None:
        return rules, "overruled: the model wrote no notification for a plan that notifies" if rules else ""
    kept = {action.kind: action for action in rules.actions}
    actions = tuple(
        replace(action, snooze_ms=kept[action.kind].snooze_ms, target=kept[action.kind].target)
        if action.kind in kept
        else action
        for action in model.actions
        if action.kind in (NotificationActionKind.SNOOZE, NotificationActionKind.DISABLE)
    )
    return (
        replace(model, actions=actions, context_hash=rules.context_hash, candidate_key=rules.candidate_key),
        "",
    )
