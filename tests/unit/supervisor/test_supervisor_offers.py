"""The critic's failure offers in the supervisor (usecases/offers.py, core/offers.py) with in-memory
stores: the agent chosen by where the command failed (its redacted cwd against the agent's plain
one), no agent means no bubble, an offer said twice is one offer and one bubble, the person's yes
twice is one message, and an agent the config names in hand_without_asking gets it without a
bubble. The real path (bash, critic, pipeline, dunst, tmux) is tests/e2e/test_critic_offer_e2e.py."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest
from kronii.foundation.errors import NotFound
from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus
from kronii.supervisor.core.offers import FailureOffer, choose_agent, handoff_thread, offer_words
from kronii.supervisor.core.threads import MessageKind, NewMessage, Posted, ThreadMessage, ThreadView
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.usecases.offers import OfferDesk
from kronii.supervisor.usecases.threads import ThreadDesk
from prometheus_client import CollectorRegistry

from tests.unit.supervisor.trigger_fakes import T0, FakeClock, FakeRuntimes

OFFER = FailureOffer(
    offer_id="offer-1",
    command_line='curl -H "Authorization: Bearer [SECRET_1]" http://127.0.0.1:9/',
    exit_code=7,
    error_text="curl: (7) Failed to connect to 127.0.0.1 port 9",
    cwd="/home/[USERNAME_1]/shop/api",
    times=3,
    failure_key="error:curl:(#) failed to connect",
    at=T0,
)


def runtime(agent: str, cwd: str, *, workspace: str = "ws1", status: RuntimeStatus = RuntimeStatus.IDLE,
            at: float = T0) -> RuntimeRecord:  # fmt: skip
    return RuntimeRecord(f"rt-{agent}", agent, workspace, f"%{agent}", at, status=status, cwd=cwd)


class MemoryOffers:
    def __init__(self) -> None:
        self.kept: dict[str, FailureOffer] = {}

    async def keep(self, offer: FailureOffer) -> FailureOffer:
        return self.kept.setdefault(offer.offer_id, offer)

    async def find(self, offer_id: str) -> FailureOffer | None:
        return self.kept.get(offer_id)

    async def latest_open(self) -> FailureOffer | None:
        open_ = [offer for offer in self.kept.values() if offer.accepted_at is None]
        return max(open_, key=lambda offer: offer.at, default=None)

    async def accepted(self, offer_id: str, thread_id: str, seq: int, at: float) -> None:
        offer = self.kept[offer_id]
        if offer.accepted_at is None:
            self.kept[offer_id] = replace(offer, accepted_at=at, thread_id=thread_id, seq=seq)


@dataclass
class MemoryThreads:
    """ThreadDesk.note as the thread store answers it: one message per dedupe key."""

    posted: list[NewMessage] = field(default_factory=list)

    async def note(self, new: NewMessage) -> Posted:
        for seq, earlier in enumerate(self.posted, start=1):
            if new.dedupe_key and earlier.dedupe_key == new.dedupe_key:
                return Posted(self._message(earlier, seq), self._view(), duplicate=True)
        self.posted.append(new)
        return Posted(self._message(new, len(self.posted)), self._view())

    def _message(self, new: NewMessage, seq: int) -> ThreadMessage:
        return ThreadMessage(new.workspace_id, new.thread_id, seq, new.author, new.kind, new.body, T0, new.to,
                             dedupe_key=new.dedupe_key)  # fmt: skip

    def _view(self) -> ThreadView:
        return ThreadView("ws1", "handoff", len(self.posted), T0, T0)


@dataclass
class Bubbles:
    shown: list[dict[str, Any]] = field(default_factory=list)

    async def show(self, **notice: Any) -> bool:
        self.shown.append(notice)
        return True


@dataclass
class Audit:
    rows: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.rows.append({"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail})


@dataclass
class Desk:
    desk: OfferDesk
    offers: MemoryOffers
    threads: MemoryThreads
    bubbles: Bubbles
    audit: Audit


def make_desk(*runtimes: RuntimeRecord, without_asking: frozenset[str] = frozenset()) -> Desk:
    offers, threads, bubbles, audit = MemoryOffers(), MemoryThreads(), Bubbles(), Audit()
    desk = OfferDesk(
        store=offers, threads=cast(ThreadDesk, threads), registry=FakeRuntimes(*runtimes), notices=bubbles,
        audit=audit, metrics=SupervisorMetrics(CollectorRegistry()), clock=FakeClock(), without_asking=without_asking,
    )  # fmt: skip
    return Desk(desk, offers, threads, bubbles, audit)


# ---- choosing the agent -----------------------------------------------------------------------------


def test_the_agent_working_deepest_above_the_redacted_directory_is_chosen() -> None:
    agents = [
        runtime("shop", "/home/alice/shop"),
        runtime("api", "/home/alice/shop/api", at=T0 + 1),
        runtime("blog", "/home/alice/blog"),
    ]
    assert choose_agent(OFFER, agents) == agents[1]
    assert choose_agent(replace(OFFER, cwd="/home/[USERNAME_1]/shop/web"), agents) == agents[0]


def test_a_placeholder_stands_for_one_directory_name_only() -> None:
    agents = [runtime("other", "/srv/alice/shop"), runtime("deep", "/home/alice/x/shop")]
    assert choose_agent(OFFER, agents) is None
    inside_a_name = replace(OFFER, cwd="/home/alice/[EMAIL_1]-notes")
    assert choose_agent(inside_a_name, [runtime("notes", "/home/alice/bob@exemple.com-notes")]) is not None
    assert choose_agent(inside_a_name, [runtime("notes", "/home/alice/notes"), runtime("b", "/b")]) is None


def test_with_no_agent_above_the_directory_the_only_live_agent_is_chosen_and_an_offline_one_never() -> None:
    away = runtime("codex1", "/srv/other")
    assert choose_agent(OFFER, [away]) == away
    assert choose_agent(OFFER, [away, runtime("codex2", "/srv/more")]) is None
    assert choose_agent(OFFER, [replace(away, status=RuntimeStatus.OFFLINE)]) is None


def test_the_bubble_shows_a_long_command_cut_to_stay_within_a_notice() -> None:
    title, body, label = offer_words(replace(OFFER, command_line="make " + "x" * 5000), "codex1")
    assert title == "hand this failure to codex1?" and label == "Hand to codex1"
    assert len(body) < 600 and "…" in body


# ---- the desk ----------------------------------------------------------------------------------------


async def test_an_offer_is_kept_and_the_person_asked_with_a_bubble_naming_the_agent() -> None:
    rig = make_desk(runtime("codex1", "/home/alice/shop"))
    kept = await rig.desk.offered(OFFER)
    assert (kept.agent_id, kept.workspace_id) == ("codex1", "ws1")
    [bubble] = rig.bubbles.shown
    assert bubble["offer_id"] == "offer-1" and bubble["offer_label"] == "Hand to codex1"
    assert bubble["kind"] == "agent_offer" and "[SECRET_1]" in bubble["body"]
    assert rig.threads.posted == []  # nothing is sent before the yes


async def test_without_an_agent_to_hand_it_to_the_offer_is_kept_and_no_bubble_shown() -> None:
    rig = make_desk(runtime("a", "/srv/a"), runtime("b", "/srv/b"))
    kept = await rig.desk.offered(OFFER)
    assert kept.agent_id == "" and rig.bubbles.shown == [] and "offer-1" in rig.offers.kept
    assert rig.audit.rows[-1]["outcome"] == "no_agent"


async def test_an_offer_said_again_is_one_offer_and_after_the_yes_no_bubble_again() -> None:
    rig = make_desk(runtime("codex1", "/home/alice/shop"))
    await rig.desk.offered(OFFER)
    await rig.desk.offered(replace(OFFER, times=4))
    assert len(rig.offers.kept) == 1 and rig.offers.kept["offer-1"].times == 3
    await rig.desk.hand("offer-1", "", "", None)
    shown = len(rig.bubbles.shown)
    await rig.desk.offered(OFFER)
    assert len(rig.bubbles.shown) == shown


async def test_the_yes_posts_the_redacted_failure_to_the_agents_thread_once() -> None:
    rig = make_desk(runtime("codex1", "/home/alice/shop"))
    await rig.desk.offered(OFFER)
    first = await rig.desk.hand("offer-1", "", "", None)
    again = await rig.desk.hand("offer-1", "", "", None)
    assert (first.thread_id, first.agent_id, first.duplicate) == (handoff_thread("codex1"), "codex1", False)
    assert again.duplicate and again.seq == first.seq
    [message] = rig.threads.posted
    assert message.kind is MessageKind.HANDOFF and message.to == ("codex1",) and message.author == "person"
    assert OFFER.command_line in message.body and "exit status 7" in message.body
    assert OFFER.error_text in message.body
    assert rig.audit.rows[-1]["action"] == "supervisor.offer_accept"


async def test_the_yes_without_an_offer_id_takes_the_latest_open_offer_and_none_open_is_not_found() -> None:
    rig = make_desk(runtime("codex1", "/home/alice/shop"))
    with pytest.raises(NotFound, match="no offer is open"):
        await rig.desk.hand("", "", "", None)
    await rig.desk.offered(OFFER)
    handed = await rig.desk.hand("", "", "", None)
    assert handed.offer_id == "offer-1"
    with pytest.raises(NotFound, match="no offer 'offer-9'"):
        await rig.desk.hand("offer-9", "", "", None)


@pytest.mark.parametrize("consent", ["codex1", "ws1/codex1"])
async def test_an_agent_named_in_hand_without_asking_gets_the_failure_without_a_bubble(consent: str) -> None:
    rig = make_desk(runtime("codex1", "/home/alice/shop"), without_asking=frozenset({consent}))
    await rig.desk.offered(OFFER)
    assert rig.bubbles.shown == []
    [message] = rig.threads.posted
    assert message.thread_id == "handoff-codex1" and message.kind is MessageKind.HANDOFF
    assert rig.offers.kept["offer-1"].accepted_at is not None
    assert rig.audit.rows[-1]["actor"] == "policy:hand_without_asking"


async def test_hand_without_asking_for_another_agent_still_asks_the_person() -> None:
    rig = make_desk(
        runtime("codex1", "/home/alice/shop"), without_asking=frozenset({"claude1", "ws2/codex1"})
    )
    await rig.desk.offered(OFFER)
    assert len(rig.bubbles.shown) == 1 and rig.threads.posted == []
