"""Notices: notifications another kronii service composed itself (the console critic's warnings, the
supervisor's offer of a failure to an agent), and the rules that decide whether the pipeline shows
one. A notice may carry an offer (``offer_id``): its bubble gets a button (``offer_label``) whose click
is the person's yes; it passes the same gates as any notice. A notice starts no round and calls no model;
the rules are the pipeline's gates for it. Pure: the ledger of what was shown is a value, times are
passed in.

| row | when | outcome |
| --- | --- | --- |
| N1 | the person muted this kind of notice (Snooze, Don't show again) | muted |
| N2 | the same dedup key was shown within DEDUP_WINDOW_MS | duplicate |
| N3 | the person holds the desktop (the broker said so), unless high priority | held |
| N4 | the source showed MAX_PER_HOUR notices in the last hour, unless high priority | over_budget |
| N5 | otherwise | shown |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "DEDUP_WINDOW_MS",
    "MAX_PER_HOUR",
    "NOTICE_RULES",
    "Button",
    "Notice",
    "NoticeGates",
    "NoticeLedger",
    "NoticeOutcome",
    "NoticeVerdict",
    "decide",
]

HOUR_MS = 3_600_000
DEDUP_WINDOW_MS = HOUR_MS
MAX_PER_HOUR = 6


class Button(StrEnum):
    """The keys of a bubble's buttons, as the desktop sends a click back. The yes to an offer is the
    notification's "default" action: a server invokes it for a click on the bubble, and dunst for
    `dunstctl action` (with several buttons and no default, dunst opens its menu instead)."""

    ACCEPT = "default"
    SNOOZE = "snooze"
    DISABLE = "disable"


@dataclass(frozen=True, slots=True)
class Notice:
    source: str
    kind: str
    title: str
    body: str
    dedup_key: str
    high_priority: bool
    at_ms: int
    offer_id: str = ""
    offer_label: str = ""

    @property
    def control_key(self) -> str:
        """What Snooze and Don't show again act on: this source's notices of this kind."""
        return f"notice:{self.source}:{self.kind}"


class NoticeOutcome(StrEnum):
    SHOWN = "shown"
    MUTED = "muted"
    DUPLICATE = "duplicate"
    HELD = "held"
    OVER_BUDGET = "over_budget"


@dataclass(frozen=True, slots=True)
class NoticeGates:
    """What the pipeline knows at the moment: why the kind is muted, and why the desktop is held
    ("" when it is not)."""

    muted: str = ""
    held: str = ""


@dataclass(frozen=True, slots=True)
class NoticeLedger:
    """The notices shown in the last hour: (source, dedup key, when)."""

    shown: tuple[tuple[str, str, int], ...] = ()

    def recorded(self, notice: Notice, now_ms: int) -> NoticeLedger:
        recent = tuple(entry for entry in self.shown if now_ms - entry[2] < HOUR_MS)
        return NoticeLedger((*recent, (notice.source, notice.dedup_key, now_ms)))

    def last_shown(self, notice: Notice, now_ms: int) -> int | None:
        times = [
            at
            for source, key, at in self.shown
            if source == notice.source and key == notice.dedup_key and now_ms - at < DEDUP_WINDOW_MS
        ]
        return max(times, default=None)

    def shown_in_the_hour(self, source: str, now_ms: int) -> int:
        return sum(1 for shown_by, _, at in self.shown if shown_by == source and now_ms - at < HOUR_MS)


@dataclass(frozen=True, slots=True)
class NoticeVerdict:
    row: str
    outcome: NoticeOutcome
    reason: str


@dataclass(frozen=True, slots=True)
class _Case:
    notice: Notice
    gates: NoticeGates
    ledger: NoticeLedger
    now_ms: int

    def shown_ago(self) -> str:
        shown = self.ledger.last_shown(self.notice, self.now_ms)
        return f"shown {(self.now_ms - (shown or self.now_ms)) // 1000} s ago"


@dataclass(frozen=True, slots=True)
class _Rule:
    row: str
    outcome: NoticeOutcome
    applies: Callable[[_Case], bool]
    reason: Callable[[_Case], str]


NOTICE_RULES: tuple[_Rule, ...] = (
    _Rule("N1", NoticeOutcome.MUTED, lambda c: bool(c.gates.muted), lambda c: f"muted: {c.gates.muted}"),
    _Rule(
        "N2",
        NoticeOutcome.DUPLICATE,
        lambda c: bool(c.notice.dedup_key) and c.ledger.last_shown(c.notice, c.now_ms) is not None,
        lambda c: f"the same notice was {c.shown_ago()}",
    ),
    _Rule(
        "N3",
        NoticeOutcome.HELD,
        lambda c: bool(c.gates.held) and not c.notice.high_priority,
        lambda c: f"silent: {c.gates.held}",
    ),
    _Rule(
        "N4",
        NoticeOutcome.OVER_BUDGET,
        lambda c: (
            not c.notice.high_priority
            and c.ledger.shown_in_the_hour(c.notice.source, c.now_ms) >= MAX_PER_HOUR
        ),
        lambda c: f"the {c.notice.source} has shown {MAX_PER_HOUR} notices in the last hour",
    ),
)


def decide(notice: Notice, gates: NoticeGates, ledger: NoticeLedger, now_ms: int) -> NoticeVerdict:
    """The first row that applies decides; N5 (shown) when none does."""
    case = _Case(notice, gates, ledger, now_ms)
    for rule in NOTICE_RULES:
        if rule.applies(case):
            return NoticeVerdict(rule.row, rule.outcome, rule.reason(case))
    return NoticeVerdict("N5", NoticeOutcome.SHOWN, "")
