"""A notice that makes an offer (the supervisor's "hand this failure to codex1?", issue 29): shown
through the same gates as any notice, with a yes button whose key is the notification's "default"
action; the person's click on it (as the desktop reports it) publishes their yes to the offer on
kronii.supervisor.offer.accept, audited. The real desktop and click are tests/e2e/test_critic_offer_e2e.py."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest
from kronii.desktop.hold import DesktopHold, DesktopHolds
from kronii.foundation.errors import NotFound
from kronii.pipeline.adapters.notifications import ACTION_ACCEPT, new_notification
from kronii.pipeline.adapters.offer_answers import BusOfferAnswers
from kronii.pipeline.api.clicks import DesktopClicks
from kronii.pipeline.api.convert import notice_from_message
from kronii.pipeline.core.notices import Button, Notice, NoticeOutcome
from kronii.pipeline.metrics import PipelineMetrics
from kronii.pipeline.usecases.operations import PipelineOperations, PipelineStores
from kronii.pipeline.usecases.runner import Runner
from kronii.pipeline.usecases.show_notice import DEFAULT_ACCEPT_LABEL, NoticeDesk
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as svpb
from prometheus_client import CollectorRegistry

from tests.unit.pipeline.runner_fakes import FakeAudit, FakeClock, FakeNotifier, Fakes

NOW = 1_800_000_000_000
OFFER = Notice(
    source="supervisor",
    kind="agent_offer",
    title="hand this failure to codex1?",
    body="`make test` failed 3 times the same way (exit 2). codex1 can look at it.",
    dedup_key="offer:error:make",
    high_priority=False,
    at_ms=NOW,
    offer_id="offer-abc",
    offer_label="Hand to codex1",
)


@dataclass
class Answers:
    accepted: list[str] = field(default_factory=list)

    async def accept(self, offer_id: str) -> None:
        self.accepted.append(offer_id)


@dataclass
class Rig:
    desk: NoticeDesk
    notifier: FakeNotifier
    audit: FakeAudit
    answers: Answers


def _rig(holds: DesktopHolds | None = None) -> Rig:
    notifier, audit, answers = FakeNotifier(), FakeAudit(), Answers()
    desk = NoticeDesk(notifier, lambda: holds or DesktopHolds(), audit, FakeClock(NOW), answers)
    return Rig(desk, notifier, audit, answers)


async def test_an_offer_is_shown_with_its_yes_button_and_the_yes_is_told_to_the_supervisor() -> None:
    rig = _rig()
    assert (await rig.desk.receive(OFFER)).outcome is NoticeOutcome.SHOWN
    assert rig.notifier.accept_labels == ["Hand to codex1"]
    [(_run, notification, key)] = rig.notifier.sent
    assert notification.title == OFFER.title and key == "notice:supervisor:agent_offer"
    assert rig.audit.entries[0]["offer_id"] == "offer-abc"
    assert await rig.desk.accept("n-1", "person:notification") == "offer-abc"
    assert rig.answers.accepted == ["offer-abc"]
    entry = rig.audit.entries[-1]
    assert (entry["action"], entry["subject"], entry["actor"]) == (
        "pipeline.offer_accept", "offer-abc", "person:notification",
    )  # fmt: skip


async def test_an_offer_passes_the_same_gates_as_any_notice() -> None:
    hold = DesktopHold("current", until=NOW / 1000 + 60, reason="user_input_override")
    rig = _rig(DesktopHolds().updated(hold))
    assert (await rig.desk.receive(OFFER)).outcome is NoticeOutcome.HELD
    rig = _rig()
    await rig.desk.receive(OFFER)
    assert (await rig.desk.receive(replace(OFFER, offer_id="offer-def"))).outcome is NoticeOutcome.DUPLICATE
    rig.notifier.muted_keys["notice:supervisor:agent_offer"] = "disabled"
    muted = await rig.desk.receive(replace(OFFER, dedup_key="offer:other"))
    assert muted.outcome is NoticeOutcome.MUTED and len(rig.notifier.sent) == 1


async def test_a_plain_notice_has_no_button_and_its_notification_accepts_nothing() -> None:
    rig = _rig()
    await rig.desk.receive(replace(OFFER, offer_id="", offer_label=""))
    assert rig.notifier.accept_labels == [""]
    with pytest.raises(NotFound, match="carries no offer"):
        await rig.desk.accept("n-1", "person:notification")
    with pytest.raises(NotFound, match="kronii agents hand"):
        await rig.desk.accept("n-404", "person:http")
    assert rig.answers.accepted == []


async def test_an_offer_without_a_label_gets_a_plain_yes() -> None:
    rig = _rig()
    await rig.desk.receive(replace(OFFER, offer_label=""))
    assert rig.notifier.accept_labels == [DEFAULT_ACCEPT_LABEL]


def test_the_yes_button_comes_first_under_the_key_dunst_and_the_desktops_invoke_as_the_default() -> None:
    message = new_notification(
        channel="desktop", title="t", body="b", source_summary="s", source_key="notice:supervisor:agent_offer",
        run_id="r", now=NOW / 1000, notification_id="n1", accept_label="Hand to codex1",
    )  # fmt: skip
    assert ACTION_ACCEPT == Button.ACCEPT.value == "default"
    assert [(a.key, a.label) for a in message.actions] == [
        ("default", "Hand to codex1"), ("snooze", "Snooze"), ("disable", "Don't show again"),
    ]  # fmt: skip
    assert message.actions[0].href == "/v1/notifications/n1/accept"
    plain = new_notification(channel="desktop", title="t", body="b", source_summary="s", source_key="k",
                             run_id="r", now=NOW / 1000)  # fmt: skip
    assert [a.key for a in plain.actions] == ["snooze", "disable"]


def test_an_offer_off_the_bus_is_checked() -> None:
    message = pb.Notice(source="supervisor", kind="agent_offer", title="t", offer_id="offer-1",
                        offer_label="  Hand  to codex1 ")  # fmt: skip
    notice = notice_from_message(message, NOW)
    assert (notice.offer_id, notice.offer_label) == ("offer-1", "Hand to codex1")
    bad = {
        "offer_id must be": pb.Notice(source="s", kind="k", title="t", offer_id="has space"),
        "offer_label is at most": pb.Notice(
            source="s", kind="k", title="t", offer_id="o", offer_label="x" * 65
        ),
        "offer_label needs an offer_id": pb.Notice(source="s", kind="k", title="t", offer_label="Yes"),
    }
    for words, wrong in bad.items():
        with pytest.raises(ValueError, match=words):
            notice_from_message(wrong, NOW)


class _Unused:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"this test gave no store for {name}")


async def test_a_click_on_the_yes_button_goes_through_the_operations_to_the_supervisor() -> None:
    rig = _rig()
    clock = FakeClock(NOW)
    stores = cast(Any, _Unused())
    operations = PipelineOperations(
        clock=clock, stores=PipelineStores(stores, stores, stores, stores, stores),
        runner=Runner(Fakes().ports(), clock), notices=rig.desk, metrics=PipelineMetrics(CollectorRegistry()),
    )  # fmt: skip
    clicks = DesktopClicks(lambda: operations)
    await rig.desk.receive(OFFER)
    await clicks.on_action("n-1", "default")
    await clicks.on_action("n-2", "default")  # no such notification: said in the log, nothing sent
    await clicks.on_action("n-1", "no-such-button")
    assert rig.answers.accepted == ["offer-abc"]


class _Wire:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.sent.append((subject, payload))


async def test_the_yes_goes_out_as_a_hand_offer_request_on_nats() -> None:
    from kronii.foundation.telemetry import CommonMetrics

    wire = _Wire()
    bus = Bus("pipeline", CommonMetrics("pipeline", CollectorRegistry()))
    bus._client = cast(Any, wire)
    await BusOfferAnswers(bus).accept("offer-abc")
    [(subject, payload)] = wire.sent
    assert subject == subjects.SUPERVISOR_OFFER_ACCEPT.subject()
    assert svpb.HandOfferRequest.FromString(payload) == svpb.HandOfferRequest(offer_id="offer-abc")
