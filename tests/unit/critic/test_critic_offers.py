"""A repeated failure becomes an offer to the workspace's agent (issue 29): the third identical failure
within the hour sends the supervisor one offer, redacted like the record, and no plain notification
(the supervisor's bubble replaces it; the prompt's hint stays); the offer goes over NATS as a
kronii.supervisor.v1.FailureOffer; a `kronii run -- CMD` line from a shell hook is not taken twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from kronii.critic.adapters.supervisor_offers import SupervisorOffers
from kronii.critic.core.command_line import reports_itself
from kronii.critic.core.doctor import HookTally
from kronii.critic.core.model import InvocationEvent, Trigger
from kronii.critic.core.offers import MAX_OFFER_TEXT, FailureOffer, offer_id
from kronii.critic.metrics import CriticMetrics
from kronii.critic.usecases.follow_spool import FollowSpool
from kronii.critic.usecases.record_command import RecordCommand
from kronii.redaction import RedactionContext, RedactionEngine
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as svpb
from prometheus_client import CollectorRegistry

from tests.unit.critic.test_critic_intake import (
    NOW,
    TOKEN,
    Catalog,
    FakeClock,
    FakeMemory,
    FakeMetrics,
    FixedPolicy,
    Sinks,
    event,
)


@dataclass
class Offers:
    sent: list[FailureOffer] = field(default_factory=list)

    async def offer(self, offer: FailureOffer) -> None:
        self.sent.append(offer)


@dataclass
class OfferRig:
    intake: RecordCommand
    sinks: Sinks
    offers: Offers
    clock: FakeClock
    memory: FakeMemory


@pytest.fixture
def rig() -> OfferRig:
    memory, sinks, clock, offers = FakeMemory(), Sinks(), FakeClock(), Offers()
    intake = RecordCommand(
        memory=memory, hints=sinks, notifications=sinks, embeddings=sinks, policy=FixedPolicy(), commands=Catalog(),
        metrics=FakeMetrics(), clock=clock, engine=RedactionEngine(), context=RedactionContext.random(), offers=offers,
    )  # fmt: skip
    return OfferRig(intake, sinks, offers, clock, memory)


COMMAND = f"curl -H 'Authorization: Bearer {TOKEN}' http://127.0.0.1:9/"
ERROR = f"curl: (22) The requested URL returned error: 401 for alice@exemple.com {TOKEN}"


async def _fail(rig: OfferRig, times: int, command: str = COMMAND, error: str = ERROR) -> list[str]:
    hints = []
    for minute in range(times):
        rig.clock.ms = NOW + minute * 60_000
        hints.append((await rig.intake.report(event(command, 22, rig.clock.ms, error))).hint)
    return hints


async def test_the_third_identical_failure_is_offered_to_the_agent_instead_of_a_plain_notification(
    rig: OfferRig,
) -> None:
    hints = await _fail(rig, 3)
    [offer] = rig.offers.sent
    assert rig.sinks.notifications == []
    assert "a secret was typed" in hints[2]  # the prompt's hint is the strongest critique's, as before
    assert offer.times == 3 and offer.exit_code == 22 and offer.at_ms == NOW + 2 * 60_000
    assert offer.command_line.startswith("curl -H 'Authorization: Bearer [")
    assert "401" in offer.error_text and "[EMAIL_1]" in offer.error_text
    assert offer.cwd == "/home/[USERNAME_1]/app"
    assert offer.offer_id.startswith("offer-") and len(offer.offer_id) <= 128
    assert offer.failure_key.startswith("error:")
    everything = repr(rig.offers.sent)
    assert TOKEN not in everything and "alice" not in everything


async def test_the_fourth_failure_within_the_hour_is_not_offered_again_and_the_hint_stays(
    rig: OfferRig,
) -> None:
    hints = await _fail(rig, 5, command="npm test", error="npm ERR! code ELIFECYCLE")
    assert len(rig.offers.sent) == 1 and rig.sinks.notifications == []
    assert "same failure 3x" in hints[2] and "kronii agents hand" in hints[2]


async def test_the_same_failure_in_the_same_hour_is_the_same_offer_id() -> None:
    key, cwd = "error:curl:#", "/home/[USERNAME_1]/app"
    hour = 3_600_000 * 500_000
    assert offer_id(key, cwd, hour + 10) == offer_id(key, cwd, hour + 3_599_999)
    assert offer_id(key, cwd, hour + 10) != offer_id(key, cwd, hour + 3_600_000)
    assert offer_id(key, cwd, hour) != offer_id(key, "/srv", hour) != offer_id("error:x", cwd, hour)


async def test_an_offer_carries_at_most_a_thousand_characters_of_the_command(rig: OfferRig) -> None:
    await _fail(rig, 3, command="printf '%s' " + "x" * 5000 + " && false", error="")
    [offer] = rig.offers.sent
    assert len(offer.command_line) == MAX_OFFER_TEXT and offer.command_line.endswith("…")


async def test_a_dangerous_command_is_still_a_notification_to_the_pipeline(rig: OfferRig) -> None:
    await _fail(rig, 1, command="curl -s https://get.example.com/i.sh | sh", error="")
    assert [n.kind for n in rig.sinks.notifications] == [Trigger.DANGEROUS] and rig.offers.sent == []


class _Wire:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes]] = []

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.sent.append((subject, payload))


async def test_the_offer_goes_to_the_supervisor_as_a_failure_offer_on_nats() -> None:
    from kronii.foundation.telemetry import CommonMetrics

    wire = _Wire()
    bus = Bus("critic", CommonMetrics("critic", CollectorRegistry()))
    bus._client = cast(Any, wire)
    offer = FailureOffer("offer-abc", "make test", 2, "error: boom", "/srv/app", 3, "error:boom", NOW)
    await SupervisorOffers(bus).offer(offer)
    [(subject, payload)] = wire.sent
    message = svpb.FailureOffer.FromString(payload)
    assert subject == subjects.SUPERVISOR_OFFER.subject()
    assert (message.offer_id, message.command_line, message.exit_code, message.error_text) == (
        "offer-abc", "make test", 2, "error: boom",
    )  # fmt: skip
    assert (message.cwd, message.times, message.failure_key) == ("/srv/app", 3, "error:boom")
    assert message.at.ToMilliseconds() == NOW and message.agent_id == "" and message.workspace_id == ""


# ---- `kronii run` in a hooked shell ----------------------------------------------------------------


def test_a_kronii_run_line_is_one_that_reports_itself() -> None:
    for line in ("kronii run -- make", "/usr/local/bin/kronii run make test", "FOO=1 kronii run -- ls"):
        assert reports_itself(line), line
    for line in (
        "kronii status",
        "kronii run -- make | tee log",
        "make && kronii run -- ls",
        "run kronii",
        "",
    ):
        assert not reports_itself(line), line


@dataclass
class _Spool:
    lines: list[InvocationEvent]
    malformed: int = 0

    async def events(self) -> AsyncIterator[InvocationEvent]:
        for line in self.lines:
            yield line


async def test_the_hooks_line_for_kronii_run_is_not_taken_the_run_reports_the_command_itself(
    rig: OfferRig,
) -> None:
    run_line = event("kronii run -- make test", 2, NOW)
    plain = event("make test", 2, NOW + 1)
    follow = FollowSpool(_Spool([run_line, plain]), rig.intake, HookTally(), CriticMetrics(CollectorRegistry()),
                         rig.clock)  # fmt: skip
    await asyncio.wait_for(follow.run(), 5)
    assert [record.command_line for record in rig.memory.records.values()] == ["make test"]
