"""Notices other kronii services compose (the critic's warnings, on kronii.pipeline.notice): the rules
N1-N5 of core/notices.py, the notice desk that shows one on the pipeline's channels, and the check of
the message as it comes off the bus."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.desktop.hold import DesktopHold, DesktopHolds
from kronii.pipeline.api.convert import notice_from_message
from kronii.pipeline.core.notices import (
    DEDUP_WINDOW_MS,
    MAX_PER_HOUR,
    Notice,
    NoticeGates,
    NoticeLedger,
    NoticeOutcome,
    decide,
)
from kronii.pipeline.usecases.show_notice import NoticeDesk
from kronii.pipeline.v1 import pipeline_pb2 as pb

from tests.unit.pipeline.runner_fakes import FakeAudit, FakeClock, FakeNotifier

NOW = 1_800_000_000_000
CURL = Notice(
    source="critic",
    kind="dangerous",
    title="kronii: a download was piped into a shell",
    body="curl … | sh ran what the server sent",
    dedup_key="dangerous:curl_to_shell",
    high_priority=True,
    at_ms=NOW,
)
SECRET = replace(CURL, kind="secret", title="kronii: a secret on the command line", high_priority=False,
                 dedup_key="secret:1")  # fmt: skip


def _shown(*notices: Notice, at: int = NOW - 1_000) -> NoticeLedger:
    ledger = NoticeLedger()
    for notice in notices:
        ledger = ledger.recorded(notice, at)
    return ledger


def test_n1_a_kind_the_person_muted_is_not_shown_even_when_high_priority() -> None:
    verdict = decide(CURL, NoticeGates(muted="disabled"), NoticeLedger(), NOW)
    assert (verdict.row, verdict.outcome, verdict.reason) == ("N1", NoticeOutcome.MUTED, "muted: disabled")


def test_n2_the_same_notice_within_the_hour_is_shown_once() -> None:
    verdict = decide(CURL, NoticeGates(), _shown(CURL, at=NOW - 60_000), NOW)
    assert (verdict.row, verdict.outcome) == ("N2", NoticeOutcome.DUPLICATE)
    assert verdict.reason == "the same notice was shown 60 s ago"
    later = decide(CURL, NoticeGates(), _shown(CURL, at=NOW - DEDUP_WINDOW_MS), NOW)
    assert later.outcome is NoticeOutcome.SHOWN


def test_n3_while_the_person_holds_the_desktop_only_a_high_priority_notice_shows() -> None:
    held = NoticeGates(held="the user holds the desktop (stop_now)")
    assert decide(SECRET, held, NoticeLedger(), NOW).outcome is NoticeOutcome.HELD
    assert decide(SECRET, held, NoticeLedger(), NOW).reason == "silent: the user holds the desktop (stop_now)"
    assert decide(CURL, held, NoticeLedger(), NOW).outcome is NoticeOutcome.SHOWN


def test_n4_a_source_shows_at_most_its_hours_budget_except_high_priority() -> None:
    others = [replace(SECRET, dedup_key=f"secret:{index}") for index in range(10, 10 + MAX_PER_HOUR)]
    ledger = _shown(*others)
    verdict = decide(SECRET, NoticeGates(), ledger, NOW)
    assert (verdict.row, verdict.outcome) == ("N4", NoticeOutcome.OVER_BUDGET)
    assert decide(CURL, NoticeGates(), ledger, NOW).outcome is NoticeOutcome.SHOWN
    assert decide(SECRET, NoticeGates(), _shown(*others[1:]), NOW).outcome is NoticeOutcome.SHOWN


def test_n5_otherwise_the_notice_is_shown() -> None:
    verdict = decide(SECRET, NoticeGates(), NoticeLedger(), NOW)
    assert (verdict.row, verdict.outcome, verdict.reason) == ("N5", NoticeOutcome.SHOWN, "")


def _desk(notifier: FakeNotifier, audit: FakeAudit, holds: DesktopHolds | None = None) -> NoticeDesk:
    return NoticeDesk(notifier, lambda: holds or DesktopHolds(), audit, FakeClock(NOW))


async def test_a_shown_notice_goes_out_with_its_own_words_and_snooze_acts_on_its_kind() -> None:
    notifier, audit = FakeNotifier(), FakeAudit()
    verdict = await _desk(notifier, audit).receive(CURL)
    assert verdict.outcome is NoticeOutcome.SHOWN
    [(run_id, notification, key)] = notifier.sent
    assert run_id.startswith("notice-") and key == "notice:critic:dangerous"
    assert (notification.title, notification.body) == (CURL.title, CURL.body)
    assert notification.source_summary == "from kronii's critic"
    [entry] = audit.entries
    assert entry["action"] == "pipeline.notice" and entry["actor"] == "critic"
    assert (entry["subject"], entry["outcome"], entry["notification_id"]) == ("dangerous", "shown", "n-1")


async def test_the_desk_remembers_what_it_showed_and_reads_the_mute_and_the_hold() -> None:
    notifier, audit = FakeNotifier(), FakeAudit()
    hold = DesktopHold("current", until=NOW / 1000 + 60, reason="user_input_override")
    desk = _desk(notifier, audit, DesktopHolds().updated(hold))
    assert (await desk.receive(CURL)).outcome is NoticeOutcome.SHOWN
    assert (await desk.receive(CURL)).outcome is NoticeOutcome.DUPLICATE
    assert (await desk.receive(SECRET)).outcome is NoticeOutcome.HELD
    notifier.muted_keys["notice:critic:dangerous"] = "snoozed for 15 min"
    muted = await desk.receive(replace(CURL, dedup_key="dangerous:rm_rf_broad"))
    assert (muted.outcome, muted.reason) == (NoticeOutcome.MUTED, "muted: snoozed for 15 min")
    assert len(notifier.sent) == 1
    assert [entry["outcome"] for entry in audit.entries] == ["shown", "duplicate", "held", "muted"]


def test_a_notice_off_the_bus_is_checked_before_the_core_sees_it() -> None:
    message = pb.Notice(source="critic", kind="dangerous", title=" Careful ", body="why", dedup_key="k",
                        high_priority=True)  # fmt: skip
    notice = notice_from_message(message, NOW)
    assert (notice.title, notice.high_priority, notice.at_ms) == ("Careful", True, NOW)
    bad = {
        "source": pb.Notice(kind="dangerous", title="t"),
        "kind": pb.Notice(source="critic", kind="a.b", title="t"),
        "title": pb.Notice(source="critic", kind="dangerous", title="  "),
        "at most": pb.Notice(source="critic", kind="dangerous", title="t" * 201),
    }
    for words, message in bad.items():
        with pytest.raises(ValueError, match=words):
            notice_from_message(message, NOW)
