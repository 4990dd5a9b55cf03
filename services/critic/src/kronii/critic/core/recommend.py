"""The seed's ActionRecommender: critiques become the one line printed at the next prompt and, when
one is worth interrupting for, a desktop notification (a pipeline trigger). The policy gates both:
Do-Not-Disturb and a mute silence everything, the trigger toggles drop a kind, the verbosity picks
what reaches the prompt. The same notification is not repeated within an hour."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kronii.critic.core.model import Trigger
from kronii.critic.core.policy import Policy, Verbosity
from kronii.critic.core.triggers import Critique, Severity, strongest

__all__ = ["NOTIFYING_KINDS", "ActionRecommender", "Notification", "Recommendation"]

NOTIFYING_KINDS = frozenset({Trigger.REPEATED_FAILURE, Trigger.DANGEROUS})
QUIET_KINDS = frozenset({Trigger.DANGEROUS, Trigger.SECRET})
NOTIFY_AGAIN_AFTER_MS = 3_600_000
# The notification's title, as a person reads it at a glance; the critique's text is the body.
_TITLES = {
    Trigger.DANGEROUS: "a dangerous command ran",
    Trigger.REPEATED_FAILURE: "the same failure again",
}
_REMEMBERED_KEYS = 1024


@dataclass(frozen=True)
class Notification:
    """What the pipeline is asked to show on the desktop; every text is redacted already. ``times``:
    how often a repeated failure was seen (it becomes an offer to an agent, core.offers)."""

    kind: Trigger
    title: str
    body: str
    dedup_key: str
    severity: Severity
    at_ms: int
    times: int = 0


@dataclass(frozen=True)
class Recommendation:
    prompt_line: str | None = None
    notification: Notification | None = None


def visible(critique: Critique, verbosity: Verbosity) -> bool:
    if verbosity is Verbosity.QUIET:
        return critique.kind in QUIET_KINDS
    if verbosity is Verbosity.NORMAL:
        return critique.severity >= Severity.NOTICE
    return True


class ActionRecommender:
    def __init__(self, notify_again_after_ms: int = NOTIFY_AGAIN_AFTER_MS) -> None:
        self._again_after_ms = notify_again_after_ms
        self._notified_at: dict[str, int] = {}

    def recommend(self, critiques: Iterable[Critique], policy: Policy, now_ms: int) -> Recommendation:
        if policy.silent_at(now_ms):
            return Recommendation()
        shown = [
            critique
            for critique in critiques
            if policy.enabled(critique.kind) and visible(critique, policy.verbosity)
        ]
        top = strongest(shown)
        if top is None:
            return Recommendation()
        worth = strongest(critique for critique in shown if critique.kind in NOTIFYING_KINDS)
        return Recommendation(top.line, self._notification(worth, now_ms))

    def _notification(self, critique: Critique | None, now_ms: int) -> Notification | None:
        if critique is None:
            return None
        last = self._notified_at.get(critique.dedup_key)
        if last is not None and now_ms - last < self._again_after_ms:
            return None
        self._remember(critique.dedup_key, now_ms)
        title = "kronii critic: " + _TITLES.get(critique.kind, critique.kind.value.replace("_", " "))
        return Notification(
            critique.kind, title, critique.text, critique.dedup_key, critique.severity, now_ms, critique.times
        )

    def _remember(self, key: str, now_ms: int) -> None:
        self._notified_at[key] = now_ms
        if len(self._notified_at) > _REMEMBERED_KEYS:
            expired = [k for k, at in self._notified_at.items() if now_ms - at >= self._again_after_ms]
            for stale in expired or list(self._notified_at)[: len(self._notified_at) // 2]:
                del self._notified_at[stale]
