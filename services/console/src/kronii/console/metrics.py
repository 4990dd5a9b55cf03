"""The console's Prometheus metrics, all kronii_console_*. Labels are fixed codes (refusal reasons,
page slugs, topics): never a path with an id, a title or a token."""

from __future__ import annotations

from typing import Any

from kronii.foundation.telemetry import CommonMetrics
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from kronii.stores.subjects import Topic
from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["AUDIT_ACTIONS", "LIVE_TOPICS", "RECEIVES", "REFUSALS", "ConsoleMetrics", "zero_common_series"]

# The console's live topics and the NATS subjects that feed each (only names, ids and states go on).
LIVE_TOPICS: dict[str, tuple[Topic[Any], ...]] = {
    "activity": (subjects.STATE_CHANGED, subjects.FOCUS_CHANGED, subjects.LOCK_CHANGED),
    "agents": (subjects.SUPERVISOR_OUTCOME, subjects.SUPERVISOR_COLLISION),
    "control": (subjects.BROKER_CONTROL,),
    "captures": (subjects.CAPTURE_STATUS,),
    "decisions": (subjects.PIPELINE_NOTICE,),
}
RECEIVES = tuple(topic for topics in LIVE_TOPICS.values() for topic in topics)
AUDIT_ACTIONS = (
    "console.link",
    "console.login",
    "console.logout",
    "console.refused",
    *(f"console.agents.{action}" for action in ("trigger", "pause", "resume", "force")),
    *(
        f"console.control.{action}"
        for action in ("wait", "interrupt", "stop", "approve", "deny", "grant", "renew")
    ),
    "console.captures.open",
    "console.captures.delete",
    *(f"console.decisions.{action}" for action in ("snooze", "mute", "unmute")),
    *(f"console.privacy.{action}" for action in ("delete_day", "delete_app", "delete_all")),
)
REFUSALS = (
    "misdirected", "foreign_origin", "foreign_site", "not_cli", "no_session", "csrf", "too_large",
    "bad_length", "starting",
)  # fmt: skip


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters the console feeds, at 0 before its first event."""
    start_at_zero(common, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


class ConsoleMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.refusals = Counter(
            "kronii_console_refusals",
            "Requests the console's edge refused, by reason (no session, CSRF, foreign Host or Origin, ...)",
            ["reason"],
            registry=registry,
        )
        self.logins = Counter(
            "kronii_console_logins",
            "Login links redeemed, by outcome (ok|refused)",
            ["outcome"],
            registry=registry,
        )
        self.live_clients = Gauge(
            "kronii_console_live_clients", "Pages listening to live updates now", registry=registry
        )
        self.live_dropped = Counter(
            "kronii_console_live_dropped",
            "Live updates dropped for a page that did not keep up (its queue was full)",
            registry=registry,
        )
        for reason in REFUSALS:
            self.refusals.labels(reason)
        for outcome in ("ok", "refused"):
            self.logins.labels(outcome)
